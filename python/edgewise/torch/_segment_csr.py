"""torch_scatter's CSR family: segment_csr, segment_sum / add / mean / min / max_csr, gather_csr.

Semantics are torch_scatter 2.1.2's (torch_scatter/segment_csr.py, csrc/cpu/segment_csr_cpu.cpp):
``indptr`` ([..., S + 1], its leading dimensions 1 or src's: a batched indptr) cuts
dimension ``indptr.dim() - 1`` of ``src`` into segments [indptr[s], indptr[s + 1]);
an empty segment gives 0 (min / max: 0 with arg ``src.size(dim)``); integer means
truncate (torch_scatter's C++ division). ``out`` is overwritten, not combined.
Beyond torch_scatter: indptr is checked (nondecreasing, within [0, src.size(dim)]:
else ValueError), and reduce also takes "mul", "var" and "std".
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import _checks, _layout, _reduce_ops

SEGMENT_REDUCES = ("sum", "add", "mean", "min", "max", "mul", "var", "std")


def _prepare(src, indptr, op: str, values_name: str = "src"):
    src = _checks.values(src, values_name, op)
    indptr = _checks.index(indptr, "indptr", op, src)
    if indptr.dim() > src.dim():
        raise ValueError(f"{op}: indptr has {indptr.dim()} dimensions but src only {src.dim()}")
    if indptr.size(-1) < 1:
        raise ValueError(f"{op}: indptr needs at least one entry along its last dimension (S + 1 for S segments)")
    layout = _layout.Layout(src.shape, indptr.dim() - 1)
    return src, _layout.align_indptr(indptr, layout, "indptr", op), layout


def _segment(src, indptr, out, reduce: str, op: str) -> Tuple[Tensor, Optional[Tensor]]:
    src, indptr2, layout = _prepare(src, indptr, op)
    size = indptr2.size(1) - 1
    if out is not None:
        _checks.out_tensor(out, layout.shape_with(size), src, op)
    src3 = layout.as3(src)
    if reduce in ("min", "max"):
        res3, arg3 = _reduce_ops.segment_reduce_arg(src3, indptr2, reduce, op)
        arg = layout.from3(arg3)
    else:
        res3, arg = _reduce_ops.segment_reduce(src3, indptr2, reduce, op), None
    res = layout.from3(res3)
    if out is None:
        return res, arg
    return out.copy_(res), arg


def segment_csr(src: Tensor, indptr: Tensor, out: Optional[Tensor] = None, reduce: str = "sum") -> Tensor:
    """Reduce src within the ranges indptr gives along dimension indptr.dim() - 1
    (torch_scatter.segment_csr). reduce: "sum" / "add", "mean", "min", "max" (and
    "mul", "var", "std"); min / max route the gradient to the first element of a tie,
    as torch_scatter. out is overwritten."""
    reduce = _checks.reduce_name(reduce, SEGMENT_REDUCES, "segment_csr")
    return _segment(src, indptr, out, reduce, "segment_csr")[0]


def segment_sum_csr(src: Tensor, indptr: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """The sum per segment (torch_scatter.segment_sum_csr)."""
    return _segment(src, indptr, out, "sum", "segment_sum_csr")[0]


def segment_add_csr(src: Tensor, indptr: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """segment_sum_csr under torch_scatter's other name."""
    return _segment(src, indptr, out, "sum", "segment_add_csr")[0]


def segment_mean_csr(src: Tensor, indptr: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """The mean per segment (torch_scatter.segment_mean_csr): 0 when empty, integers truncate."""
    return _segment(src, indptr, out, "mean", "segment_mean_csr")[0]


def segment_min_csr(src: Tensor, indptr: Tensor, out: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    """(values, arg) per segment (torch_scatter.segment_min_csr): ties to the first
    element, NaN wins; an empty segment gives 0 and arg src.size(dim)."""
    return _segment(src, indptr, out, "min", "segment_min_csr")


def segment_max_csr(src: Tensor, indptr: Tensor, out: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    """(values, arg) per segment (torch_scatter.segment_max_csr); as segment_min_csr."""
    return _segment(src, indptr, out, "max", "segment_max_csr")


def gather_csr(src: Tensor, indptr: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """Spread each segment's value over its rows (torch_scatter.gather_csr): along
    dimension indptr.dim() - 1, out[r] = src[s] for r in [indptr[s], indptr[s + 1]).
    Without out the result has indptr[..., -1] of the last batch rows (torch_scatter's
    size), rows no segment covers are 0; with out those rows keep out's contents."""
    op = "gather_csr"
    src, indptr2, layout = _prepare(src, indptr, op)
    size = indptr2.size(1) - 1
    if src.numel() > 0 and src.size(layout.dim) != size:
        raise ValueError(f"{op}: src has {src.size(layout.dim)} entries along dimension {layout.dim} "
                         f"but indptr describes {size} segments")
    if out is not None:
        if not isinstance(out, Tensor) or out.dim() != src.dim():
            raise ValueError(f"{op}: out must be a tensor with src's {src.dim()} dimensions")
        _checks.out_tensor(out, layout.shape_with(out.size(layout.dim)), src, op)
    res3 = _reduce_ops.gather_csr(layout.as3(src), indptr2, op)
    if out is None:
        return layout.from3(res3)
    rows = out.size(layout.dim)
    if res3.size(1) > rows:
        raise ValueError(f"{op}: indptr reaches row {res3.size(1)} but out has {rows} along dimension {layout.dim}")
    covered = (_reduce_ops.segment_ids(indptr2, rows) < size).unsqueeze(2)
    padded = torch.nn.functional.pad(res3, (0, 0, 0, rows - res3.size(1)))
    out3 = layout.as3(out)
    return out.copy_(layout.from3(torch.where(covered, padded, out3)))
