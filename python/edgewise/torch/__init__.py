"""Edgewise inside PyTorch: torch.library operators, autograd and nn layers.

Importable only where torch is installed (``import edgewise`` never imports torch).
``edgewise.torch.ops`` holds torch_scatter-compatible reductions and the fused
``spmm``, and the attention primitives (``sddmm_add``, ``sddmm_dot``,
``edge_softmax``, ``attention_aggregate``); ``edgewise.torch.nn`` holds GCNConv, SAGEConv,
GINConv, GINEConv, GATConv and GATv2Conv with PyG's
arguments and parameter names, and ``nn.functional.dropout`` (the engine's Philox
dropout). All operators are registered under ``torch.ops.edgewise``.
"""

import torch as _torch  # noqa: F401  (fails here, clearly, where torch is absent)

from . import nn  # noqa: F401
from .ops import (  # noqa: F401
    CSR,
    attention_aggregate,
    edge_softmax,
    scatter,
    scatter_add,
    scatter_max,
    scatter_mean,
    scatter_min,
    scatter_sum,
    segment_add_csr,
    segment_csr,
    segment_max_csr,
    segment_mean_csr,
    segment_min_csr,
    segment_sum_csr,
    sddmm_add,
    sddmm_dot,
    spmm,
    spmm_csr,
)

__all__ = [
    "CSR",
    "attention_aggregate",
    "edge_softmax",
    "nn",
    "scatter",
    "scatter_add",
    "scatter_max",
    "scatter_mean",
    "scatter_min",
    "scatter_sum",
    "segment_add_csr",
    "segment_csr",
    "segment_max_csr",
    "segment_mean_csr",
    "segment_min_csr",
    "segment_sum_csr",
    "sddmm_add",
    "sddmm_dot",
    "spmm",
    "spmm_csr",
]
