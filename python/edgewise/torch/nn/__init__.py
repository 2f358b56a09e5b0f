"""torch.nn layers on the edgewise kernels (PyG-compatible GCNConv, SAGEConv, GINConv, GINEConv,
GATConv, GATv2Conv)."""

from . import functional  # noqa: F401
from .conv import GCNConv, GINConv, GINEConv, SAGEConv  # noqa: F401
from .gat_conv import GATConv, GATv2Conv  # noqa: F401

__all__ = ["GATConv", "GATv2Conv", "GCNConv", "GINConv", "GINEConv", "SAGEConv", "functional"]
