"""torch_scatter's COO family: segment_coo, segment_sum / add / mean / min / max_coo, gather_coo.

Semantics are torch_scatter 2.1.2's (torch_scatter/segment_coo.py, csrc/cpu/segment_coo_cpu.cpp):
``index`` (its leading dimensions 1 or src's: a batched index) is sorted along its
last dimension and names, for dimension ``index.dim() - 1`` of ``src``, the output
each element goes to. The output has ``dim_size`` entries there, else
``out.size(dim)``, else ``index[..., -1].max() + 1``. With ``out`` the results are
combined with its contents as scatter does (sum adds, mean (out + sum) / count,
min / max keep out's value unless beaten); outputs nothing reaches keep out's value
(0 without out; min / max arg ``src.size(dim)``); integer means truncate.
Beyond torch_scatter: an unsorted or out-of-range index is a ValueError (its C++
only asserts in debug builds), and reduce also takes "mul", "var" and "std".
"""

from typing import Optional, Tuple

from torch import Tensor

from . import _checks, _layout, _reduce_ops, _scatter

COO_REDUCES = ("sum", "add", "mean", "min", "max", "mul", "var", "std")


def _size_from_sorted_index(index: Tensor) -> int:
    # torch_scatter: 1 + the largest last entry (reads the data: pass dim_size under torch.compile).
    return int(index.select(-1, -1).max()) + 1 if index.numel() > 0 else 0


def _prepare(src, index, out, dim_size, op: str) -> _scatter.Problem:
    src = _checks.values(src, "src", op)
    index = _checks.index(index, "index", op, src)
    if index.dim() > src.dim():
        raise ValueError(f"{op}: index has {index.dim()} dimensions but src only {src.dim()}")
    layout = _layout.Layout(src.shape, index.dim() - 1)
    view = _layout.leading_view(index, layout)
    index3 = _layout.align(index, view, layout, "index", op)
    size = _scatter.output_size(index, dim_size, out, layout.dim, op, _size_from_sorted_index)
    what = f"dim_size {size}" if dim_size is not None else f"index[..., -1].max() + 1 = {size}"
    _checks.output_fits(layout.shape_with(size), src.dtype, src.device, what, op)
    if out is not None:
        _checks.out_tensor(out, layout.shape_with(size), src, op)
    return _scatter.Problem(src, layout.as3(src), index3, layout, size, out)


def _coo(src, index, out, dim_size, reduce: str, op: str):
    p = _prepare(src, index, out, dim_size, op)
    if reduce in ("min", "max"):
        return _scatter.scatter_extremum(p, reduce, op, sorted_index=True)
    return _scatter.scatter_plain(p, reduce, op, sorted_index=True)


def segment_coo(src: Tensor, index: Tensor, out: Optional[Tensor] = None, dim_size: Optional[int] = None,
                reduce: str = "sum") -> Tensor:
    """Reduce src by a sorted index along dimension index.dim() - 1 (torch_scatter.segment_coo).
    reduce: "sum" / "add", "mean", "min", "max" (and "mul", "var", "std"); min / max
    route the gradient to the first element of a tie, as torch_scatter."""
    reduce = _checks.reduce_name(reduce, COO_REDUCES, "segment_coo")
    result = _coo(src, index, out, dim_size, reduce, "segment_coo")
    return result[0] if reduce in ("min", "max") else result


def segment_sum_coo(src: Tensor, index: Tensor, out: Optional[Tensor] = None,
                    dim_size: Optional[int] = None) -> Tensor:
    """The sum per output (torch_scatter.segment_sum_coo)."""
    return _coo(src, index, out, dim_size, "sum", "segment_sum_coo")


def segment_add_coo(src: Tensor, index: Tensor, out: Optional[Tensor] = None,
                    dim_size: Optional[int] = None) -> Tensor:
    """segment_sum_coo under torch_scatter's other name."""
    return _coo(src, index, out, dim_size, "sum", "segment_add_coo")


def segment_mean_coo(src: Tensor, index: Tensor, out: Optional[Tensor] = None,
                     dim_size: Optional[int] = None) -> Tensor:
    """The mean per output (torch_scatter.segment_mean_coo): integers truncate."""
    return _coo(src, index, out, dim_size, "mean", "segment_mean_coo")


def segment_min_coo(src: Tensor, index: Tensor, out: Optional[Tensor] = None,
                    dim_size: Optional[int] = None) -> Tuple[Tensor, Tensor]:
    """(values, arg) per output (torch_scatter.segment_min_coo): ties to the first
    element, NaN wins; nothing arrives: 0 (or out's value) and arg src.size(dim)."""
    return _coo(src, index, out, dim_size, "min", "segment_min_coo")


def segment_max_coo(src: Tensor, index: Tensor, out: Optional[Tensor] = None,
                    dim_size: Optional[int] = None) -> Tuple[Tensor, Tensor]:
    """(values, arg) per output (torch_scatter.segment_max_coo); as segment_min_coo."""
    return _coo(src, index, out, dim_size, "max", "segment_max_coo")


def gather_coo(src: Tensor, index: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """out[..., e, ...] = src[..., index[..., e], ...] along dimension index.dim() - 1
    (torch_scatter.gather_coo; any index order is accepted). out is overwritten."""
    op = "gather_coo"
    src = _checks.values(src, "src", op)
    index = _checks.index(index, "index", op, src)
    if index.dim() > src.dim():
        raise ValueError(f"{op}: index has {index.dim()} dimensions but src only {src.dim()}")
    layout = _layout.Layout(src.shape, index.dim() - 1)
    index2 = _layout.align_indptr(index, layout, "index", op)
    shape = layout.shape_with(index2.size(1))
    if out is not None:
        _checks.out_tensor(out, shape, src, op)
    res = layout.from3(_reduce_ops.gather_coo(layout.as3(src), index2, op))
    return res if out is None else out.copy_(res)
