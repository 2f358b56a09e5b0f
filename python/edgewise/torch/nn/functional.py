"""Functional pieces of edgewise.torch.nn."""

import torch
from torch import Tensor

from .. import _bridge, _dropout_op


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Inverted dropout with the engine's vectorised Philox mask (float32).

    Same contract as torch.nn.functional.dropout: identity when not training or
    p == 0, zeros when p == 1. The seed of each call is drawn from torch's global
    generator (so torch.manual_seed makes runs repeatable) and the backward pass
    regenerates the mask from it instead of storing one. Other dtypes fall back to
    torch's dropout, and so do tensors off the CPU (the binding takes host arrays).
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: p must lie in [0, 1] (got {p})")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    if x.dtype != torch.float32 or x.device.type != "cpu":
        # The dropout binding takes host float32 arrays only.
        return torch.nn.functional.dropout(x, p, training)
    if _bridge.carries_tangent(x):  # torch's dropout has a forward-mode formula; ours has none
        return torch.nn.functional.dropout(x, p, training)
    seed = torch.randint(0, 2**62, (), dtype=torch.int64)
    return _dropout_op.dropout(x.contiguous(), float(p), seed)
