"""The engine's Philox dropout as a torch.library operator (``edgewise::dropout``)."""

import torch
from torch import Tensor

from . import _bridge


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
