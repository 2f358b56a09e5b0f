"""torch_scatter-compatible reductions and the fused spmm, on the edgewise kernels.

Names, arguments and results follow torch_scatter (``scatter``, ``scatter_max``,
``segment_csr`` ...) and PyG (``spmm`` over ``edge_index`` with row 0 = source,
row 1 = target): an output nothing reaches is 0, and the arg of such an output is
``src.size(dim)``. Every function is differentiable and traceable by torch.compile
(``dim_size`` / ``num_nodes`` must then be given: inferring them reads the data).
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import _attention_ops, _ops

# mul is torch_scatter's (empty -> 1); var / std are PyG's VarAggregation /
# StdAggregation (population variance; std clamped at 1e-5 and masked to 0).
_REDUCES = ("sum", "add", "mean", "min", "max", "mul", "var", "std")


def _normalise_reduce(reduce, op):
    if reduce not in _REDUCES:
        raise ValueError(f"{op}: reduce must be one of sum, mean, min, max, mul, var, std (got {reduce!r})")
    return "sum" if reduce == "add" else reduce


def _rows_first(src, dim):
    """src as [size(dim), rest] plus the shape to restore."""
    dim = dim % src.dim() if src.dim() else 0
    moved = src.movedim(dim, 0)
    cols = 1
    for extent in moved.shape[1:]:
        cols *= extent
    return moved.reshape(moved.size(0), cols).contiguous(), moved.shape[1:], dim


def _restore(out, rest_shape, dim):
    return out.reshape((out.size(0),) + tuple(rest_shape)).movedim(0, dim)


def _index_along(index, src, dim, op):
    """The 1-D index of a torch_scatter call: 1-D already, or broadcast along dim."""
    dim = dim % src.dim()
    if index.dim() == 1:
        if index.numel() != src.size(dim):
            raise ValueError(f"{op}: index has {index.numel()} entries but src.size({dim}) is {src.size(dim)}")
        return index
    if index.dim() <= src.dim():
        # torch_scatter broadcasts an index whose only non-trivial extent is dim.
        flat = index.reshape(-1) if index.numel() == index.size(dim) else None
        if flat is not None and index.size(dim) == src.size(dim):
            return flat
    raise ValueError(f"{op}: index must be 1-D along dim (or broadcast from one); got shape {tuple(index.shape)}")


def _infer_size(index, dim_size):
    if dim_size is not None:
        return int(dim_size)
    return int(index.max()) + 1 if index.numel() > 0 else 0


def _arg_to_torch_scatter(arg, size):
    return torch.where(arg < 0, torch.full_like(arg, size), arg)


def _scatter_2d(src, index, dim, dim_size, reduce, op):
    src2, rest, dim = _rows_first(src, dim)
    index = _index_along(index, src, dim, op).to(torch.int64)
    size = _infer_size(index, dim_size)
    if reduce not in ("min", "max"):
        return _ops.scatter_reduce(src2, index, size, reduce), None, rest, dim
    out, arg = _ops.scatter_reduce_arg(src2, index, size, reduce)
    return out, _arg_to_torch_scatter(arg, src.size(dim)), rest, dim


def _finish_out(result, out):
    if out is None:
        return result
    out.copy_(result)
    return out


def scatter(
    src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None, dim_size: Optional[int] = None,
    reduce: str = "sum",
) -> Tensor:
    """out[index[i]] = reduce of src[i] along ``dim`` (torch_scatter.scatter).

    When ``out`` is given, sum adds into it and min/max compare with its values (as
    torch_scatter); mean averages the existing value in as torch_scatter does.
    """
    reduce = _normalise_reduce(reduce, "scatter")
    if out is not None and dim_size is None:
        dim_size = out.size(dim)
    if reduce in ("min", "max"):
        return _scatter_arg(src, index, dim, out, dim_size, reduce)[0]
    res, _, rest, d = _scatter_2d(src, index, dim, dim_size, reduce, "scatter")
    res = _restore(res, rest, d)
    if out is None:
        return res
    if reduce == "sum":
        return _finish_out(out + res, out)
    if reduce == "mul":
        return _finish_out(out * res, out)
    if reduce in ("var", "std"):
        raise ValueError(f"scatter: out is not supported for reduce={reduce!r} (no existing value to combine with)")
    counts = torch.zeros(res.size(d), dtype=src.dtype, device=src.device).index_add_(
        0, _index_along(index, src, d, "scatter").to(torch.int64), torch.ones(src.size(d), dtype=src.dtype, device=src.device)
    )
    shape = [1] * res.dim()
    shape[d] = -1
    counts = counts.view(shape)
    return _finish_out((out + res * counts) / counts.clamp(min=1), out)


def _scatter_arg(src, index, dim, out, dim_size, reduce):
    res, arg, rest, d = _scatter_2d(src, index, dim, dim_size, reduce, f"scatter_{reduce}")
    res, arg = _restore(res, rest, d), _restore(arg, rest, d)
    if out is None:
        return res, arg
    # torch_scatter starts from out's values: a src value only wins by beating it.
    beats = (res > out) if reduce == "max" else (res < out)
    beats = beats & (arg < src.size(d))
    arg = torch.where(beats, arg, torch.full_like(arg, src.size(d)))
    return _finish_out(torch.where(beats, res, out), out), arg


def scatter_sum(src, index, dim=-1, out=None, dim_size=None):
    return scatter(src, index, dim, out, dim_size, "sum")


scatter_add = scatter_sum


def scatter_mean(src, index, dim=-1, out=None, dim_size=None):
    return scatter(src, index, dim, out, dim_size, "mean")


def scatter_max(
    src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None, dim_size: Optional[int] = None
) -> Tuple[Tensor, Tensor]:
    """(values, arg) of the max per output; arg = src.size(dim) where nothing arrives."""
    if out is not None and dim_size is None:
        dim_size = out.size(dim)
    return _scatter_arg(src, index, dim, out, dim_size, "max")


def scatter_min(
    src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None, dim_size: Optional[int] = None
) -> Tuple[Tensor, Tensor]:
    """(values, arg) of the min per output; arg = src.size(dim) where nothing arrives."""
    if out is not None and dim_size is None:
        dim_size = out.size(dim)
    return _scatter_arg(src, index, dim, out, dim_size, "min")


def _segment_2d(src, indptr, reduce, op):
    if indptr.dim() != 1:
        raise ValueError(f"{op}: indptr must be 1-D (got {indptr.dim()}-D)")
    if src.dim() == 0:
        raise ValueError(f"{op}: src must have at least one dimension")
    src2, rest, _ = _rows_first(src, 0)
    indptr = indptr.to(torch.int64)
    if reduce not in ("min", "max"):
        return _restore(_ops.segment_reduce(src2, indptr, reduce), rest, 0), None
    res, arg = _ops.segment_reduce_arg(src2, indptr, reduce)
    return _restore(res, rest, 0), _restore(_arg_to_torch_scatter(arg, src.size(0)), rest, 0)


def segment_csr(src: Tensor, indptr: Tensor, out: Optional[Tensor] = None, reduce: str = "sum") -> Tensor:
    """Reduce rows indptr[s]:indptr[s+1] of src (dim 0) per segment (torch_scatter.segment_csr;
    a 1-D indptr). ``out`` is overwritten, as torch_scatter does."""
    reduce = _normalise_reduce(reduce, "segment_csr")
    return _finish_out(_segment_2d(src, indptr, reduce, "segment_csr")[0], out)


def segment_sum_csr(src, indptr, out=None):
    return segment_csr(src, indptr, out, "sum")


segment_add_csr = segment_sum_csr


def segment_mean_csr(src, indptr, out=None):
    return segment_csr(src, indptr, out, "mean")


def segment_max_csr(src: Tensor, indptr: Tensor, out: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    """(values, arg) per segment; arg = src.size(0) for an empty segment."""
    res, arg = _segment_2d(src, indptr, "max", "segment_max_csr")
    return _finish_out(res, out), arg


def segment_min_csr(src: Tensor, indptr: Tensor, out: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    """(values, arg) per segment; arg = src.size(0) for an empty segment."""
    res, arg = _segment_2d(src, indptr, "min", "segment_min_csr")
    return _finish_out(res, out), arg


class CSR:
    """A graph's CSR by destination plus its transpose, as the spmm operators take it.

    Build with ``CSR.from_edge_index``; ``weight`` (CSR order) is optional.
    """

    __slots__ = ("offsets", "sources", "edge_ids", "t_offsets", "t_targets", "t_edge_ids", "num_nodes")

    def __init__(self, offsets, sources, edge_ids, t_offsets, t_targets, t_edge_ids):
        self.offsets, self.sources, self.edge_ids = offsets, sources, edge_ids
        self.t_offsets, self.t_targets, self.t_edge_ids = t_offsets, t_targets, t_edge_ids
        self.num_nodes = offsets.size(0) - 1

    @staticmethod
    def from_edge_index(edge_index: Tensor, num_nodes: Optional[int] = None) -> "CSR":
        if edge_index.dim() != 2 or edge_index.size(0) != 2:
            raise ValueError(f"edge_index must be [2, E] (got shape {tuple(edge_index.shape)})")
        if num_nodes is None:
            num_nodes = int(edge_index.max()) + 1 if edge_index.numel() > 0 else 0
        return CSR(*_ops.csr_from_edge_index(edge_index.to(torch.int64), int(num_nodes)))

    def to_csr_order(self, edge_weight: Tensor) -> Tensor:
        """Per-edge values in input order -> CSR order (differentiable)."""
        return edge_weight.index_select(0, self.edge_ids)


def spmm_csr(csr: CSR, x: Tensor, weight_csr: Optional[Tensor] = None, reduce: str = "sum") -> Tensor:
    """out[v] = reduce over CSR edges e into v of weight_csr[e] * x[sources[e]]."""
    reduce = _normalise_reduce(reduce, "spmm")
    one_d = x.dim() == 1
    x2 = (x.unsqueeze(1) if one_d else x).contiguous()
    if x2.dim() != 2:
        raise ValueError(f"spmm: x must be [N] or [N, C] (got shape {tuple(x.shape)})")
    if x2.size(0) != csr.num_nodes:
        raise ValueError(f"spmm: x has {x2.size(0)} rows but the graph has {csr.num_nodes} nodes")
    args = (csr.offsets, csr.sources, x2, weight_csr, csr.t_offsets, csr.t_targets, csr.t_edge_ids, reduce)
    out = _ops.spmm_arg(*args)[0] if reduce in ("min", "max") else _ops.spmm(*args)
    return out.squeeze(1) if one_d else out


def spmm(
    edge_index_or_csr, x: Tensor, edge_weight: Optional[Tensor] = None, reduce: str = "sum",
    num_nodes: Optional[int] = None,
) -> Tensor:
    """Fused gather-reduce: out[t] = reduce over edges (s -> t) of w * x[s], no [E, C] messages.

    edge_index_or_csr: ``edge_index`` [2, E] (row 0 source, row 1 target; PyG) or a
    :class:`CSR`. edge_weight: [E] in edge_index order. reduce: sum, mean, min or max
    (empty rows give 0). num_nodes defaults to x.size(0).
    """
    if isinstance(edge_index_or_csr, CSR):
        csr = edge_index_or_csr
    else:
        csr = CSR.from_edge_index(edge_index_or_csr, x.size(0) if num_nodes is None else num_nodes)
    weight = None if edge_weight is None else csr.to_csr_order(edge_weight)
    return spmm_csr(csr, x, weight, reduce)


# --- edge-level attention primitives (edges in CSR order) --------------------------------------


def _csr_structure(csr: CSR):
    return csr.offsets, csr.sources


def _csr_transposed(csr: CSR):
    return csr.t_offsets, csr.t_targets, csr.t_edge_ids


def _check_rows(t: Tensor, rows: int, name: str, op: str):
    if t.size(0) != rows:
        raise ValueError(f"{op}: {name} has {t.size(0)} rows but the graph has {rows} nodes")


def sddmm_add(csr: CSR, a: Tensor, b: Tensor) -> Tensor:
    """GAT's attention logits: out[e, h] = a[src_e, h] + b[dst_e, h] for every CSR edge e.

    a, b: [N, H] or [N] (one dtype, float32 or float64). Returns [E, H] or [E] in CSR order.
    """
    one_d = a.dim() == 1
    a2, b2 = (t.unsqueeze(1) if one_d else t for t in (a, b))
    if a2.dim() != 2 or b2.shape != a2.shape:
        raise ValueError(f"sddmm_add: a and b must both be [N] or [N, H] (got {tuple(a.shape)} and {tuple(b.shape)})")
    _check_rows(a2, csr.num_nodes, "a", "sddmm_add")
    out = _attention_ops.sddmm_add(*_csr_structure(csr), a2.contiguous(), b2.contiguous(), *_csr_transposed(csr))
    return out.squeeze(1) if one_d else out


def sddmm_dot(csr: CSR, x: Tensor, y: Tensor) -> Tensor:
    """Per-edge dot products: out[e, h] = x[src_e, h, :] . y[dst_e, h, :] for every CSR edge e.

    x, y: [N, H, D] (-> [E, H]) or [N, D] (-> [E]), one dtype (float32 or float64).
    """
    one_head = x.dim() == 2
    x3, y3 = (t.unsqueeze(1) if one_head else t for t in (x, y))
    if x3.dim() != 3 or y3.shape != x3.shape:
        raise ValueError(
            f"sddmm_dot: x and y must both be [N, D] or [N, H, D] (got {tuple(x.shape)} and {tuple(y.shape)})"
        )
    _check_rows(x3, csr.num_nodes, "x", "sddmm_dot")
    N, H, D = x3.shape
    out = _attention_ops.sddmm_dot(
        *_csr_structure(csr), x3.reshape(N, H * D).contiguous(), y3.reshape(N, H * D).contiguous(), H,
        *_csr_transposed(csr),
    )
    return out.squeeze(1) if one_head else out


def edge_softmax(csr: CSR, scores: Tensor) -> Tensor:
    """Softmax of per-edge scores over each destination's incoming edges, per head.

    scores: [E] or [E, H] in CSR order (float32 or float64); numerically stable.
    """
    one_d = scores.dim() == 1
    s = scores.unsqueeze(1) if one_d else scores
    if s.dim() != 2 or s.size(0) != csr.sources.size(0):
        raise ValueError(f"edge_softmax: scores must be [E] or [E, H] with E = {csr.sources.size(0)} "
                         f"(got shape {tuple(scores.shape)})")
    out = _attention_ops.edge_softmax(csr.offsets, s.contiguous())
    return out.squeeze(1) if one_d else out


def attention_aggregate(csr: CSR, alpha: Tensor, x: Tensor) -> Tensor:
    """out[v, h, :] = sum over CSR edges e = (u -> v) of alpha[e, h] * x[u, h, :].

    alpha: [E, H] (x [N, H, D]) or [E] (x [N, D]); returns x's shape. No [E, H, D]
    message tensor is built.
    """
    one_head = x.dim() == 2
    x3 = x.unsqueeze(1) if one_head else x
    a = alpha.unsqueeze(1) if alpha.dim() == 1 else alpha
    if x3.dim() != 3 or a.dim() != 2 or a.size(1) != x3.size(1) or a.size(0) != csr.sources.size(0):
        raise ValueError(f"attention_aggregate: alpha [E, H] and x [N, H, D] must agree "
                         f"(got {tuple(alpha.shape)} and {tuple(x.shape)})")
    _check_rows(x3, csr.num_nodes, "x", "attention_aggregate")
    N, H, D = x3.shape
    out = _attention_ops.attention_aggregate(
        *_csr_structure(csr), a.contiguous(), x3.reshape(N, H * D).contiguous(), *_csr_transposed(csr)
    )
    return out.view(-1, D) if one_head else out.view(-1, H, D)
