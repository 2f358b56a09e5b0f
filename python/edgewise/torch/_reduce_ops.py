"""The reductions and gathers of the torch_scatter API as torch.library operators
(namespace ``edgewise``) on the canonical forms of ``_layout``: values ``[A, D, B]``,
an index ``[Ai, D, Bi]`` or an indptr ``[Ai, S + 1]``, results ``[A, S, B]``.

Each operator checks the contents of its index (range, order) in its own body,
which runs eagerly even under torch.compile, composes the batched problem into the
kernels' 2-D one (values [rows, C], a 1-D index or offsets) and has a fake kernel
and an autograd formula. Gradients are plain torch ops on the same canonical forms.
Tie rules of min/max (TieRule in the kernels): the ``*_arg`` operators return the
arg and route the gradient through it (``first``, torch_scatter's scatter_max);
``scatter_reduce`` / ``segment_reduce`` with min/max split it evenly among the ties,
one more share where the output is 0 (``split_zero_base``: torch's scatter_reduce
amax/amin with include_self=False onto zeros, PyG's rule).
"""

from typing import Tuple

import torch
from torch import Tensor

from . import _bridge

_EXTREMA = ("min", "max")
# segment_coo of these runs on the scatter kernel (per-ISA copies; segment_reduce has baseline only).
_HALF_TYPES = (torch.float16, torch.bfloat16)
# A batched 1-D index is composed per batch (a * S + index) when rows are at least
# this wide; narrower rows are transposed to [D, A * B] instead, so the kernel sees
# wide rows and the composed index does not outgrow the values.
_COMPOSE_MIN_COLS = 8


# --- checks on index contents (eager: inside the operators) --------------------------------------


def _check_range(index: Tensor, size: int, caller: str, name: str = "index"):
    if index.numel() == 0:
        return
    lo, hi = torch.aminmax(index)
    lo, hi = int(lo), int(hi)
    if lo < 0 or hi >= size:
        bad = lo if lo < 0 else hi
        raise ValueError(f"{caller}: {name} holds {bad}, outside [0, {size}) (the output size along dim)")


def _check_indptr(indptr: Tensor, rows: int, caller: str, rows_are: str = "src's size along the reduced dim"):
    """indptr [Ai, S + 1]: nondecreasing along its last dimension, within [0, rows]."""
    if indptr.numel() == 0:
        return
    lo, hi = torch.aminmax(indptr)
    if int(lo) < 0 or int(hi) > rows:
        bad = int(lo) if int(lo) < 0 else int(hi)
        raise ValueError(f"{caller}: indptr holds {bad}, outside [0, {rows}] ({rows_are})")
    if indptr.size(1) > 1 and bool((indptr[:, 1:] < indptr[:, :-1]).any()):
        raise ValueError(f"{caller}: indptr must be nondecreasing along its last dimension")


def _rewrap(error: ValueError, kernel: str, caller: str) -> ValueError:
    return ValueError(str(error).replace(f"{kernel}:", f"{caller}:", 1))


# --- helpers ----------------------------------------------------------------------------------------


def _empty_value(reduce: str) -> int:
    return 1 if reduce == "mul" else 0


def _batch_base(A: int, step: int, like: Tensor) -> Tensor:
    """[A, 1]: a * step."""
    return (torch.arange(A, device=like.device, dtype=torch.int64) * step).unsqueeze(1)


def _arg_to_dim(arg_rows: Tensor, base: Tensor, D: int) -> Tensor:
    """Kernel args (rows of the composed problem, -1 for empty) -> positions along dim, D
    for empty; in place (the kernel's own output)."""
    empty = arg_rows < 0
    return arg_rows.sub_(base).masked_fill_(empty, D)


def _segment_arg_to_dim(arg_rows: Tensor, offsets: Tensor, A: int, per_batch: int, D: int) -> Tensor:
    """segment_reduce's args over `offsets` (A * per_batch segments of the [A * D, B]
    problem; -1 in an empty segment) -> positions along dim, D in an empty segment; in
    place. The empty segments are found from offsets, not by passes over arg: on a
    [100K, 64] arg those passes took as long as the reduction's own arg search."""
    arg = arg_rows.view(A, per_batch, -1)
    if A > 1:
        arg.sub_(_batch_base(A, D, arg).unsqueeze(2))
    arg[(offsets[1:] == offsets[:-1]).view(A, per_batch).nonzero(as_tuple=True)] = D  # indices: no pass over arg
    return arg


def _kernel(name: str, *args, caller: str, device, **kwargs):
    try:
        return _bridge.call(name, *args, device=device, **kwargs)
    except ValueError as e:
        raise _rewrap(e, name, caller) from None


def _segment_kernel(values2: Tensor, offsets: Tensor, reduce: str, with_arg: bool, caller: str):
    return _kernel("segment_reduce", values2, offsets, caller=caller, device=values2.device, op=reduce,
                   return_arg=with_arg)


def counts(index3: Tensor, size: int, dtype: torch.dtype) -> Tensor:
    """[Ai, size, Bi]: how many elements index3 [Ai, D, Bi] sends to each output."""
    Ai, _, Bi = index3.shape
    ones = torch.ones(index3.shape, dtype=dtype, device=index3.device)
    return torch.zeros(Ai, size, Bi, dtype=dtype, device=index3.device).scatter_add_(1, index3.long(), ones)


# --- scatter: [A, D, B] by index [Ai, D, Bi] into [A, S, B] ----------------------------------------


def _rows_last(A: int, B: int, Ai: int, Bi: int) -> bool:
    """Whether a problem reduces the last dimension of batches that share one 1-D index
    (src [A, D, 1], e.g. dim=-1 of a 2-D tensor): the kernel then reads src [A, D] as it
    lies (scatter_reduce's transposed layout), one problem of A columns, instead of
    A * D one-element rows."""
    return A > 1 and B == 1 and Ai == 1 and Bi == 1


def _scatter_forward(src: Tensor, index: Tensor, S: int, reduce: str, sorted_index: bool, caller: str,
                     with_arg: bool):
    A, D, B = src.shape
    Ai, _, Bi = index.shape
    integer_mean = reduce == "mean" and not src.dtype.is_floating_point and sorted_index
    kernel_reduce = "sum" if integer_mean else reduce
    if _rows_last(A, B, Ai, Bi) and D > 0 and S > 0:
        return _scatter_rows_last(src.view(A, D), index.reshape(D), S, kernel_reduce, sorted_index, integer_mean,
                                  caller, with_arg)
    if A * D * B == 0 or S == 0:
        _check_range(index, S, caller)
        out = src.new_full((A, S, B), _empty_value(reduce))
        return out, src.new_full((A, S, B), D, dtype=torch.int64)

    if sorted_index:  # segment_coo: rows grouped by a sorted index, reduced as segments
        _check_range(index, S, caller)
        keys = index.reshape(Ai, D)
        if A > 1 and Ai > 1:  # a batched index: one key space, batch a's keys shifted by a * S
            keys = keys + _batch_base(A, S, keys)
        try:
            offsets = _bridge.call("offsets_from_keys", keys.reshape(-1), Ai * S, device=src.device)
        except ValueError:
            raise ValueError(f"{caller}: index must be sorted (nondecreasing) along its last dimension") from None
        if A > 1 and Ai == 1:  # one index for every batch: its offsets repeated a * D further on
            offsets = torch.cat([(offsets[:-1].unsqueeze(0) + _batch_base(A, D, offsets)).reshape(A * S),
                                 offsets.new_full((1,), A * D)])
        result = _segment_kernel(src.reshape(A * D, B), offsets, kernel_reduce, with_arg, caller)
        out, arg = result if with_arg else (result, None)
        out = out.view(A, S, B)
        if integer_mean:
            lengths = (offsets[1:] - offsets[:-1]).view(A, S, 1).clamp(min=1).to(out.dtype)
            out = torch.div(out, lengths, rounding_mode="trunc")  # torch_scatter's C++ mean truncates
        if with_arg:
            arg = _segment_arg_to_dim(arg, offsets, A, S, D)
        return out, arg

    idx = index
    if Bi == 1 and A == 1:  # one 1-D problem: the kernel checks the index itself
        values2, idx1, rows = src.view(D, B), idx.reshape(D), S
        layout = "direct"
    elif Bi == 1 and (Ai > 1 or B >= _COMPOSE_MIN_COLS):
        _check_range(idx, S, caller)
        idx1 = (idx.reshape(Ai, D).long() + _batch_base(A, S, idx)).reshape(A * D)
        values2, rows, layout = src.reshape(A * D, B), A * S, "batched"
    elif Bi == 1:  # a 1-D index, narrow rows: transpose so each row is all batches
        values2 = _bridge.transposed(src.permute(0, 2, 1).reshape(A * B, D))  # [D, A * B]
        idx1, rows = idx.reshape(D), S
        layout = "transposed"
    else:  # an index that varies along the trailing dims: one element per row
        _check_range(idx, S, caller)
        base = (torch.arange(A, device=src.device) * S).view(A, 1, 1)
        cols = torch.arange(B, device=src.device).view(1, 1, B)
        idx1 = ((idx.long() + base) * B + cols).reshape(A * D * B)
        values2, rows, layout = src.reshape(A * D * B, 1), A * S * B, "elements"
    result = _kernel("scatter_reduce", values2, idx1, rows, caller=caller, device=src.device, op=kernel_reduce,
                     return_arg=with_arg)
    out, arg = result if with_arg else (result, None)
    if layout == "transposed":
        out = out.view(S, A, B).transpose(0, 1)
        arg = arg.masked_fill_(arg < 0, D).view(S, A, B).transpose(0, 1) if with_arg else None
        return out.contiguous(), (arg.contiguous() if with_arg else None)
    out = out.view(A, S, B)
    if with_arg:
        if layout == "direct":
            arg = arg.masked_fill_(arg < 0, D).view(A, S, B)
        elif layout == "batched":
            arg = _arg_to_dim(arg.view(A, S * B), _batch_base(A, D, arg), D).view(A, S, B)
        else:  # element rows (a * D + d) * B + b
            empty = arg < 0
            arg = torch.div(arg, B, rounding_mode="floor").remainder_(D).masked_fill_(empty, D).view(A, S, B)
    return out, arg


def _scatter_rows_last(src2: Tensor, index1: Tensor, S: int, kernel_reduce: str, sorted_index: bool,
                       integer_mean: bool, caller: str, with_arg: bool):
    """src2 [A, D] reduced along D by index1 [D] into [A, S, 1]: the kernel reads src2
    as it lies (transposed=True), no transposed copy. integer_mean: the kernel summed,
    the mean truncates (torch_scatter's segment kernels)."""
    A, D = src2.shape
    if sorted_index and D > 1 and bool((index1[1:] < index1[:-1]).any()):
        raise ValueError(f"{caller}: index must be sorted (nondecreasing) along its last dimension")
    result = _kernel("scatter_reduce", src2, index1, S, caller=caller, device=src2.device, op=kernel_reduce,
                     return_arg=with_arg, transposed=True)
    out, arg = result if with_arg else (result, None)
    if integer_mean:  # segment_coo's mean truncates (torch_scatter's C++), from the kernel's sum
        lengths = torch.bincount(index1.long(), minlength=S).clamp(min=1).to(out.dtype)
        out = torch.div(out, lengths, rounding_mode="trunc")
    if with_arg:
        arg = arg.masked_fill_(arg < 0, D).unsqueeze(2)
    return out.unsqueeze(2), arg


def _scatter_reduce(src: Tensor, index: Tensor, dim_size: int, reduce: str, sorted_index: bool, caller: str) -> Tensor:
    """src [A, D, B] into [A, dim_size, B] by index [Ai, D, Bi]; sum, mean, mul, var, std,
    min, max (min/max: split_zero_base tie rule in the backward)."""
    return _scatter_forward(src, index, dim_size, reduce, sorted_index, caller, False)[0]


scatter_reduce = torch.library.custom_op("edgewise::scatter_reduce", mutates_args=())(_scatter_reduce)


@scatter_reduce.register_fake
def _(src, index, dim_size, reduce, sorted_index, caller):
    return src.new_empty((src.size(0), dim_size, src.size(2)))


def _scatter_reduce_arg(src: Tensor, index: Tensor, dim_size: int, reduce: str, sorted_index: bool,
                       caller: str) -> Tuple[Tensor, Tensor]:
    """min/max with arg [A, dim_size, B]: the position along D of the winner (ties: the
    lowest; NaN wins), D where nothing arrives (torch_scatter's convention)."""
    out, arg = _scatter_forward(src, index, dim_size, reduce, sorted_index, caller, True)
    return out, arg


scatter_reduce_arg = torch.library.custom_op("edgewise::scatter_reduce_arg", mutates_args=())(_scatter_reduce_arg)


@scatter_reduce_arg.register_fake
def _(src, index, dim_size, reduce, sorted_index, caller):
    shape = (src.size(0), dim_size, src.size(2))
    return src.new_empty(shape), src.new_empty(shape, dtype=torch.int64)


# --- gradients (plain torch ops on the canonical forms) --------------------------------------------


def _pick(t: Tensor, index3: Tensor, D: int) -> Tensor:
    """[A, D, B]: t[a, index3[a, d, b], b] for t [A, S', B]. Without autograd the result
    lives in Edgewise's host block cache (_bridge.empty): a fresh 64 MB tensor's page
    faults cost more than the gather itself."""
    A, _, B = t.shape
    Ai, _, Bi = index3.shape
    if torch.is_grad_enabled() and t.requires_grad:
        buffer = None
    else:
        buffer = _bridge.empty((A, D, B), t.dtype, t.device)
    if Ai == 1 and Bi == 1:
        index = index3.reshape(D)
        if A == 1:  # whole rows: torch's fast path is index_select along dim 0
            if buffer is None:
                return t[0].index_select(0, index).unsqueeze(0)
            torch.index_select(t[0], 0, index, out=buffer[0])
            return buffer
        return t.index_select(1, index) if buffer is None else torch.index_select(t, 1, index, out=buffer)
    index = index3.long().expand(A, D, B)
    return torch.gather(t, 1, index) if buffer is None else torch.gather(t, 1, index, out=buffer)


def _reduce_backward(reduce: str, grad: Tensor, src: Tensor, index3: Tensor, out: Tensor) -> Tensor:
    """dL/dsrc [A, D, B] of out = reduce(src by index3) for dL/dout = grad [A, S, B];
    src / out may be None where the rule does not read them."""
    A, S, B = grad.shape
    D = index3.size(1)
    if reduce == "sum":
        return _pick(grad, index3, D)
    if reduce == "mean":
        return _pick(grad / counts(index3, S, grad.dtype).clamp(min=1), index3, D)
    if reduce == "mul":  # torch_scatter's: y / x, NaN (0 / 0) -> 0
        g = _pick(grad * out, index3, D) / src
        return g.masked_fill(torch.isnan(g), 0)
    if reduce in _EXTREMA:
        # split_zero_base: each of the k elements equal to out gets 1 / k, 1 / (k + 1)
        # where out is 0 (torch's scatter_reduce amax / amin onto zeros, PyG's rule)
        picked = _pick(out, index3, D)
        tie = (src == picked) | (torch.isnan(src) & torch.isnan(picked))
        ties = torch.zeros_like(grad).scatter_add_(1, index3.long().expand(A, D, B), tie.to(grad.dtype))
        shares = ties + (out == 0).to(grad.dtype)
        return torch.where(tie, _pick(grad / shares.clamp(min=1), index3, D), torch.zeros_like(src))
    # var / std (population, PyG's): d var / dx = 2 (x - mean) / n; d std = (x - mean) / (n std)
    n = counts(index3, S, grad.dtype).clamp(min=1)
    total = torch.zeros_like(grad).scatter_add_(1, index3.long().expand(A, D, B), src)
    deviation = src - _pick(total / n, index3, D)
    if reduce == "var":
        return 2 * deviation * _pick(grad / n, index3, D)
    factor = torch.where(out != 0, grad / (n * out), torch.zeros_like(grad))
    return deviation * _pick(factor, index3, D)


def _route_by_arg(grad: Tensor, arg: Tensor, D: int) -> Tensor:
    """dL/dsrc [A, D, B] of a min/max through its arg (D: nothing arrived, dropped)."""
    A, _, B = grad.shape
    return grad.new_zeros((A, D + 1, B)).scatter_add_(1, arg, grad)[:, :D]


def _scatter_setup(ctx, inputs, output):
    src, index, dim_size, reduce, sorted_index, caller = inputs
    ctx.reduce = reduce
    keeps_src = reduce not in ("sum", "mean")
    ctx.save_for_backward(index, src if keeps_src else None, output if keeps_src else None)


def _scatter_backward(ctx, grad):
    index, src, out = ctx.saved_tensors
    return _reduce_backward(ctx.reduce, grad, src, index, out), None, None, None, None, None


scatter_reduce.register_autograd(_scatter_backward, setup_context=_scatter_setup)


def _arg_setup(ctx, inputs, output):
    ctx.rows = inputs[0].size(1)
    ctx.save_for_backward(output[1])


def _arg_backward(ctx, grad, grad_arg):
    return _route_by_arg(grad, ctx.saved_tensors[0], ctx.rows), None, None, None, None, None


scatter_reduce_arg.register_autograd(_arg_backward, setup_context=_arg_setup)


# --- segment_csr: [A, D, B] by indptr [Ai, S + 1] into [A, S, B] -----------------------------------


def _segment_forward(src: Tensor, indptr: Tensor, reduce: str, caller: str, with_arg: bool):
    A, D, B = src.shape
    Ai, P = indptr.shape
    S = P - 1
    integer_mean = reduce == "mean" and not src.dtype.is_floating_point
    kernel_reduce = "sum" if integer_mean else reduce
    if A == 1 and S > 0 and B > 0 and D > 0 and int(indptr[0, 0]) == 0 and int(indptr[0, -1]) == D:
        # One indptr tiling src: the kernel's offsets as they are, checked by the kernel
        # (the operators' own message for a bad indptr where it refuses them).
        offsets = indptr.reshape(P).long()
        try:
            result = _bridge.call("segment_reduce", src.reshape(D, B), offsets, device=src.device,
                                  op=kernel_reduce, return_arg=with_arg)
        except ValueError as e:
            _check_indptr(indptr, D, caller)
            raise _rewrap(e, "segment_reduce", caller) from None
        out, arg = result if with_arg else (result, None)
        if integer_mean:  # torch_scatter's C++ mean truncates
            out = torch.div(out, offsets.diff().clamp(min=1).unsqueeze(1).to(out.dtype), rounding_mode="trunc")
        return out.view(1, S, B), (_segment_arg_to_dim(arg, offsets, 1, S, D) if with_arg else None)
    _check_indptr(indptr, D, caller)
    if A * S * B == 0 or D == 0:
        return src.new_full((A, S, B), _empty_value(reduce)), src.new_full((A, S, B), D, dtype=torch.int64)
    if _rows_last(A, B, Ai, 1):  # by segment id, rows no segment covers into a dropped output S
        ids = segment_ids(indptr, D).reshape(D)
        out, arg = _scatter_rows_last(src.view(A, D), ids, S + 1, kernel_reduce, False, integer_mean, caller,
                                      with_arg)
        return out[:, :S].contiguous(), (arg[:, :S].contiguous() if with_arg else None)
    starts = indptr.long()
    whole = bool((starts[:, 0] == 0).all()) and bool((starts[:, -1] == D).all())
    base = _batch_base(A, D, starts)
    if whole:  # the segments tile every batch: offsets a * D + indptr[:-1], then A * D
        inner = (starts[:, :-1] + base).reshape(A * S)
        per_batch = S
    else:  # rows before indptr[0] / from indptr[S] on fall into gap segments, dropped below
        inner = torch.cat([base, starts + base], dim=1).reshape(A * (S + 2))
        per_batch = S + 2
    offsets = torch.cat([inner, inner.new_full((1,), A * D)])
    result = _segment_kernel(src.reshape(A * D, B), offsets, kernel_reduce, with_arg, caller)
    out, arg = result if with_arg else (result, None)
    out = out.view(A, per_batch, B)
    if with_arg:
        arg = _segment_arg_to_dim(arg, offsets, A, per_batch, D)
    if not whole:
        out = out[:, 1:S + 1]
        arg = arg[:, 1:S + 1] if with_arg else None
    if integer_mean:  # torch_scatter's C++ mean truncates
        lengths = (starts[:, 1:] - starts[:, :-1]).clamp(min=1).unsqueeze(2).to(out.dtype)
        out = torch.div(out, lengths, rounding_mode="trunc")
    return out.contiguous(), (arg.contiguous() if with_arg else None)


def segment_ids(indptr: Tensor, rows: int) -> Tensor:
    """[Ai, rows]: the segment of each row under indptr [Ai, S + 1] (checked: within
    [0, rows], nondecreasing); S for rows in none. One repeat_interleave: per batch
    the rows before indptr[0], each segment's rows, the rows from indptr[S] on."""
    Ai, P = indptr.shape
    S = P - 1
    starts = indptr.long()
    lengths = torch.cat([starts[:, :1], starts[:, 1:] - starts[:, :-1], rows - starts[:, -1:]], dim=1)
    none = torch.full((1,), S, dtype=torch.int64, device=indptr.device)
    ids = torch.cat([none, torch.arange(S, device=indptr.device), none]).expand(Ai, S + 2)
    return torch.repeat_interleave(ids.reshape(-1), lengths.reshape(-1), output_size=Ai * rows).view(Ai, rows)


def _segment_backward_via_ids(reduce: str, grad: Tensor, src: Tensor, indptr: Tensor, out: Tensor,
                              rows: int) -> Tensor:
    """Segments as a scatter by segment id, with one padding output (gradient 0) for
    the rows no segment covers."""
    A, S, B = grad.shape
    ids = segment_ids(indptr, rows).unsqueeze(2)
    pad = grad.new_zeros((A, 1, B))
    out_pad = None if out is None else torch.cat([out, pad], dim=1)
    return _reduce_backward(reduce, torch.cat([grad, pad], dim=1), src, ids, out_pad)


def _segment_reduce(src: Tensor, indptr: Tensor, reduce: str, caller: str) -> Tensor:
    """src [A, D, B] by indptr [Ai, S + 1] into [A, S, B] (rows outside [indptr[0],
    indptr[S]) belong to no segment); min/max: split_zero_base tie rule in the backward."""
    return _segment_forward(src, indptr, reduce, caller, False)[0]


segment_reduce = torch.library.custom_op("edgewise::segment_reduce", mutates_args=())(_segment_reduce)


@segment_reduce.register_fake
def _(src, indptr, reduce, caller):
    return src.new_empty((src.size(0), indptr.size(1) - 1, src.size(2)))


def _segment_reduce_arg(src: Tensor, indptr: Tensor, reduce: str, caller: str) -> Tuple[Tensor, Tensor]:
    """min/max with arg [A, S, B] (position along D; D for an empty segment)."""
    out, arg = _segment_forward(src, indptr, reduce, caller, True)
    return out, arg


segment_reduce_arg = torch.library.custom_op("edgewise::segment_reduce_arg", mutates_args=())(_segment_reduce_arg)


@segment_reduce_arg.register_fake
def _(src, indptr, reduce, caller):
    shape = (src.size(0), indptr.size(1) - 1, src.size(2))
    return src.new_empty(shape), src.new_empty(shape, dtype=torch.int64)


def _segment_setup(ctx, inputs, output):
    src, indptr, reduce, caller = inputs
    ctx.reduce = reduce
    ctx.rows = src.size(1)
    keeps_src = reduce not in ("sum", "mean")
    ctx.save_for_backward(indptr, src if keeps_src else None, output if keeps_src else None)


def _segment_backward(ctx, grad):
    indptr, src, out = ctx.saved_tensors
    return _segment_backward_via_ids(ctx.reduce, grad, src, indptr, out, ctx.rows), None, None, None


segment_reduce.register_autograd(_segment_backward, setup_context=_segment_setup)


def _segment_arg_setup(ctx, inputs, output):
    ctx.rows = inputs[0].size(1)
    ctx.save_for_backward(output[1])


def _segment_arg_backward(ctx, grad, grad_arg):
    return _route_by_arg(grad, ctx.saved_tensors[0], ctx.rows), None, None, None


segment_reduce_arg.register_autograd(_segment_arg_backward, setup_context=_segment_arg_setup)


# --- gathers: the inverse direction (torch_scatter's gather_csr / gather_coo) ----------------------

# The dtypes the gather_rows kernels copy (any of the reductions' element types).
_ROW_COPY_TYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64)


def _copies_rows(src: Tensor) -> bool:
    """Whether the CPU gather_rows kernels take this gather: they copy each output row
    once, where torch's gather reads an expanded index per element (and gather_csr's
    fallback first copies src to append a zero row)."""
    return src.device.type == "cpu" and src.dtype in _ROW_COPY_TYPES


def _gather_csr_forward(src: Tensor, indptr: Tensor, caller: str) -> Tensor:
    A, S, B = src.shape
    rows = int(indptr[-1, -1]) if indptr.numel() > 0 and src.numel() > 0 else 0
    rows_are = "the output's rows: the last batch's indptr[-1], as torch_scatter sizes it"
    if _copies_rows(src) and A * rows * B > 0:
        try:  # the kernel checks indptr in its one pass over it
            out = _bridge.call("gather_rows_csr", src.reshape(A * S, B), indptr, rows, batches=A)
        except ValueError as e:
            _check_indptr(indptr, rows, caller, rows_are)  # the operators' own message for a bad indptr
            raise _rewrap(e, "gather_rows_csr", caller) from None
        return out.view(A, rows, B)
    _check_indptr(indptr, rows, caller, rows_are)
    ids = segment_ids(indptr, rows)  # [Ai, rows], S for rows no segment covers (written 0)
    padded = torch.cat([src, src.new_zeros((A, 1, B))], dim=1)
    return _pick(padded, ids.unsqueeze(2), rows).contiguous()


def _gather_csr(src: Tensor, indptr: Tensor, caller: str) -> Tensor:
    """src [A, S, B] spread over rows by indptr [Ai, S + 1]: out [A, indptr[-1, -1], B],
    out[a, r] = src[a, s] for r in [indptr[a, s], indptr[a, s + 1]); other rows 0."""
    return _gather_csr_forward(src, indptr, caller)


gather_csr = torch.library.custom_op("edgewise::gather_csr", mutates_args=())(_gather_csr)


@gather_csr.register_fake
def _(src, indptr, caller):
    rows = torch.library.get_ctx().new_dynamic_size()
    return src.new_empty((src.size(0), rows, src.size(2)))


def _gather_csr_setup(ctx, inputs, output):
    ctx.caller = inputs[2]
    ctx.save_for_backward(inputs[1])


def _gather_csr_backward(ctx, grad):
    return segment_reduce(grad.contiguous(), ctx.saved_tensors[0], "sum", ctx.caller), None, None


gather_csr.register_autograd(_gather_csr_backward, setup_context=_gather_csr_setup)


def _gather_coo(src: Tensor, index: Tensor, caller: str) -> Tensor:
    """src [A, S, B] at index [Ai, E]: out [A, E, B], out[a, e] = src[a, index[a, e]]."""
    A, S, B = src.shape
    if _copies_rows(src) and A * index.size(1) * B > 0:
        try:  # the kernel checks the index range in its one pass over it
            out = _bridge.call("gather_rows_coo", src.reshape(A * S, B), index, batches=A)
        except ValueError as e:
            _check_range(index, S, caller)  # the operators' own message for a bad index
            raise _rewrap(e, "gather_rows_coo", caller) from None
        return out.view(A, index.size(1), B)
    _check_range(index, S, caller)
    return _pick(src, index.unsqueeze(2), index.size(1)).contiguous()


gather_coo = torch.library.custom_op("edgewise::gather_coo", mutates_args=())(_gather_coo)


@gather_coo.register_fake
def _(src, index, caller):
    return src.new_empty((src.size(0), index.size(1), src.size(2)))


def _gather_coo_setup(ctx, inputs, output):
    ctx.caller = inputs[2]
    ctx.size = inputs[0].size(1)
    ctx.save_for_backward(inputs[1])


def _gather_coo_backward(ctx, grad):
    index = ctx.saved_tensors[0].unsqueeze(2)
    return scatter_reduce(grad.contiguous(), index, ctx.size, "sum", False, ctx.caller), None, None


gather_coo.register_autograd(_gather_coo_backward, setup_context=_gather_coo_setup)


# What the API calls: each operator's body itself where nothing would see the call
# (no gradient, trace or mode: _bridge.plain_call), else the registered operator.
# torch's dispatcher costs ~20 us a call, a quarter of a small scatter.
scatter_reduce = _bridge.direct(scatter_reduce, _scatter_reduce)
scatter_reduce_arg = _bridge.direct(scatter_reduce_arg, _scatter_reduce_arg)
segment_reduce = _bridge.direct(segment_reduce, _segment_reduce)
segment_reduce_arg = _bridge.direct(segment_reduce_arg, _segment_reduce_arg)
gather_csr = _bridge.direct(gather_csr, _gather_csr)
gather_coo = _bridge.direct(gather_coo, _gather_coo)
