"""The fused spmm kernels and the CSR builder as torch.library operators (namespace
``edgewise``), each with a fake kernel and an autograd formula.

Tie rules of min/max (TieRule in the kernels): ``spmm`` with min/max shares an
output's gradient evenly among the messages equal to it, one more share where the
output is 0 (``split_zero_base``: torch's scatter_reduce amax/amin with
include_self=False onto zeros, i.e. PyG's max aggregation, which edgewise.torch.nn
mirrors); ``spmm_arg`` returns the arg and routes the gradient through it
(``first``). Neither runs a second forward pass.
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import _bridge

_SUM_MEAN = ("sum", "mean")
_MIN_MAX = ("min", "max")
# Ops whose gradient needs the forward's values: their backward runs the engine's
# spmm_full_backward on the saved input and output (min/max: split ties).
_FROM_FORWARD = ("mul", "var", "std") + _MIN_MAX
_ALL = _SUM_MEAN + _FROM_FORWARD


def _empty_pair(like, rows):
    """(values, arg) with zero columns (the engine needs C >= 1)."""
    return like.new_zeros((rows, 0)), like.new_zeros((rows, 0), dtype=torch.int64)


def _check_reduce(reduce, allowed, op):
    if reduce not in allowed:
        raise ValueError(f"{op}: reduce must be one of {', '.join(allowed)} (got {reduce!r})")


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
    graph = _bridge._edgewise.Graph(ei, num_nodes)
    parts = (graph.offsets(), graph.sources(), graph.edge_ids(), *graph.transposed())
    device = edge_index.device
    return tuple(_bridge.from_engine(a).to(device) for a in parts)


def csr_by_destination(edge_index: Tensor, num_nodes: int):
    """Outside torch.compile: (the engine's graph, (offsets, sources, edge_ids)) as
    csr_from_edge_index gives them; transpose_of(graph, device) gives the rest."""
    graph = _bridge._edgewise.Graph(edge_index.detach().cpu().contiguous().numpy(), num_nodes)
    device = edge_index.device
    return graph, tuple(_bridge.from_engine(a).to(device) for a in (graph.offsets(), graph.sources(),
                                                                     graph.edge_ids()))


def transpose_of(graph, device) -> Tuple[Tensor, Tensor, Tensor]:
    """(t_offsets, t_targets, t_edge_ids) of an engine graph from csr_by_destination."""
    return tuple(_bridge.from_engine(a).to(device) for a in graph.transposed())


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
    _check_reduce(reduce, _ALL, "spmm")
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
    """(grad_x, grad_w) for any op from the forward (grad_w empty unless weight_grad);
    min/max split ties as PyG (split_zero_base; the forward's output is read, no arg)."""
    if x.size(1) == 0:
        return torch.zeros_like(x), x.new_zeros(indices.size(0) if weight_grad else 0)
    grad_x, grad_w = _bridge.call(
        "spmm_full_backward", offsets, indices, x, weight, reduce, out, None, grad_out, t_offsets, t_edge_ids,
        weight_grad=weight_grad, tie_rule="split_zero_base",
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


@torch.library.custom_op("edgewise::spmm_and_rows", mutates_args=())
def spmm_and_rows(
    offsets: Tensor,
    indices: Tensor,
    x: Tensor,
    weight: Optional[Tensor],
    t_offsets: Tensor,
    t_indices: Tensor,
    t_edge_ids: Tensor,
    reduce: str,
    rows: int,
) -> Tuple[Tensor, Tensor]:
    """(spmm sum / mean of x, a copy of x[:rows]). For a layer that also reads the
    first rows of its input (a bipartite layer's targets, PyG's trimmed x[:n_dst]):
    the backward writes both gradients into one [N, C] tensor, where the slice and the
    spmm would each give one and autograd would add them."""
    if reduce not in _SUM_MEAN:
        raise ValueError(f"spmm_and_rows: reduce must be sum or mean (got {reduce!r})")
    return spmm(offsets, indices, x, weight, t_offsets, t_indices, t_edge_ids, reduce), x[:rows].clone()


@spmm_and_rows.register_fake
def _(offsets, indices, x, weight, t_offsets, t_indices, t_edge_ids, reduce, rows):
    return x.new_empty((offsets.size(0) - 1, x.size(1))), x.new_empty((rows, x.size(1)))


def _spmm_and_rows_setup(ctx, inputs, output):
    offsets, indices, x, weight, t_offsets, t_indices, t_edge_ids, reduce, rows = inputs
    ctx.reduce, ctx.rows, ctx.has_weight = reduce, rows, weight is not None
    ctx.save_for_backward(offsets, indices, x if ctx.has_weight else None, weight, t_offsets, t_indices, t_edge_ids)


def _spmm_and_rows_backward(ctx, grad, grad_rows):
    offsets, indices, x, weight, t_offsets, t_indices, t_edge_ids = ctx.saved_tensors
    grad_x = grad_w = None
    if ctx.needs_input_grad[2]:
        if grad is None:
            grad_x = grad_rows.new_zeros((t_offsets.size(0) - 1, grad_rows.size(1)))
        else:
            grad_x = spmm_backward_x(t_offsets, t_indices, t_edge_ids, grad.contiguous(), weight, offsets, ctx.reduce)
        if grad_rows is not None:
            grad_x[: ctx.rows] += grad_rows
    if ctx.has_weight and ctx.needs_input_grad[3] and grad is not None:
        grad_w = spmm_backward_weight(offsets, indices, x, grad.contiguous(), ctx.reduce, None)
    return None, None, grad_x, grad_w, None, None, None, None, None


spmm_and_rows.register_autograd(_spmm_and_rows_backward, setup_context=_spmm_and_rows_setup)


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
