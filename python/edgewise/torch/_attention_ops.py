"""The edge-level kernels of attention layers as torch.library operators (namespace ``edgewise``).

sddmm (dot and additive forms), edge_softmax and the attention-weighted aggregation,
each with a fake (meta) kernel and an autograd formula built from these same
operators. Edge tensors ([E, H]) are in the CSR order of ``csr_from_edge_index``;
node tensors are 2-D ([rows, H] or [rows, H*D]); ``ops.py`` holds the public,
shape-friendly functions.
"""

from typing import Optional

import torch
from torch import Tensor

from . import _bridge


def _edges(offsets):
    return offsets.size(0) - 1


# --- edge_gather_sum: the edge -> node weighted sum every backward here needs ------------------


@torch.library.custom_op("edgewise::edge_gather_sum", mutates_args=())
def edge_gather_sum(
    offsets: Tensor, w: Tensor, indices: Optional[Tensor], x: Optional[Tensor], edge_ids: Optional[Tensor]
) -> Tensor:
    """out[v, h*D + d] = sum over k in row v of w[id_k, h] * x[indices[k], h*D + d] (x absent: 1, D = 1)."""
    cols = w.size(1) if x is None else x.size(1)
    if w.size(0) == 0 or (indices is not None and indices.size(0) == 0):  # no edges: every row sums to 0
        return w.new_zeros((_edges(offsets), cols))
    return _bridge.call("edge_gather_sum", offsets, w, indices=indices, x=x, edge_ids=edge_ids).to(w.device)


@edge_gather_sum.register_fake
def _(offsets, w, indices, x, edge_ids):
    return w.new_empty((offsets.size(0) - 1, w.size(1) if x is None else x.size(1)))


# --- sddmm, additive form: logits[e, h] = a[src_e, h] + b[dst_e, h] ----------------------------


@torch.library.custom_op("edgewise::sddmm_add", mutates_args=())
def sddmm_add(
    offsets: Tensor, indices: Tensor, a: Tensor, b: Tensor, t_offsets: Tensor, t_indices: Tensor, t_edge_ids: Tensor
) -> Tensor:
    if indices.size(0) == 0:
        return a.new_zeros((0, a.size(1)))
    return _bridge.call("sddmm_add", offsets, indices, a, b).to(a.device)


@sddmm_add.register_fake
def _(offsets, indices, a, b, t_offsets, t_indices, t_edge_ids):
    return a.new_empty((indices.size(0), a.size(1)))


def _sddmm_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs[:4], *inputs[-3:])


def _sddmm_add_backward(ctx, grad):
    offsets, indices, a, b, t_offsets, t_indices, t_edge_ids = ctx.saved_tensors
    grad = grad.contiguous()
    grad_a = grad_b = None
    if ctx.needs_input_grad[2]:  # each source sums its outgoing edges: the transposed CSR
        grad_a = edge_gather_sum(t_offsets, grad, None, None, t_edge_ids)
    if ctx.needs_input_grad[3]:
        grad_b = edge_gather_sum(offsets, grad, None, None, None)
    return None, None, grad_a, grad_b, None, None, None


sddmm_add.register_autograd(_sddmm_add_backward, setup_context=_sddmm_setup)


# --- sddmm, dot form: out[e, h] = x[src_e, head h] . y[dst_e, head h] --------------------------


@torch.library.custom_op("edgewise::sddmm_dot", mutates_args=())
def sddmm_dot(
    offsets: Tensor,
    indices: Tensor,
    x: Tensor,
    y: Tensor,
    heads: int,
    t_offsets: Tensor,
    t_indices: Tensor,
    t_edge_ids: Tensor,
) -> Tensor:
    if indices.size(0) == 0:
        return x.new_zeros((0, heads))
    return _bridge.call("sddmm_dot", offsets, indices, x, y, heads=heads).to(x.device)


@sddmm_dot.register_fake
def _(offsets, indices, x, y, heads, t_offsets, t_indices, t_edge_ids):
    return x.new_empty((indices.size(0), heads))


def _sddmm_dot_setup(ctx, inputs, output):
    offsets, indices, x, y, heads, t_offsets, t_indices, t_edge_ids = inputs
    ctx.save_for_backward(offsets, indices, x, y, t_offsets, t_indices, t_edge_ids)


def _sddmm_dot_backward(ctx, grad):
    offsets, indices, x, y, t_offsets, t_indices, t_edge_ids = ctx.saved_tensors
    grad = grad.contiguous()
    grad_x = grad_y = None
    if ctx.needs_input_grad[2]:
        grad_x = edge_gather_sum(t_offsets, grad, t_indices, y, t_edge_ids)
    if ctx.needs_input_grad[3]:
        grad_y = edge_gather_sum(offsets, grad, indices, x, None)
    return None, None, grad_x, grad_y, None, None, None, None


sddmm_dot.register_autograd(_sddmm_dot_backward, setup_context=_sddmm_dot_setup)


# --- edge_softmax: softmax over each destination's incoming edges ------------------------------


@torch.library.custom_op("edgewise::edge_softmax", mutates_args=())
def edge_softmax(offsets: Tensor, scores: Tensor) -> Tensor:
    if scores.size(0) == 0:
        return scores.new_empty(scores.shape)
    return _bridge.call("edge_softmax", offsets, scores).to(scores.device)


@edge_softmax.register_fake
def _(offsets, scores):
    return scores.new_empty(scores.shape)


@torch.library.custom_op("edgewise::edge_softmax_backward", mutates_args=())
def edge_softmax_backward(offsets: Tensor, out: Tensor, grad_out: Tensor) -> Tensor:
    if out.size(0) == 0:
        return out.new_empty(out.shape)
    return _bridge.call("edge_softmax_backward", offsets, out, grad_out).to(out.device)


@edge_softmax_backward.register_fake
def _(offsets, out, grad_out):
    return out.new_empty(out.shape)


def _edge_softmax_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], output)


def _edge_softmax_grad(ctx, grad):
    offsets, out = ctx.saved_tensors
    return None, edge_softmax_backward(offsets, out, grad.contiguous())


edge_softmax.register_autograd(_edge_softmax_grad, setup_context=_edge_softmax_setup)


# --- attention aggregation: out[v, head h] = sum over edges (u -> v) of alpha[e, h] * x[u, head h]


@torch.library.custom_op("edgewise::attention_aggregate", mutates_args=())
def attention_aggregate(
    offsets: Tensor,
    indices: Tensor,
    alpha: Tensor,
    x: Tensor,
    t_offsets: Tensor,
    t_indices: Tensor,
    t_edge_ids: Tensor,
) -> Tensor:
    return edge_gather_sum(offsets, alpha, indices, x, None)


@attention_aggregate.register_fake
def _(offsets, indices, alpha, x, t_offsets, t_indices, t_edge_ids):
    return x.new_empty((offsets.size(0) - 1, x.size(1)))


def _aggregate_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _aggregate_backward(ctx, grad):
    offsets, indices, alpha, x, t_offsets, t_indices, t_edge_ids = ctx.saved_tensors
    grad = grad.contiguous()
    grad_alpha = grad_x = None
    if ctx.needs_input_grad[2]:
        grad_alpha = sddmm_dot(offsets, indices, x, grad, alpha.size(1), t_offsets, t_indices, t_edge_ids)
    if ctx.needs_input_grad[3]:
        grad_x = edge_gather_sum(t_offsets, alpha, t_indices, grad, t_edge_ids)
    return None, None, grad_alpha, grad_x, None, None, None


attention_aggregate.register_autograd(_aggregate_backward, setup_context=_aggregate_setup)
