"""PyG's typed layers on Edgewise: the replacements accelerate() installs for
``HeteroLinear.forward``, ``HeteroDictLinear.forward`` and ``RGCNConv.forward``.

- HeteroLinear: rows sorted by type (as PyG sorts them), one ``segment_matmul`` over
  all types, the typed bias, the original order restored: PyG's own segment_matmul
  path, without pyg-lib.
- HeteroDictLinear: every type's ``x @ W^T + b`` in one ``grouped_matmul`` call.
- RGCNConv (no decomposition, basis or block-diagonal; aggregation sum / add / mean):
  PyG's semantics — per relation, the mean (or sum) of the neighbours' features
  times that relation's weight, summed over relations, plus root and bias — as one
  dense product and one fused gather-reduce, whichever side is smaller:
    transform first  XW = x @ [W_0 | ... | W_{R-1}]  ([N_src, R*M], viewed as
                     [N_src*R, M]), then out[i] = sum over edges (j, r) -> i of
                     w_e * XW[j*R + r]
    aggregate first  H[i*R + r] = sum over edges (j, r) -> i of w_e * x[j]
                     ([N_dst*R, K]), then out = H.view(N_dst, R*K) @ W.view(R*K, M)
  with w_e = 1 / (edges of relation r into i) for mean, 1 for sum. A node or edge
  type out of range runs PyG's code, which raises its error. The structure (CSR and
  weights) is built once per (edge_index, edge_type) pair and reused while both are
  unchanged.
Anything else (SparseTensor adjacency, other aggregations, hooks, explain,
decomposed layers, dtypes the kernels do not take) runs PyG's original forward.
"""

import threading
from typing import NamedTuple, Optional

import torch
from torch import Tensor

from .. import _spmm_ops
from .._spmm import CSR, spmm_csr
from .._typed_matmul import grouped_matmul, segment_matmul
from ..nn._graph_cache import _Entry

_FLOATS = (torch.float32, torch.float64)
# The typed linears run on segment_matmul / grouped_matmul alone, which also take bfloat16.
_MATMUL_FLOATS = _FLOATS + (torch.bfloat16,)


def _is_float(t, dtypes=_FLOATS) -> bool:
    return isinstance(t, Tensor) and t.dtype in dtypes


# --- HeteroLinear / HeteroDictLinear ---------------------------------------------------------------


def make_hetero_linear_forward(original):
    from torch_geometric.index import index2ptr
    from torch_geometric.utils import index_sort

    def forward(self, x: Tensor, type_vec: Tensor) -> Tensor:
        if (torch.jit.is_scripting() or not _is_float(x, _MATMUL_FLOATS) or x.dim() != 2 or self.weight.dtype != x.dtype
                or self.weight.device != x.device):
            return original(self, x, type_vec)
        perm: Optional[Tensor] = None
        if not self.is_sorted and type_vec.numel() > 1 and bool((type_vec[1:] < type_vec[:-1]).any()):
            type_vec, perm = index_sort(type_vec, self.num_types)
            x = x[perm]
        type_ptr = index2ptr(type_vec, self.num_types)
        out = segment_matmul(x, type_ptr, self.weight)
        if self.bias is not None:
            out = out + self.bias[type_vec]
        if perm is not None:  # back to the caller's order
            out_unsorted = torch.empty_like(out)
            out_unsorted[perm] = out
            out = out_unsorted
        return out

    forward.__edgewise_original__ = original
    forward.__doc__ = original.__doc__
    return forward


def _grouped_pays_off(x_dict, device) -> bool:
    """PyG's own rule for its fused path (torch_geometric.backend.use_segment_matmul, else
    10 types or more), on CUDA only unless the user forces it: on the CPU a loop of
    F.linear (MKL, the bias inside the product) measured faster than one grouped call
    (benchmarks/compare_hetero.py, HeteroDictLinear rows)."""
    import torch_geometric.backend

    forced = torch_geometric.backend.use_segment_matmul
    if forced is not None:
        return bool(forced)
    return device.type == "cuda" and len(x_dict) >= 10


def make_hetero_dict_linear_forward(original):
    def forward(self, x_dict):
        keys = [key for key in self.lins.keys() if key in x_dict]
        xs = [x_dict[key] for key in keys]
        lins = [self.lins[key] for key in keys]
        if (torch.jit.is_scripting() or not keys or not _grouped_pays_off(x_dict, xs[0].device)
                or any(not _is_float(x, _MATMUL_FLOATS) or x.dim() != 2 for x in xs)
                or any(x.dtype != xs[0].dtype or x.device != xs[0].device for x in xs)
                or any(lin.weight.dtype != xs[0].dtype or lin.weight.device != xs[0].device for lin in lins)):
            return original(self, x_dict)
        outs = grouped_matmul(xs, [lin.weight.t() for lin in lins], [lin.bias for lin in lins])
        return dict(zip(keys, outs))

    forward.__edgewise_original__ = original
    forward.__doc__ = original.__doc__
    return forward


# --- RGCNConv --------------------------------------------------------------------------------------


class _RelationalCSR(NamedTuple):
    csr: CSR
    weight: Optional[Tensor]  # per-edge scale in CSR order (mean), None for sum
    transform_first: bool


class _RelationalCache:
    """Structures for (edge_index, edge_type) pairs, each served only while both tensors
    are the very ones it was built from, unchanged (identity, version, contents)."""

    def __init__(self, capacity=4):
        self.capacity = capacity
        self._entries = {}
        self._lock = threading.Lock()
        self.builds = 0

    def get(self, edge_index: Tensor, edge_type: Tensor, variant, build):
        if torch.compiler.is_compiling():
            return build()
        key = (id(edge_index), id(edge_type), variant)
        with self._lock:
            entry = self._entries.pop(key, None)
        if entry is None or not (entry[0].serves(edge_index) and entry[1].serves(edge_type)):
            self.builds += 1
            entry = (_Entry(edge_index, None), _Entry(edge_type, None), build())
        with self._lock:
            self._entries[key] = entry
            while len(self._entries) > self.capacity:
                del self._entries[next(iter(self._entries))]
        return entry[2]

    def clear(self):
        with self._lock:
            self._entries.clear()


_CACHE = _RelationalCache()


def _in_range(row: Tensor, size: int) -> bool:
    if row.numel() == 0:
        return True
    lo, hi = torch.aminmax(row)
    return int(lo) >= 0 and int(hi) < size


def _build(edge_index: Tensor, edge_type: Tensor, relations: int, num_src: int, num_dst: int, mean: bool,
           transform_first: bool) -> Optional[_RelationalCSR]:
    src, dst = edge_index[0].to(torch.int64), edge_index[1].to(torch.int64)
    if not torch.compiler.is_compiling() and not (_in_range(src, num_src) and _in_range(dst, num_dst)):
        return None  # PyG's own code raises its error
    etype = edge_type.to(torch.int64)
    if not torch.compiler.is_compiling() and not _in_range(etype, relations):
        return None  # PyG's own code raises its error
    slot = dst * relations + etype  # (destination, relation)
    if transform_first:
        rows, cols, num_rows, num_cols = dst, src * relations + etype, num_dst, num_src * relations
    else:
        rows, cols, num_rows, num_cols = slot, src, num_dst * relations, num_src
    nodes = max(num_rows, num_cols)
    parts = _spmm_ops.csr_from_edge_index(torch.stack([cols, rows]), nodes)
    offsets, sources, edge_ids, t_offsets, t_targets, t_edge_ids = parts
    csr = CSR(offsets[: num_rows + 1], sources, edge_ids, t_offsets[: num_cols + 1], t_targets, t_edge_ids)
    weight = None
    if mean:
        count = torch.bincount(slot, minlength=num_dst * relations)
        weight = (1.0 / count[slot].to(torch.float64)).index_select(0, edge_ids)
    return _RelationalCSR(csr, weight, transform_first)


def _has_hooks(layer) -> bool:
    return any(bool(getattr(layer, name, None)) for name in (
        "_propagate_forward_pre_hooks", "_propagate_forward_hooks", "_message_forward_pre_hooks",
        "_message_forward_hooks", "_aggregate_forward_pre_hooks", "_aggregate_forward_hooks",
        "_message_and_aggregate_forward_pre_hooks", "_message_and_aggregate_forward_hooks",
        "_edge_update_forward_pre_hooks", "_edge_update_forward_hooks"))


def _dense_weight(layer) -> Tensor:
    """[R, K, M]: the relation weights after basis or block-diagonal decomposition."""
    weight = layer.weight
    if layer.num_bases is not None:
        return (layer.comp @ weight.view(layer.num_bases, -1)).view(layer.num_relations, layer.in_channels_l,
                                                                     layer.out_channels)
    if layer.num_blocks is not None:
        relations, blocks, block_in, block_out = weight.shape
        eye = torch.eye(blocks, dtype=weight.dtype, device=weight.device)
        # dense[r, b*block_in + i, c*block_out + o] = weight[r, b, i, o] where b == c
        return torch.einsum("rbio,bc->rbico", weight, eye).reshape(relations, blocks * block_in, blocks * block_out)
    return weight


def make_rgcn_forward(original):
    def forward(self, x, edge_index, edge_type=None):
        x_l = x[0] if isinstance(x, tuple) else x
        x_r = x[1] if isinstance(x, tuple) else x_l
        aggr = self.aggr if isinstance(self.aggr, str) else None
        float_input = _is_float(x_l)
        if (torch.jit.is_scripting() or not isinstance(edge_index, Tensor) or edge_index.is_sparse
                or edge_type is None or aggr not in ("add", "sum", "mean") or self.flow != "source_to_target"
                or getattr(self, "explain", False) or getattr(self, "decomposed_layers", 1) > 1
                or _has_hooks(self) or self.weight.dtype not in _FLOATS
                or (x_l is not None and not float_input and self.num_blocks is not None)
                or (float_input and (x_l.dim() != 2 or x_l.dtype != self.weight.dtype))
                or (x_l is not None and x_l.device != self.weight.device)):
            return original(self, x, edge_index, edge_type)
        if x_l is None:
            x_l = torch.arange(self.in_channels_l, device=self.weight.device)
            float_input = False
        if x_r is None:
            x_r = x_l
        num_src, num_dst = x_l.size(0), x_r.size(0)
        relations, out_channels = self.num_relations, self.out_channels
        weight = _dense_weight(self)  # [R, K, M]
        # Node indices as input (trainable embeddings): x @ W_r is row x of W_r.
        transform_first = (not float_input) or num_src <= num_dst
        mean = aggr == "mean"
        structure = _CACHE.get(edge_index, edge_type, (relations, num_src, num_dst, mean, transform_first),
                               lambda: _build(edge_index, edge_type, relations, num_src, num_dst, mean,
                                              transform_first))
        if structure is None:
            return original(self, x, edge_index, edge_type)
        scale = None if structure.weight is None else structure.weight.to(weight.dtype)
        if transform_first:
            if float_input:
                xw = x_l @ weight.permute(1, 0, 2).reshape(weight.size(1), relations * out_channels)
            else:
                xw = weight[:, x_l, :].permute(1, 0, 2)
            out = spmm_csr(structure.csr, xw.reshape(num_src * relations, out_channels), scale, "sum")
        else:
            h = spmm_csr(structure.csr, x_l, scale, "sum")  # [N_dst * R, K]
            out = h.view(num_dst, relations * x_l.size(1)) @ weight.reshape(relations * x_l.size(1), out_channels)
        if self.root is not None:
            out = out + (self.root[x_r] if not torch.is_floating_point(x_r) else x_r @ self.root)
        if self.bias is not None:
            out = out + self.bias
        return out

    forward.__edgewise_original__ = original
    forward.__doc__ = original.__doc__
    return forward


def clear_cache():
    _CACHE.clear()


def cache_builds() -> int:
    return _CACHE.builds
