"""torch_scatter's composite functions: scatter_std, scatter_logsumexp, scatter_softmax,
scatter_log_softmax (torch_scatter 2.1.2, torch_scatter/composite/*.py), computed by
edgewise's kernels (a max pass, a sum or variance pass) with elementwise torch ops
between them, never a Python loop over groups.

Numerics follow torch_scatter's formulas, quirks included, so existing code gets the
numbers it had: softmax subtracts each group's max first (stable for any finite
input); logsumexp is log(sum exp(x - max) + eps) + max with NaN treated as absent
and ``nan_to_num(neginf=0)`` at the end, so a group that is empty or all -inf gives
0 (torch_scatter 2.1.2); std is sqrt(sum (x - mean)^2 / (count - unbiased + 1e-6)).
The max is taken without gradient: every formula is invariant to it, so its
gradient would cancel exactly.
"""

from typing import Optional

import torch
from torch import Tensor

from . import _reduce_ops, _scatter
from ._reduce_ops import _pick

_NEG_INF = float("-inf")


def _floating(op: str, src):
    if isinstance(src, Tensor) and not src.is_floating_point():
        raise ValueError(f"{op}: `{op}` can only be computed over tensors with floating point data types "
                         f"(got {src.dtype})")


def _group_max(p: _scatter.Problem, op: str) -> Tensor:
    return _reduce_ops.scatter_reduce(p.src3.detach(), p.index3, p.size, "max", False, op)


def scatter_std(src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None,
                dim_size: Optional[int] = None, unbiased: bool = True) -> Tensor:
    """The standard deviation per output (torch_scatter.scatter_std):
    sqrt(M2 / (count - 1 + 1e-6)) with count - 1 clamped to 1 (unbiased), or
    sqrt(M2 / (count + 1e-6)); M2 (the sum of squared deviations) from edgewise's
    one-pass variance kernel. Integer src is computed in torch's default float dtype.
    With out, out receives out + M2 and the std is returned (as torch_scatter does)."""
    op = "scatter_std"
    if isinstance(src, Tensor) and not src.is_floating_point() and not src.is_complex():
        src = src.to(torch.get_default_dtype())
    p = _scatter.prepare(src, index, dim, out, dim_size, op, floating_only=True)
    n3 = _reduce_ops.counts(p.index3, p.size, p.src.dtype)
    variance3 = _reduce_ops.scatter_reduce(p.src3, p.index3, p.size, "var", False, op)  # population
    m2 = p.result(variance3 * n3)
    if p.out is not None:
        m2 = p.out.add_(m2)
    count = p.result(n3.clamp(min=1).expand_as(variance3))
    if unbiased:
        count = (count - 1).clamp(min=1)
    return m2.div(count + 1e-6).sqrt()


def scatter_logsumexp(src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None,
                      dim_size: Optional[int] = None, eps: float = 1e-12) -> Tensor:
    """log(sum(exp(src))) per output, stably (torch_scatter.scatter_logsumexp 2.1.2):
    NaN elements count as absent; an empty or all -inf group gives 0. With out, the
    result is also out's new contents: log(exp(out - max) + sum exp(src - max) + eps) + max."""
    op = "scatter_logsumexp"
    _floating(op, src)
    p = _scatter.prepare(src, index, dim, out, dim_size, op, floating_only=True)
    D = p.layout.D
    # torch_scatter's max: -inf where nothing (or only NaN / -inf) arrives; NaN never wins.
    finite_or_inf = p.src3.detach().nan_to_num(nan=_NEG_INF, posinf=float("inf"), neginf=_NEG_INF)
    mx3, arg3 = _reduce_ops.scatter_reduce_arg(finite_or_inf, p.index3, p.size, "max", False, op)
    mx3 = torch.where(arg3 == D, torch.full_like(mx3, _NEG_INF), mx3)
    recentered = p.src3 - _pick(mx3, p.index3, D)
    recentered = recentered.masked_fill(torch.isnan(recentered), _NEG_INF)
    sums3 = _reduce_ops.scatter_reduce(recentered.exp(), p.index3, p.size, "sum", False, op)
    if p.out is not None:
        sums3 = sums3 + (p.layout.as3(p.out) - mx3).exp()
    result = p.result(((sums3 + eps).log() + mx3).nan_to_num(neginf=0.0))
    return result if p.out is None else p.out.copy_(result)


def scatter_softmax(src: Tensor, index: Tensor, dim: int = -1, dim_size: Optional[int] = None) -> Tensor:
    """Softmax of src within each group of index along dim (torch_scatter.scatter_softmax):
    exp(x - max) / sum exp(x - max); src's shape."""
    op = "scatter_softmax"
    _floating(op, src)
    p = _scatter.prepare(src, index, dim, None, dim_size, op, floating_only=True)
    D = p.layout.D
    exps = (p.src3 - _pick(_group_max(p, op), p.index3, D)).exp()
    sums3 = _reduce_ops.scatter_reduce(exps, p.index3, p.size, "sum", False, op)
    return p.result(exps / _pick(sums3, p.index3, D))


def scatter_log_softmax(src: Tensor, index: Tensor, dim: int = -1, eps: float = 1e-12,
                        dim_size: Optional[int] = None) -> Tensor:
    """Log-softmax within each group (torch_scatter.scatter_log_softmax):
    (x - max) - log(sum exp(x - max) + eps); src's shape."""
    op = "scatter_log_softmax"
    _floating(op, src)
    p = _scatter.prepare(src, index, dim, None, dim_size, op, floating_only=True)
    D = p.layout.D
    recentered = p.src3 - _pick(_group_max(p, op), p.index3, D)
    sums3 = _reduce_ops.scatter_reduce(recentered.exp(), p.index3, p.size, "sum", False, op)
    return p.result(recentered - _pick((sums3 + eps).log(), p.index3, D))
