"""Edgewise inside PyTorch: torch.library operators, autograd and nn layers.

Importable only where torch is installed (``import edgewise`` never imports torch).
The whole torch_scatter 2.1.2 API under its names (``import edgewise.torch as
torch_scatter`` is the migration), the fused ``spmm``, the attention primitives
(``sddmm_add``, ``sddmm_dot``, ``edge_softmax``, ``attention_aggregate``);
``edgewise.torch.nn`` holds GCNConv, SAGEConv, GINConv, GINEConv, GATConv and
GATv2Conv with PyG's arguments and parameter names, and ``nn.functional.dropout``
(the engine's Philox dropout); ``edgewise.torch.pyg.accelerate()`` makes PyG's own
layers run on these kernels (imported on demand: it loads torch_geometric). All
operators are registered under ``torch.ops.edgewise``; ``edgewise.torch.ops``
gathers the functions.
"""

import torch as _torch  # noqa: F401  (fails here, clearly, where torch is absent)

from . import loader, nn, ops  # noqa: F401
from .ops import *  # noqa: F401,F403
from .ops import TORCH_SCATTER_API, __all__ as _ops_all

__all__ = ["loader", "nn", "ops", "TORCH_SCATTER_API"] + _ops_all
