"""Edgewise versions of ``torch_geometric.utils``' scatter, segment, softmax and spmm.

Each takes PyG's signature and semantics and hands anything it does not cover (a
dtype, a device, a reduction, a tensor layout) to PyG's original, unchanged, so the
caller sees PyG's result or PyG's error, never a new one. min / max gradients follow
PyG's rule on its CPU path (torch's scatter_reduce amax / amin onto zeros: shared
evenly among tied messages, one more share where the output is 0).
"""

import torch
from torch import Tensor

from .. import _bridge, _checks, _reduce_ops, _scatter, _spmm_ops
from .._composite import scatter_softmax
from .._segment_csr import _prepare as _prepare_segment
from . import _structure

_DEVICES = ("cpu", "cuda")
_INDEX_DTYPES = (torch.int32, torch.int64)
_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
# PyG's reduce names -> the kernels'; "mul" (torch's exact product gradient) and
# "any" stay with PyG.
_SCATTER_REDUCES = {"sum": "sum", "add": "sum", "mean": "mean", "min": "min", "max": "max",
                    "amin": "min", "amax": "max"}
_SPMM_REDUCES = {"sum": "sum", "add": "sum", "mean": "mean", "min": "min", "max": "max"}
# Below this many reduced entries (messages) PyG's own torch ops stay: a kernel call's
# fixed cost (operator dispatch, index checks) outweighs its gain there. Measured with
# autograd on 2 threads: 10K messages x 64 channels 0.75-0.9x of PyG's time, 100K
# 1.35-1.5x faster, 1M 2-5x faster (scatter sum / mean, softmax).
MIN_ROUTED_ENTRIES = 1 << 15


def _on_device(*tensors) -> bool:
    device = tensors[0].device
    return device.type in _DEVICES and all(t.device == device for t in tensors)


def scatter_covers(src, index, dim, reduce) -> bool:
    if not (isinstance(src, Tensor) and isinstance(index, Tensor)) or reduce not in _SCATTER_REDUCES:
        return False
    if index.dim() != 1 or index.size(0) < MIN_ROUTED_ENTRIES:  # the common small case first: no further checks
        return False
    if src.dtype not in _checks.VALUE_DTYPES or index.dtype not in _INDEX_DTYPES or index.dim() != 1:
        return False
    if not isinstance(dim, int) or not -src.dim() <= dim < src.dim() or not _on_device(src, index):
        return False
    if reduce == "mean" and not src.is_floating_point():
        return False  # PyG's integer mean is a true division (a float result)
    return index.size(0) == src.size(dim) and index.size(0) >= MIN_ROUTED_ENTRIES


def make_scatter(original):
    def scatter(src: Tensor, index: Tensor, dim: int = 0, dim_size=None, reduce: str = "sum") -> Tensor:
        if not scatter_covers(src, index, dim, reduce):
            return original(src, index, dim, dim_size, reduce)
        try:
            p = _scatter.prepare(src, index, dim, None, dim_size, "scatter")
            res3 = _reduce_ops.scatter_reduce(p.src3, p.index3, p.size, _SCATTER_REDUCES[reduce], False, "scatter")
        except ValueError:
            return original(src, index, dim, dim_size, reduce)  # PyG's own error (or result)
        return p.result(res3)

    return scatter


def make_segment(original):
    def segment(src: Tensor, ptr: Tensor, reduce: str = "sum") -> Tensor:
        covered = (isinstance(src, Tensor) and isinstance(ptr, Tensor)
                   and reduce in _SPMM_REDUCES and src.dtype in _checks.VALUE_DTYPES
                   and ptr.dtype in _INDEX_DTYPES and ptr.dim() == 1 and src.dim() >= 1 and _on_device(src, ptr)
                   and src.size(0) >= MIN_ROUTED_ENTRIES
                   and (reduce != "mean" or src.is_floating_point()))
        if not covered:
            return original(src, ptr, reduce)
        try:
            values, indptr2, layout = _prepare_segment(src, ptr, "segment")
            res3 = _reduce_ops.segment_reduce(layout.as3(values), indptr2, _SPMM_REDUCES[reduce], "segment")
        except ValueError:
            return original(src, ptr, reduce)
        return layout.from3(res3)

    return segment


def make_softmax(original, maybe_num_nodes):
    def softmax(src: Tensor, index=None, ptr=None, num_nodes=None, dim: int = 0) -> Tensor:
        covered = (ptr is None and isinstance(src, Tensor) and isinstance(index, Tensor)
                   and src.dtype in _FLOAT_DTYPES and index.dtype in _INDEX_DTYPES and index.dim() == 1
                   and isinstance(dim, int) and -src.dim() <= dim < src.dim()
                   and index.size(0) == src.size(dim) and index.size(0) >= MIN_ROUTED_ENTRIES
                   and _on_device(src, index))
        if not covered:
            return original(src, index, ptr, num_nodes, dim)
        try:
            return scatter_softmax(src, index, dim=dim, dim_size=maybe_num_nodes(index, num_nodes))
        except ValueError:
            return original(src, index, ptr, num_nodes, dim)

    return softmax


def _sparse_edges(adj: Tensor):
    """(edge_index [2, E] rows (col, row) = (source, destination), values) of a 2-D
    torch.sparse adjacency adj_t [num_dst, num_src] in its stored order, else None."""
    if adj.layout == torch.sparse_csr:
        counts = adj.crow_indices().diff()
        row = torch.repeat_interleave(torch.arange(adj.size(0), device=adj.device), counts,
                                      output_size=adj.col_indices().numel())
        return torch.stack([adj.col_indices().to(torch.int64), row]), adj.values()
    if adj.layout == torch.sparse_csc:
        counts = adj.ccol_indices().diff()
        col = torch.repeat_interleave(torch.arange(adj.size(1), device=adj.device), counts,
                                      output_size=adj.row_indices().numel())
        return torch.stack([col, adj.row_indices().to(torch.int64)]), adj.values()
    if adj.layout == torch.sparse_coo and adj.is_coalesced():
        indices = adj._indices()
        return torch.stack([indices[1], indices[0]]), adj._values()
    return None


def make_spmm(original):
    def spmm(src, other: Tensor, reduce: str = "sum") -> Tensor:
        sparse = isinstance(src, Tensor) and (src.is_sparse or src.layout in (torch.sparse_csr, torch.sparse_csc))
        covered = (sparse and isinstance(other, Tensor) and reduce in _SPMM_REDUCES and src.dim() == 2 and other.dim() == 2
                   and other.dtype in (torch.float32, torch.float64) and src.dtype == other.dtype
                   and not src.requires_grad and src.size(1) == other.size(0) and _on_device(src, other))
        edges = _sparse_edges(src) if covered and not _bridge.carries_tangent(other) else None
        if edges is None or edges[1].dim() != 1 or _bridge.carries_tangent(edges[1]):
            return original(src, other, reduce)
        edge_index, values = edges
        csr = _structure.bipartite_csr(edge_index, 0, src.size(1), src.size(0))
        if csr is None:
            return original(src, other, reduce)
        weight = values.index_select(0, csr.edge_ids)
        return _spmm_ops.spmm(csr.offsets, csr.sources, other.contiguous(), weight, csr.t_offsets, csr.t_targets,
                              csr.t_edge_ids, _SPMM_REDUCES[reduce])

    return spmm


def make_edge_index_spmm(original):
    """EdgeIndex's sparse-dense product (torch_geometric.edge_index._spmm): out[r] =
    reduce over the entries (r, c) of value * other[c] (transpose: rows and columns
    swapped) as one fused spmm; PyG's sort-order errors and anything else stay PyG's."""

    def _spmm(input, other, value=None, reduce="sum", transpose=False):
        name = _SPMM_REDUCES.get(reduce)
        sorted_ok = input.is_sorted_by_col if transpose else input.is_sorted_by_row
        covered = (name is not None and sorted_ok and isinstance(other, Tensor) and other.dim() == 2
                   and other.dtype in (torch.float32, torch.float64) and _on_device(input, other)
                   and (value is None or (isinstance(value, Tensor) and value.dim() == 1
                                          and value.dtype == other.dtype and value.device == other.device
                                          and value.size(0) == input.size(1))))
        if not covered or _bridge.carries_tangent(other, value):
            return original(input, other, value, reduce, transpose)
        num_src = input.get_sparse_size(0 if transpose else 1)
        num_dst = input.get_sparse_size(1 if transpose else 0)
        if num_src != other.size(0):
            return original(input, other, value, reduce, transpose)
        csr = _structure.bipartite_csr(input.as_tensor(), 0 if transpose else 1, num_src, num_dst)
        if csr is None:
            return original(input, other, value, reduce, transpose)
        weight = None if value is None else value.index_select(0, csr.edge_ids)
        return _spmm_ops.spmm(csr.offsets, csr.sources, other.contiguous(), weight, csr.t_offsets, csr.t_targets,
                              csr.t_edge_ids, name)

    return _spmm
