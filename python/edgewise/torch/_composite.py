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

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import _bridge, _reduce_ops, _scatter
from ._reduce_ops import _pick

_NEG_INF = float("-inf")
# The 16-bit types too, since the kernels' row-major passes prefetch their group rows:
# bfloat16 softmax at C = 64, 1M rows, 10K / 100K groups 84 / 102 ms fused against
# 99 / 142 ms on torch's ops (C = 16: within noise of each other).
_FUSED_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


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


def _grad_needed(t: Tensor) -> bool:
    return torch.is_grad_enabled() and t.requires_grad


class _Wide:
    """A problem whose batches share one 1-D index along their last dimension (src
    [A, D, 1], e.g. dim=-1 of a 2-D tensor) computed as [1, D, A]: one transposed copy,
    and every pass after it on wide rows. ``src`` / ``outputs`` map results back to
    [A, D, 1] / [A, S, 1]; ``to_wide`` maps an output-side input the other way."""

    def __init__(self, p: _scatter.Problem):
        A, B, D = p.layout.A, p.layout.B, p.layout.D
        Ai, _, Bi = p.index3.shape
        self.on = _reduce_ops._rows_last(A, B, Ai, Bi) and D > 0
        self.A = A
        self.problem = p
        if self.on:
            wide = _bridge.transposed(p.src3.view(A, D)).unsqueeze(0)
            self.problem = _scatter.Problem(p.src, wide, p.index3, p.layout, p.size, p.out)

    def src(self, t3: Tensor) -> Tensor:
        return _bridge.transposed(t3[0]).unsqueeze(2) if self.on else t3

    def outputs(self, t3: Tensor) -> Tensor:
        return t3[0].t().contiguous().unsqueeze(2) if self.on else t3

    def to_wide(self, t3: Tensor) -> Tensor:
        return t3.view(self.A, -1).t().unsqueeze(0) if self.on else t3


def _fused_logsumexp(p: _scatter.Problem, eps: float, op: str) -> Optional[Tensor]:
    """[A, S, B]: logsumexp by edgewise's scatter_logsumexp kernel when the problem is one
    matrix grouped by a 1-D index ([1, D, B], or [A, D, 1] transposed), a floating dtype,
    no out=, no gradient recorded nor traced, and no NaN reached a group (torch_scatter
    counts NaNs as absent, which the general path below does); None otherwise."""
    A, D, B = p.src3.shape
    Ai, _, Bi = p.index3.shape
    if (Ai != 1 or Bi != 1 or D == 0 or (A != 1 and B != 1) or p.out is not None
            or p.src3.dtype not in _FUSED_DTYPES or torch.compiler.is_compiling() or _grad_needed(p.src3)):
        return None
    transposed = A != 1
    values = (p.src3.reshape(A, D) if transposed else p.src3.reshape(D, B)).contiguous()
    result = _reduce_ops._kernel("scatter_logsumexp", values, p.index3.reshape(D), p.size, caller=op,
                                 device=values.device, eps=eps, transposed=transposed)
    if bool(torch.isnan(result).any()):
        return None
    return result.view(A, p.size, B)


def scatter_logsumexp(src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None,
                      dim_size: Optional[int] = None, eps: float = 1e-12) -> Tensor:
    """log(sum(exp(src))) per output, stably (torch_scatter.scatter_logsumexp 2.1.2):
    NaN elements count as absent; an empty or all -inf group gives 0. With out, the
    result is also out's new contents: log(exp(out - max) + sum exp(src - max) + eps) + max."""
    op = "scatter_logsumexp"
    _floating(op, src)
    outer = _scatter.prepare(src, index, dim, out, dim_size, op, floating_only=True)
    fused = _fused_logsumexp(outer, eps, op)
    if fused is not None:
        result = outer.result(fused)
        return result if outer.out is None else outer.out.copy_(result)
    wide = _Wide(outer)
    p = wide.problem
    D = p.layout.D
    # torch_scatter's max: -inf where nothing (or only NaN / -inf) arrives; NaN never wins.
    # The kernel's max propagates NaN, so a NaN in a group shows in its max: only then is
    # the max taken again with NaN as -inf (a pass over src that NaN-free input skips).
    mx3, arg3 = _reduce_ops.scatter_reduce_arg(p.src3.detach(), p.index3, p.size, "max", False, op)
    if torch.compiler.is_compiling() or bool(torch.isnan(mx3).any()):
        finite_or_inf = p.src3.detach().nan_to_num(nan=_NEG_INF, posinf=float("inf"), neginf=_NEG_INF)
        mx3, arg3 = _reduce_ops.scatter_reduce_arg(finite_or_inf, p.index3, p.size, "max", False, op)
    mx3 = mx3.masked_fill_(arg3 == D, _NEG_INF)
    picked = _pick(mx3, p.index3, D)
    # exp(src - max), with the NaN of NaN - max and of inf - inf counted as absent (0)
    if _grad_needed(p.src3):
        recentered = p.src3 - picked
        exps = recentered.masked_fill(torch.isnan(recentered), _NEG_INF).exp()
    else:  # in place, in the cached buffer of the gather; exp never gives -inf
        exps = torch.sub(p.src3, picked, out=picked).exp_().nan_to_num_(nan=0.0, posinf=float("inf"))
    sums3 = _reduce_ops.scatter_reduce(exps, p.index3, p.size, "sum", False, op)
    if p.out is not None:
        sums3 = sums3 + (wide.to_wide(p.layout.as3(p.out)) - mx3).exp()
    result = p.result(wide.outputs(((sums3 + eps).log() + mx3).nan_to_num(neginf=0.0)))
    return result if p.out is None else p.out.copy_(result)


def _recentered_exps(p: _scatter.Problem, op: str) -> Tuple[Tensor, Tensor]:
    """(src - max, exp(src - max)) per element, the max of its group taken without gradient;
    in the cached buffers of the gathers when no gradient is recorded."""
    D = p.layout.D
    picked = _pick(_group_max(p, op), p.index3, D)
    if _grad_needed(p.src3):
        recentered = p.src3 - picked
        return recentered, recentered.exp()
    recentered = torch.sub(p.src3, picked, out=picked)
    exps = _bridge.empty(recentered.shape, recentered.dtype, recentered.device)
    return recentered, torch.exp(recentered, out=exps)


def _fused_softmax(p: _scatter.Problem, log: bool, eps: float, op: str) -> Optional[Tensor]:
    """(log-)softmax by edgewise's scatter_softmax kernel (three passes over the values,
    no temporaries of their size) when the problem is one matrix grouped by a 1-D index:
    [1, D, B] directly, [A, D, 1] (the last dimension) in the kernel's transposed layout;
    any floating dtype, no gradient recorded nor traced. None otherwise."""
    A, D, B = p.src3.shape
    Ai, _, Bi = p.index3.shape
    if (Ai != 1 or Bi != 1 or D == 0 or (A != 1 and B != 1) or p.src3.dtype not in _FUSED_DTYPES
            or torch.compiler.is_compiling() or _grad_needed(p.src3)):
        return None
    transposed = A != 1
    values = (p.src3.reshape(A, D) if transposed else p.src3.reshape(D, B)).contiguous()
    out = _reduce_ops._kernel("scatter_softmax", values, p.index3.reshape(D), p.size, caller=op,
                              device=values.device, log=log, eps=eps, transposed=transposed)
    return out.view(A, D, B)


def scatter_softmax(src: Tensor, index: Tensor, dim: int = -1, dim_size: Optional[int] = None) -> Tensor:
    """Softmax of src within each group of index along dim (torch_scatter.scatter_softmax):
    exp(x - max) / sum exp(x - max); src's shape."""
    op = "scatter_softmax"
    _floating(op, src)
    outer = _scatter.prepare(src, index, dim, None, dim_size, op, floating_only=True)
    fused = _fused_softmax(outer, False, 0.0, op)
    if fused is not None:
        return outer.result(fused)
    wide = _Wide(outer)
    p = wide.problem
    D = p.layout.D
    if _grad_needed(p.src3):
        exps = _recentered_exps(p, op)[1]
        sums3 = _reduce_ops.scatter_reduce(exps, p.index3, p.size, "sum", False, op)
        return p.result(wide.src(exps / _pick(sums3, p.index3, D)))
    picked = _pick(_group_max(p, op), p.index3, D)
    exps = torch.sub(p.src3, picked, out=picked).exp_()
    sums3 = _reduce_ops.scatter_reduce(exps, p.index3, p.size, "sum", False, op)
    return p.result(wide.src(exps.div_(_pick(sums3, p.index3, D))))


def scatter_log_softmax(src: Tensor, index: Tensor, dim: int = -1, eps: float = 1e-12,
                        dim_size: Optional[int] = None) -> Tensor:
    """Log-softmax within each group (torch_scatter.scatter_log_softmax):
    (x - max) - log(sum exp(x - max) + eps); src's shape."""
    op = "scatter_log_softmax"
    _floating(op, src)
    outer = _scatter.prepare(src, index, dim, None, dim_size, op, floating_only=True)
    fused = _fused_softmax(outer, True, eps, op)
    if fused is not None:
        return outer.result(fused)
    wide = _Wide(outer)
    p = wide.problem
    D = p.layout.D
    recentered, exps = _recentered_exps(p, op)
    sums3 = _reduce_ops.scatter_reduce(exps, p.index3, p.size, "sum", False, op)
    normalizer = _pick((sums3 + eps).log(), p.index3, D)
    if _grad_needed(p.src3):
        return p.result(wide.src(recentered - normalizer))
    return p.result(wide.src(recentered.sub_(normalizer)))
