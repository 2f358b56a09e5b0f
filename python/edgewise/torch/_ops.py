"""The edgewise kernels as torch.library custom operators (namespace ``edgewise``).

Each operator runs the binding through ``_bridge`` and has a fake (meta) kernel, so
torch.compile traces it without a graph break, and an autograd formula whose pieces
are themselves custom operators or plain torch ops. Operators take 2-D values
([rows, C]); the public functions in ``ops.py`` reshape. Min/max operators return
the engine's arg (-1 for an empty output row).
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import _bridge

_SUM_MEAN = ("sum", "mean")
_MIN_MAX = ("min", "max")
# Ops whose gradient needs the forward's values: their backward runs the engine's
# *_backward bindings on the saved input and output.
_FROM_FORWARD = ("mul", "var", "std")
_NO_ARG = _SUM_MEAN + _FROM_FORWARD


def _empty_pair(like, rows):
    """(values, arg) with zero columns (the engine needs C >= 1)."""
    return like.new_zeros((rows, 0)), like.new_zeros((rows, 0), dtype=torch.int64)


def _check_reduce(reduce, allowed, op):
    if reduce not in allowed:
        raise ValueError(f"{op}: reduce must be one of {', '.join(allowed)} (got {reduce!r})")


# --- segment_reduce: CSR-delimited rows --------------------------------------------------------


@torch.library.custom_op("edgewise::segment_reduce", mutates_args=())
def segment_reduce(src: Tensor, indptr: Tensor, reduce: str) -> Tensor:
    _check_reduce(reduce, _NO_ARG, "segment_reduce")
    if src.size(1) == 0:  # the engine needs C >= 1; nothing to reduce
        return src.new_zeros((indptr.size(0) - 1, 0))
    return _bridge.call("segment_reduce", src, indptr, op=reduce).to(src.device)


@segment_reduce.register_fake
def _(src, indptr, reduce):
    return src.new_empty((indptr.size(0) - 1, src.size(1)))


@torch.library.custom_op("edgewise::segment_reduce_backward", mutates_args=())
def segment_reduce_backward(src: Tensor, indptr: Tensor, out: Tensor, grad: Tensor, reduce: str) -> Tensor:
    if src.size(1) == 0:
        return torch.zeros_like(src)
    return _bridge.call("segment_reduce_backward", src, indptr, reduce, out, None, grad).to(src.device)


@segment_reduce_backward.register_fake
def _(src, indptr, out, grad, reduce):
    return torch.empty_like(src)


def _segment_reduce_backward(ctx, grad):
    if ctx.reduce in _FROM_FORWARD:
        src, indptr, out = ctx.saved_tensors
        return segment_reduce_backward(src, indptr, out, grad.contiguous(), ctx.reduce), None, None
    indptr = ctx.saved_tensors[0]
    lengths = indptr[1:] - indptr[:-1]
    if ctx.reduce == "mean":
        grad = grad / lengths.clamp(min=1).to(grad.dtype).unsqueeze(1)
    return torch.repeat_interleave(grad, lengths, dim=0, output_size=ctx.rows), None, None


def _segment_reduce_setup(ctx, inputs, output):
    src, indptr, reduce = inputs
    if reduce in _FROM_FORWARD:
        ctx.save_for_backward(src, indptr, output)
    else:
        ctx.save_for_backward(indptr)
    ctx.reduce = reduce
    ctx.rows = src.size(0)


segment_reduce.register_autograd(_segment_reduce_backward, setup_context=_segment_reduce_setup)


@torch.library.custom_op("edgewise::segment_reduce_arg", mutates_args=())
def segment_reduce_arg(src: Tensor, indptr: Tensor, reduce: str) -> Tuple[Tensor, Tensor]:
    _check_reduce(reduce, _MIN_MAX, "segment_reduce_arg")
    if src.size(1) == 0:
        return _empty_pair(src, indptr.size(0) - 1)
    out, arg = _bridge.call("segment_reduce", src, indptr, op=reduce, return_arg=True)
    return out.to(src.device), arg.to(src.device)


@segment_reduce_arg.register_fake
def _(src, indptr, reduce):
    shape = (indptr.size(0) - 1, src.size(1))
    return src.new_empty(shape), src.new_empty(shape, dtype=torch.int64)


def _route_by_arg(grad, arg, rows):
    """grad_src[arg[s, c], c] += grad[s, c]; arg -1 (empty) goes to a dropped extra row."""
    target = torch.where(arg < 0, torch.full_like(arg, rows), arg)
    grad_src = grad.new_zeros((rows + 1, grad.size(1)))
    return grad_src.scatter_add_(0, target, grad)[:rows]


def _arg_setup(ctx, inputs, output):
    ctx.save_for_backward(output[1])
    ctx.rows = inputs[0].size(0)


def _arg_backward(ctx, grad, grad_arg):
    return _route_by_arg(grad, ctx.saved_tensors[0], ctx.rows), None, None


segment_reduce_arg.register_autograd(_arg_backward, setup_context=_arg_setup)


# --- scatter_reduce: rows to the output its index names ----------------------------------------


@torch.library.custom_op("edgewise::scatter_reduce", mutates_args=())
def scatter_reduce(src: Tensor, index: Tensor, dim_size: int, reduce: str) -> Tensor:
    _check_reduce(reduce, _NO_ARG, "scatter_reduce")
    if src.size(1) == 0:
        return src.new_zeros((dim_size, 0))
    return _bridge.call("scatter_reduce", src, index, dim_size, op=reduce).to(src.device)


@scatter_reduce.register_fake
def _(src, index, dim_size, reduce):
    return src.new_empty((dim_size, src.size(1)))


@torch.library.custom_op("edgewise::scatter_reduce_backward", mutates_args=())
def scatter_reduce_backward(src: Tensor, index: Tensor, out: Tensor, grad: Tensor, reduce: str) -> Tensor:
    if src.size(1) == 0:
        return torch.zeros_like(src)
    return _bridge.call("scatter_reduce_backward", src, index, reduce, out, None, grad).to(src.device)


@scatter_reduce_backward.register_fake
def _(src, index, out, grad, reduce):
    return torch.empty_like(src)


def _scatter_reduce_setup(ctx, inputs, output):
    src, index, dim_size, reduce = inputs
    if reduce in _FROM_FORWARD:
        ctx.save_for_backward(index, src, output)
    else:
        ctx.save_for_backward(index)
    ctx.reduce = reduce
    ctx.dim_size = dim_size


def _scatter_reduce_backward(ctx, grad):
    if ctx.reduce in _FROM_FORWARD:
        index, src, out = ctx.saved_tensors
        return scatter_reduce_backward(src, index, out, grad.contiguous(), ctx.reduce), None, None, None
    index = ctx.saved_tensors[0]
    if ctx.reduce == "mean":
        counts = grad.new_zeros(ctx.dim_size).index_add_(0, index, grad.new_ones(index.size(0)))
        grad = grad / counts.clamp(min=1).unsqueeze(1)
    return grad.index_select(0, index), None, None, None


scatter_reduce.register_autograd(_scatter_reduce_backward, setup_context=_scatter_reduce_setup)


@torch.library.custom_op("edgewise::scatter_reduce_arg", mutates_args=())
def scatter_reduce_arg(src: Tensor, index: Tensor, dim_size: int, reduce: str) -> Tuple[Tensor, Tensor]:
    _check_reduce(reduce, _MIN_MAX, "scatter_reduce_arg")
    if src.size(1) == 0:
        return _empty_pair(src, dim_size)
    out, arg = _bridge.call("scatter_reduce", src, index, dim_size, op=reduce, return_arg=True)
    return out.to(src.device), arg.to(src.device)


@scatter_reduce_arg.register_fake
def _(src, index, dim_size, reduce):
    shape = (dim_size, src.size(1))
    return src.new_empty(shape), src.new_empty(shape, dtype=torch.int64)


def _scatter_arg_backward(ctx, grad, grad_arg):
    return _route_by_arg(grad, ctx.saved_tensors[0], ctx.rows), None, None, None


scatter_reduce_arg.register_autograd(_scatter_arg_backward, setup_context=_arg_setup)


# --- CSR structure of an edge list ---------------------------------------------------------------


@torch.library.custom_op("edgewise::csr_from_edge_index", mutates_args=())
def csr_from_edge_index(
    edge_index: Tensor, num_nodes: int
) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    """(offsets, sources, edge_ids) grouped by destination and (t_offsets, t_targets,
    t_edge_ids) grouped by source; edge_ids: input position of each CSR edge,
    t_edge_ids: CSR position of each transposed edge."""
    # Built on the host (once per graph; the Graph binding takes NumPy), then moved.
    ei = edge_index.detach().cpu().contiguous().numpy()
    by_dst = _bridge._edgewise.Graph(ei, num_nodes)
    by_src = _bridge._edgewise.Graph(ei[::-1], num_nodes)
    offsets, sources, edge_ids = (_bridge.from_engine(a) for a in (by_dst.offsets(), by_dst.sources(), by_dst.edge_ids()))
    t_offsets, t_targets, t_input_ids = (
        _bridge.from_engine(a) for a in (by_src.offsets(), by_src.sources(), by_src.edge_ids())
    )
    csr_position = torch.empty_like(edge_ids)
    csr_position[edge_ids] = torch.arange(edge_ids.numel(), dtype=edge_ids.dtype)
    t_edge_ids = csr_position[t_input_ids]
    device = edge_index.device
    return tuple(t.to(device) for t in (offsets, sources, edge_ids, t_offsets, t_targets, t_edge_ids))


@csr_from_edge_index.register_fake
def _(edge_index, num_nodes):
    E = edge_index.size(1)
    i64 = dict(dtype=torch.int64)
    return (
        edge_index.new_empty(num_nodes + 1, **i64),
        edge_index.new_empty(E, dtype=torch.int32),
        edge_index.new_empty(E, **i64),
        edge_index.new_empty(num_nodes + 1, **i64),
        edge_index.new_empty(E, dtype=torch.int32),
        edge_index.new_empty(E, **i64),
    )


# --- spmm: fused gather-reduce over a CSR ------------------------------------------------------


@torch.library.custom_op("edgewise::spmm", mutates_args=())
def spmm(
    offsets: Tensor,
    indices: Tensor,
    x: Tensor,
    weight: Optional[Tensor],
    t_offsets: Tensor,
    t_indices: Tensor,
    t_edge_ids: Tensor,
    reduce: str,
) -> Tensor:
    _check_reduce(reduce, _NO_ARG, "spmm")
    if x.size(1) == 0:
        return x.new_zeros((offsets.size(0) - 1, 0))
    return _bridge.call("spmm", offsets, indices, x, weights=weight, op=reduce).to(x.device)


@spmm.register_fake
def _(offsets, indices, x, weight, t_offsets, t_indices, t_edge_ids, reduce):
    return x.new_empty((offsets.size(0) - 1, x.size(1)))


@torch.library.custom_op("edgewise::spmm_backward_x", mutates_args=())
def spmm_backward_x(
    t_offsets: Tensor,
    t_indices: Tensor,
    t_edge_ids: Tensor,
    grad_out: Tensor,
    weight: Optional[Tensor],
    offsets: Tensor,
    reduce: str,
) -> Tensor:
    if grad_out.size(1) == 0:
        return grad_out.new_zeros((t_offsets.size(0) - 1, 0))
    return _bridge.call(
        "spmm_backward", t_offsets, t_indices, grad_out, t_edge_ids=t_edge_ids, weights=weight, op=reduce,
        offsets=offsets,
    ).to(grad_out.device)


@spmm_backward_x.register_fake
def _(t_offsets, t_indices, t_edge_ids, grad_out, weight, offsets, reduce):
    return grad_out.new_empty((t_offsets.size(0) - 1, grad_out.size(1)))


@torch.library.custom_op("edgewise::spmm_backward_weight", mutates_args=())
def spmm_backward_weight(
    offsets: Tensor, indices: Tensor, x: Tensor, grad_out: Tensor, reduce: str, arg: Optional[Tensor]
) -> Tensor:
    if x.size(1) == 0:
        return x.new_zeros(indices.size(0))
    return _bridge.call("spmm_weight_backward", offsets, indices, x, grad_out, op=reduce, arg=arg).to(x.device)


@spmm_backward_weight.register_fake
def _(offsets, indices, x, grad_out, reduce, arg):
    return x.new_empty(indices.size(0))


@torch.library.custom_op("edgewise::spmm_full_backward", mutates_args=())
def spmm_full_backward(
    offsets: Tensor,
    indices: Tensor,
    x: Tensor,
    weight: Optional[Tensor],
    out: Tensor,
    grad_out: Tensor,
    t_offsets: Tensor,
    t_edge_ids: Tensor,
    reduce: str,
    weight_grad: bool,
) -> Tuple[Tensor, Tensor]:
    """(grad_x, grad_w) for any op from the forward (grad_w empty unless weight_grad)."""
    if x.size(1) == 0:
        return torch.zeros_like(x), x.new_zeros(indices.size(0) if weight_grad else 0)
    grad_x, grad_w = _bridge.call(
        "spmm_full_backward", offsets, indices, x, weight, reduce, out, None, grad_out, t_offsets, t_edge_ids,
        weight_grad=weight_grad,
    )
    grad_w = grad_w.to(x.device) if weight_grad else x.new_zeros(0)
    return grad_x.to(x.device), grad_w


@spmm_full_backward.register_fake
def _(offsets, indices, x, weight, out, grad_out, t_offsets, t_edge_ids, reduce, weight_grad):
    return torch.empty_like(x), x.new_empty(indices.size(0) if weight_grad else 0)


def _spmm_setup(ctx, inputs, output):
    offsets, indices, x, weight, t_offsets, t_indices, t_edge_ids, reduce = inputs
    ctx.reduce = reduce
    ctx.has_weight = weight is not None
    ctx.save_for_backward(offsets, indices, x, weight, t_offsets, t_indices, t_edge_ids,
                          output if reduce in _FROM_FORWARD else None)


def _spmm_backward(ctx, grad):
    offsets, indices, x, weight, t_offsets, t_indices, t_edge_ids, out = ctx.saved_tensors
    grad = grad.contiguous()
    grad_x = grad_w = None
    if ctx.reduce in _FROM_FORWARD:
        want_w = ctx.has_weight and ctx.needs_input_grad[3]
        gx, gw = spmm_full_backward(offsets, indices, x, weight, out, grad, t_offsets, t_edge_ids, ctx.reduce, want_w)
        return (None, None, gx if ctx.needs_input_grad[2] else None, gw if want_w else None,
                None, None, None, None)
    if ctx.needs_input_grad[2]:
        grad_x = spmm_backward_x(t_offsets, t_indices, t_edge_ids, grad, weight, offsets, ctx.reduce)
    if ctx.has_weight and ctx.needs_input_grad[3]:
        grad_w = spmm_backward_weight(offsets, indices, x, grad, ctx.reduce, None)
    return None, None, grad_x, grad_w, None, None, None, None


spmm.register_autograd(_spmm_backward, setup_context=_spmm_setup)


@torch.library.custom_op("edgewise::spmm_arg", mutates_args=())
def spmm_arg(
    offsets: Tensor,
    indices: Tensor,
    x: Tensor,
    weight: Optional[Tensor],
    t_offsets: Tensor,
    t_indices: Tensor,
    t_edge_ids: Tensor,
    reduce: str,
) -> Tuple[Tensor, Tensor]:
    _check_reduce(reduce, _MIN_MAX, "spmm_arg")
    if x.size(1) == 0:
        return _empty_pair(x, offsets.size(0) - 1)
    out, arg = _bridge.call("spmm", offsets, indices, x, weights=weight, op=reduce, return_arg=True)
    return out.to(x.device), arg.to(x.device)


@spmm_arg.register_fake
def _(offsets, indices, x, weight, t_offsets, t_indices, t_edge_ids, reduce):
    shape = (offsets.size(0) - 1, x.size(1))
    return x.new_empty(shape), x.new_empty(shape, dtype=torch.int64)


@torch.library.custom_op("edgewise::spmm_arg_backward_x", mutates_args=())
def spmm_arg_backward_x(
    t_offsets: Tensor, t_indices: Tensor, t_edge_ids: Tensor, grad_out: Tensor, arg: Tensor, weight: Optional[Tensor]
) -> Tensor:
    if grad_out.size(1) == 0:
        return grad_out.new_zeros((t_offsets.size(0) - 1, 0))
    return _bridge.call("spmm_arg_backward", t_offsets, t_indices, t_edge_ids, grad_out, arg, weights=weight).to(
        grad_out.device
    )


@spmm_arg_backward_x.register_fake
def _(t_offsets, t_indices, t_edge_ids, grad_out, arg, weight):
    return grad_out.new_empty((t_offsets.size(0) - 1, grad_out.size(1)))


def _spmm_arg_setup(ctx, inputs, output):
    offsets, indices, x, weight, t_offsets, t_indices, t_edge_ids, reduce = inputs
    ctx.reduce = reduce
    ctx.has_weight = weight is not None
    ctx.save_for_backward(offsets, indices, x, weight, t_offsets, t_indices, t_edge_ids, output[1])


def _spmm_arg_backward(ctx, grad, grad_arg):
    offsets, indices, x, weight, t_offsets, t_indices, t_edge_ids, arg = ctx.saved_tensors
    grad = grad.contiguous()
    grad_x = grad_w = None
    if ctx.needs_input_grad[2]:
        grad_x = spmm_arg_backward_x(t_offsets, t_indices, t_edge_ids, grad, arg, weight)
    if ctx.has_weight and ctx.needs_input_grad[3]:
        grad_w = spmm_backward_weight(offsets, indices, x, grad, ctx.reduce, arg)
    return None, None, grad_x, grad_w, None, None, None, None


spmm_arg.register_autograd(_spmm_arg_backward, setup_context=_spmm_arg_setup)


# --- dropout: the engine's Philox mask ---------------------------------------------------------


@torch.library.custom_op("edgewise::dropout", mutates_args=())
def dropout(x: Tensor, p: float, seed: Tensor) -> Tensor:
    """Inverted dropout whose mask is a pure function of (seed, element index)."""
    return _bridge.call("dropout", x, p, int(seed.item()) & (2**64 - 1)).to(x.device)


@dropout.register_fake
def _(x, p, seed):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _dropout_setup(ctx, inputs, output):
    ctx.p = inputs[1]
    ctx.save_for_backward(inputs[2])


def _dropout_backward(ctx, grad):
    return dropout(grad.contiguous(), ctx.p, ctx.saved_tensors[0]), None, None


dropout.register_autograd(_dropout_backward, setup_context=_dropout_setup)
