"""torch.nn layers on the edgewise kernels (PyG-compatible GCNConv, SAGEConv, GINConv)."""

from . import functional  # noqa: F401
from .conv import GCNConv, GINConv, SAGEConv  # noqa: F401

__all__ = ["GCNConv", "GINConv", "SAGEConv", "functional"]
