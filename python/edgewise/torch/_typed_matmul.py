"""Typed dense products as torch.library operators (namespace ``edgewise``), each with
a fake kernel and an autograd formula, under pyg-lib's names and signatures:

- ``segment_matmul(inputs [N, K], ptr [T + 1], other [T, K, M]) -> [N, M]``: rows
  ``ptr[t]:ptr[t+1]`` of inputs times ``other[t]`` (PyG's HeteroLinear, RGCNConv);
- ``grouped_matmul(inputs: list of [N_i, K_i], others: list of [K_i, M_i], biases=None)
  -> list of [N_i, M_i]``: independent products in one call (HeteroDictLinear).

Both run every product in one kernel call (the CPU kernel shares one thread team
among all types' blocks; CUDA: one grouped cuBLAS call). ``ptr`` is read on the host
(a CUDA ptr is copied once). float32, float64 and bfloat16 (accumulated in float, each
output rounded once, as ``torch.matmul`` does) run on Edgewise; float16 falls back to a
loop of ``torch.matmul``.
"""

from typing import List, Optional

import numpy as np
import torch
from torch import Tensor

from .. import _edgewise
from . import _bridge, _checks

_KERNEL_DTYPES = (torch.float32, torch.float64, torch.bfloat16)


def _host_ptr(ptr: Tensor) -> Tensor:
    return ptr.detach().to("cpu", torch.int64).contiguous()


# --- segment_matmul -------------------------------------------------------------------------------


@torch.library.custom_op("edgewise::segment_matmul", mutates_args=())
def _segment_matmul(inputs: Tensor, ptr: Tensor, other: Tensor) -> Tensor:
    return _bridge.call("segment_matmul", inputs, _host_ptr(ptr), other).to(inputs.device)


@_segment_matmul.register_fake
def _(inputs, ptr, other):
    return inputs.new_empty((inputs.size(0), other.size(2)))


@torch.library.custom_op("edgewise::segment_matmul_input_grad", mutates_args=())
def _segment_matmul_input_grad(grad: Tensor, ptr: Tensor, other: Tensor) -> Tensor:
    """grad @ other[t]^T per segment (other [T, K, M], grad [N, M] -> [N, K])."""
    return _bridge.call("segment_matmul", grad, _host_ptr(ptr), other, transpose_weight=True).to(grad.device)


@_segment_matmul_input_grad.register_fake
def _(grad, ptr, other):
    return grad.new_empty((grad.size(0), other.size(1)))


@torch.library.custom_op("edgewise::segment_matmul_weight_grad", mutates_args=())
def _segment_matmul_weight_grad(inputs: Tensor, ptr: Tensor, grad: Tensor) -> Tensor:
    return _bridge.call("segment_matmul_weight_grad", inputs, _host_ptr(ptr), grad).to(inputs.device)


@_segment_matmul_weight_grad.register_fake
def _(inputs, ptr, grad):
    return inputs.new_empty((ptr.size(0) - 1, inputs.size(1), grad.size(1)))


def _segment_setup(ctx, inputs, output):
    x, ptr, other = inputs
    ctx.save_for_backward(x, ptr, other)


def _segment_backward(ctx, grad):
    x, ptr, other = ctx.saved_tensors
    grad = grad.contiguous()
    grad_x = _segment_matmul_input_grad(grad, ptr, other) if ctx.needs_input_grad[0] else None
    grad_w = _segment_matmul_weight_grad(x, ptr, grad) if ctx.needs_input_grad[2] else None
    return grad_x, None, grad_w


_segment_matmul.register_autograd(_segment_backward, setup_context=_segment_setup)


def _check_segment_args(inputs, ptr, other, op: str):
    inputs = _checks.tensor(inputs, "inputs", op)
    ptr = _checks.tensor(ptr, "ptr", op)
    other = _checks.tensor(other, "other", op)
    if inputs.dim() != 2:
        raise ValueError(f"{op}: inputs must be 2-D [N, K] (got shape {tuple(inputs.shape)})")
    if other.dim() != 3:
        raise ValueError(f"{op}: other must be 3-D [T, K, M] (got shape {tuple(other.shape)})")
    if ptr.dim() != 1 or ptr.dtype.is_floating_point or ptr.dtype.is_complex or ptr.dtype == torch.bool:
        raise ValueError(f"{op}: ptr must be a 1-D integer tensor [T + 1] (got shape {tuple(ptr.shape)}, "
                         f"dtype {ptr.dtype})")
    if ptr.numel() != other.size(0) + 1:
        raise ValueError(f"{op}: ptr must have T + 1 = {other.size(0) + 1} elements for other's T = "
                         f"{other.size(0)} types (got {ptr.numel()})")
    if other.size(1) != inputs.size(1):
        raise ValueError(f"{op}: other must be [T, K, M] with K = inputs.size(1) = {inputs.size(1)} "
                         f"(got shape {tuple(other.shape)})")
    if other.dtype != inputs.dtype:
        raise ValueError(f"{op}: other has dtype {other.dtype} but inputs has {inputs.dtype} (never cast)")
    _checks.same_device(other, "other", inputs, op, "inputs")
    return inputs, ptr, other


def _check_ptr_values(ptr: Tensor, rows: int, op: str) -> Tensor:
    host = _host_ptr(ptr)
    if torch.compiler.is_compiling() or host.numel() == 0:
        return host
    if int(host[0]) != 0:
        raise ValueError(f"{op}: ptr[0] must be 0 (got {int(host[0])})")
    if host.numel() > 1 and bool((host[1:] < host[:-1]).any()):
        t = int(torch.nonzero(host[1:] < host[:-1])[0]) + 1
        raise ValueError(f"{op}: ptr must be nondecreasing (ptr[{t}] = {int(host[t])} < ptr[{t - 1}] = "
                         f"{int(host[t - 1])})")
    if int(host[-1]) != rows:
        raise ValueError(f"{op}: ptr[-1] ({int(host[-1])}) must equal inputs.size(0) ({rows})")
    return host


def segment_matmul(inputs: Tensor, ptr: Tensor, other: Tensor) -> Tensor:
    """out[ptr[t]:ptr[t+1]] = inputs[ptr[t]:ptr[t+1]] @ other[t] (pyg-lib's segment_matmul).

    inputs: [N, K]; ptr: integer [T + 1] (0 first, nondecreasing, N last; best on the
    CPU); other: [T, K, M] of inputs' dtype and device. Differentiable in inputs and
    other. A bad argument raises ValueError naming it.
    """
    op = "segment_matmul"
    _bridge.refuse_tangents(op, inputs, other)
    inputs, ptr, other = _check_segment_args(inputs, ptr, other, op)
    host = _check_ptr_values(ptr, inputs.size(0), op)
    if inputs.dtype not in _KERNEL_DTYPES or other.size(0) == 0:
        bounds = host.tolist()
        parts = [inputs[bounds[t]:bounds[t + 1]] @ other[t] for t in range(other.size(0))]
        return torch.cat(parts) if parts else inputs.new_empty((0, other.size(2)))
    return _segment_matmul(inputs.contiguous(), host, other.contiguous())


# --- grouped_matmul -------------------------------------------------------------------------------


def _grouped_call(inputs: List[Tensor], others: List[Tensor], transpose_a: bool, transpose_b: bool) -> List[Tensor]:
    """op(inputs[i]) @ op(others[i]) through the binding. Contiguous CPU tensors go by
    address (outputs allocated here): converting a few hundred small tensors to and
    from the binding one by one cost more than multiplying them."""
    if not inputs:
        return []
    if inputs[0].device.type != "cpu" or not all(t.is_contiguous() for t in inputs + others):
        device = inputs[0].device
        return [t.to(device) for t in _bridge.call_list("grouped_matmul", inputs, others, transpose_a=transpose_a,
                                                        transpose_b=transpose_b)]
    shapes, outs = [], []
    for a, b in zip(inputs, others):
        m, k = (a.size(1), a.size(0)) if transpose_a else (a.size(0), a.size(1))
        n = b.size(0) if transpose_b else b.size(1)
        shapes.append((m, n, k))
        outs.append(torch.empty((m, n), dtype=a.dtype))
    addresses = np.array([(a.data_ptr(), b.data_ptr(), o.data_ptr()) for a, b, o in zip(inputs, others, outs)],
                         dtype=np.int64)
    _edgewise.grouped_matmul_at(addresses, np.array(shapes, dtype=np.int64), str(inputs[0].dtype)[6:],
                                transpose_a=transpose_a, transpose_b=transpose_b)
    return outs


@torch.library.custom_op("edgewise::grouped_matmul", mutates_args=())
def _grouped_matmul(inputs: List[Tensor], others: List[Tensor]) -> List[Tensor]:
    return _grouped_call(inputs, others, False, False)


@_grouped_matmul.register_fake
def _(inputs, others):
    return [a.new_empty((a.size(0), b.size(1))) for a, b in zip(inputs, others)]


@torch.library.custom_op("edgewise::grouped_matmul_transposed", mutates_args=())
def _grouped_matmul_transposed(inputs: List[Tensor], others: List[Tensor], transpose_a: bool,
                               transpose_b: bool) -> List[Tensor]:
    """op(inputs[i]) @ op(others[i]): the gradients of grouped_matmul."""
    return _grouped_call(inputs, others, transpose_a, transpose_b)


@_grouped_matmul_transposed.register_fake
def _(inputs, others, transpose_a, transpose_b):
    return [a.new_empty((a.size(1) if transpose_a else a.size(0), b.size(0) if transpose_b else b.size(1)))
            for a, b in zip(inputs, others)]


def _grouped_setup(ctx, inputs, output):
    xs, ws = inputs
    ctx.count = len(xs)
    ctx.save_for_backward(*xs, *ws)


def _grouped_backward(ctx, grads):
    saved = ctx.saved_tensors
    xs, ws = list(saved[: ctx.count]), list(saved[ctx.count:])
    # An output that took no part in the loss has no gradient: zeros of its shape.
    grads = [g.contiguous() if g is not None else x.new_zeros((x.size(0), w.size(1)))
             for g, x, w in zip(grads, xs, ws)]
    grad_x = _grouped_matmul_transposed(grads, ws, False, True) if ctx.needs_input_grad[0] else None
    grad_w = _grouped_matmul_transposed(xs, grads, True, False) if ctx.needs_input_grad[1] else None
    return grad_x, grad_w


_grouped_matmul.register_autograd(_grouped_backward, setup_context=_grouped_setup)


def grouped_matmul(inputs: List[Tensor], others: List[Tensor],
                   biases: Optional[List[Optional[Tensor]]] = None) -> List[Tensor]:
    """[inputs[i] @ others[i] (+ biases[i])] for every i, in one call (pyg-lib's grouped_matmul).

    inputs: [N_i, K_i]; others: [K_i, M_i], one dtype and device for all; biases:
    None or one [M_i] (or None) per product. Differentiable in every tensor. A bad
    argument raises ValueError naming it (``inputs[3]``).
    """
    op = "grouped_matmul"
    _bridge.refuse_tangents(op, inputs, others, biases or [])
    inputs, others = list(inputs), list(others)
    if len(inputs) != len(others):
        raise ValueError(f"{op}: inputs and others must have one length (got {len(inputs)} and {len(others)})")
    if biases is not None and len(biases) != len(inputs):
        raise ValueError(f"{op}: biases must have one entry per product ({len(inputs)}; got {len(biases)})")
    if not inputs:
        return []
    if not _all_chain(inputs, others):
        _name_the_bad_product(inputs, others, op)
    if inputs[0].dtype in _KERNEL_DTYPES:
        outs = _grouped_matmul([a.contiguous() for a in inputs], [b.contiguous() for b in others])
    else:
        outs = [a @ b for a, b in zip(inputs, others)]
    if biases is None:
        return list(outs)
    return [out if bias is None else out + bias for out, bias in zip(outs, biases)]


def _all_chain(inputs: List[Tensor], others: List[Tensor]) -> bool:
    """Whether every product is well formed: one pass without building messages (a few
    hundred products are checked in the time of one)."""
    dtype, device = getattr(inputs[0], "dtype", None), getattr(inputs[0], "device", None)
    if getattr(device, "type", None) not in ("cpu", "cuda"):
        return False
    return all(isinstance(a, Tensor) and isinstance(b, Tensor) and a.dim() == 2 and b.dim() == 2
               and a.size(1) == b.size(0) and a.dtype == dtype and b.dtype == dtype and a.device == device
               and b.device == device for a, b in zip(inputs, others))


def _name_the_bad_product(inputs: List[Tensor], others: List[Tensor], op: str) -> None:
    """Raises the ValueError naming the first bad product (_all_chain said there is one)."""
    for i, (a, b) in enumerate(zip(inputs, others)):
        a = _checks.tensor(a, f"inputs[{i}]", op)
        b = _checks.tensor(b, f"others[{i}]", op)
        if a.dim() != 2 or b.dim() != 2:
            raise ValueError(f"{op}: inputs[{i}] and others[{i}] must be 2-D (got shapes {tuple(a.shape)} and "
                             f"{tuple(b.shape)})")
        if a.size(1) != b.size(0):
            raise ValueError(f"{op}: inputs[{i}] [{a.size(0)}, {a.size(1)}] and others[{i}] [{b.size(0)}, "
                             f"{b.size(1)}] do not chain")
        for name, t in ((f"inputs[{i}]", a), (f"others[{i}]", b)):
            if t.dtype != inputs[0].dtype:
                raise ValueError(f"{op}: {name} has dtype {t.dtype} but inputs[0] has {inputs[0].dtype} "
                                 f"(never cast)")
            _checks.same_device(t, name, inputs[0], op, "inputs[0]")
    raise AssertionError(f"{op}: _all_chain and _name_the_bad_product disagree")


__all__ = ["grouped_matmul", "segment_matmul"]
