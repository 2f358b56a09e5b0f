"""torch_scatter's scatter family: scatter, scatter_sum / add / mul / mean / min / max.

Semantics are torch_scatter 2.1.2's (torch_scatter/scatter.py, csrc/scatter.cpp): the
index broadcasts to ``src`` (a 1-D index lines up with ``dim``, any other with the
leading dimensions); the output along ``dim`` has ``dim_size`` entries, else
``out.size(dim)``, else ``index.max() + 1``; an output nothing reaches is 0 (mul: 1;
min / max: 0 with arg ``src.size(dim)``). With ``out`` the results are combined
with its contents and written into it, as torch_scatter does: sum adds, mul
multiplies, mean gives (out + sum) / count (count of at least 1; integers floor),
min / max keep out's value unless an element beats it strictly (arg then names it,
else ``src.size(dim)``).
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import _checks, _layout, _reduce_ops

# mul is torch_scatter's; var / std (an extension) PyG's population variance and
# clamped std, as edgewise's kernels define them.
SCATTER_REDUCES = ("sum", "add", "mul", "mean", "min", "max", "var", "std")


class Problem:
    """One call's arguments checked and in canonical form (_layout)."""

    __slots__ = ("src", "src3", "index3", "layout", "size", "out")

    def __init__(self, src, src3, index3, layout, size, out):
        self.src, self.src3, self.index3, self.layout, self.size, self.out = src, src3, index3, layout, size, out

    def result(self, out3: Tensor) -> Tensor:
        return self.layout.from3(out3)


def output_size(index: Tensor, dim_size, out: Optional[Tensor], d: int, op: str, from_index):
    """The output's extent along dim: out's, else dim_size, else from the index (data)."""
    if out is not None:
        if not isinstance(out, Tensor):
            raise ValueError(f"{op}: out must be a torch.Tensor (got {type(out).__name__})")
        if out.dim() <= d:
            raise ValueError(f"{op}: out has {out.dim()} dimensions; it must have src's")
        size = out.size(d)
        if dim_size is not None and _checks.size(dim_size, "dim_size", op) != size:
            raise ValueError(f"{op}: dim_size ({dim_size}) differs from out.size({d}) ({size})")
        return size
    if dim_size is not None:
        return _checks.size(dim_size, "dim_size", op)
    return from_index(index)


def _size_from_index(index: Tensor) -> int:
    # torch_scatter: index.max() + 1 (0 for an empty index). Reads the data, so under
    # torch.compile pass dim_size.
    return int(index.max()) + 1 if index.numel() > 0 else 0


def prepare(src, index, dim, out, dim_size, op: str, floating_only: bool = False) -> Problem:
    src = _checks.values(src, "src", op, floating_only)
    d = _checks.dim(dim, src.dim(), op)
    index = _checks.index(index, "index", op, src)
    layout = _layout.Layout(src.shape, d)
    index3 = _layout.align(index, _layout.scatter_view(index, layout, op), layout, "index", op)
    size = output_size(index, dim_size, out, d, op, _size_from_index)
    what = f"dim_size {size}" if dim_size is not None else f"index.max() + 1 = {size}"
    _checks.output_fits(layout.shape_with(size), src.dtype, src.device, what, op)
    if out is not None:
        _checks.out_tensor(out, layout.shape_with(size), src, op)
    return Problem(src, layout.as3(src), index3, layout, size, out)


def combine_extremum(p: Problem, res3: Tensor, arg3: Tensor, reduce: str) -> Tuple[Tensor, Tensor]:
    """torch_scatter's min / max into out: out's value stays unless an element beats it
    strictly; arg names the element where one did, else src.size(dim)."""
    out3 = p.layout.as3(p.out)
    D = p.layout.D
    beats = (res3 > out3) if reduce == "max" else (res3 < out3)
    beats = beats & (arg3 < D)
    arg3 = torch.where(beats, arg3, torch.full_like(arg3, D))
    p.out.copy_(p.result(torch.where(beats, res3, out3)))
    return p.out, p.layout.from3(arg3)


def combine_mean(p: Problem, sum3: Tensor, count3: Tensor, integer_rounding: str = "floor") -> Tensor:
    """(out + sum) / count, count clamped to 1 (torch_scatter's scatter_mean): true
    division for floats; integers floor (scatter_mean) or truncate (segment_coo's C++)."""
    p.out.add_(p.result(sum3))
    count = p.result(count3.clamp(min=1).to(p.out.dtype).expand_as(sum3))
    if p.out.is_floating_point():
        return p.out.div_(count)
    return p.out.div_(count, rounding_mode=integer_rounding)


def scatter_plain(p: Problem, reduce: str, op: str, sorted_index: bool = False) -> Tensor:
    if p.out is None:
        return p.result(_reduce_ops.scatter_reduce(p.src3, p.index3, p.size, reduce, sorted_index, op))
    if reduce in ("var", "std"):
        raise ValueError(f"{op}: out is not supported for reduce={reduce!r} (no existing value to combine with)")
    kernel = "sum" if reduce == "mean" else reduce
    res3 = _reduce_ops.scatter_reduce(p.src3, p.index3, p.size, kernel, sorted_index, op)
    if reduce == "sum":
        return p.out.add_(p.result(res3))
    if reduce == "mul":
        return p.out.mul_(p.result(res3))
    rounding = "trunc" if sorted_index else "floor"
    return combine_mean(p, res3, _reduce_ops.counts(p.index3, p.size, p.src.dtype), rounding)


def scatter_extremum(p: Problem, reduce: str, op: str, sorted_index: bool = False) -> Tuple[Tensor, Tensor]:
    res3, arg3 = _reduce_ops.scatter_reduce_arg(p.src3, p.index3, p.size, reduce, sorted_index, op)
    if p.out is None:
        return p.result(res3), p.layout.from3(arg3)
    return combine_extremum(p, res3, arg3, reduce)


def scatter(src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None,
            dim_size: Optional[int] = None, reduce: str = "sum") -> Tensor:
    """Reduce src into out at index along dim (torch_scatter.scatter).

    reduce: "sum" / "add", "mul", "mean", "min", "max" (torch_scatter's), and "var",
    "std" (PyG's population variance and clamped std; without out). min / max are
    scatter_min / scatter_max's values, so their gradient goes to the arg (ties: the
    first element), as torch_scatter's. index: int32 / int64 (other integer dtypes
    are widened), broadcast as torch_scatter does. See the module docstring for out.
    """
    reduce = _checks.reduce_name(reduce, SCATTER_REDUCES, "scatter")
    p = prepare(src, index, dim, out, dim_size, "scatter")
    if reduce in ("min", "max"):
        return scatter_extremum(p, reduce, "scatter")[0]
    return scatter_plain(p, reduce, "scatter")


def scatter_sum(src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None,
                dim_size: Optional[int] = None) -> Tensor:
    """out[index[i]] += src[i] along dim (torch_scatter.scatter_sum)."""
    return scatter_plain(prepare(src, index, dim, out, dim_size, "scatter_sum"), "sum", "scatter_sum")


def scatter_add(src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None,
                dim_size: Optional[int] = None) -> Tensor:
    """scatter_sum under torch_scatter's other name."""
    return scatter_plain(prepare(src, index, dim, out, dim_size, "scatter_add"), "sum", "scatter_add")


def scatter_mul(src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None,
                dim_size: Optional[int] = None) -> Tensor:
    """The product per output (torch_scatter.scatter_mul): 1 where nothing arrives;
    gradient out / src (0 where that is 0 / 0, as torch_scatter)."""
    return scatter_plain(prepare(src, index, dim, out, dim_size, "scatter_mul"), "mul", "scatter_mul")


def scatter_mean(src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None,
                 dim_size: Optional[int] = None) -> Tensor:
    """The mean per output (torch_scatter.scatter_mean): 0 where nothing arrives;
    integers floor (-3 / 2 = -2)."""
    return scatter_plain(prepare(src, index, dim, out, dim_size, "scatter_mean"), "mean", "scatter_mean")


def scatter_min(src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None,
                dim_size: Optional[int] = None) -> Tuple[Tensor, Tensor]:
    """(values, arg) of the min per output (torch_scatter.scatter_min): ties go to the
    first element (lowest position along dim), NaN wins; where nothing arrives value 0
    and arg src.size(dim). The gradient goes to the arg."""
    return scatter_extremum(prepare(src, index, dim, out, dim_size, "scatter_min"), "min", "scatter_min")


def scatter_max(src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None,
                dim_size: Optional[int] = None) -> Tuple[Tensor, Tensor]:
    """(values, arg) of the max per output (torch_scatter.scatter_max); as scatter_min."""
    return scatter_extremum(prepare(src, index, dim, out, dim_size, "scatter_max"), "max", "scatter_max")
