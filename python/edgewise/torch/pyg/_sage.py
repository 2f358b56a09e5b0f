"""PyG's ``SAGEConv.forward`` with its two linear maps fused, the replacement
accelerate() installs.

PyG computes ``lin_l(aggregated) + lin_r(x_dst)``: two products, each into a fresh
[N, out] tensor, and a third fresh tensor for their sum. Here the root term is added
into the first product in place (``addmm_``), so one [N, out] tensor is written
instead of three. On large graphs those fresh tensors are what the layer costs:
each is page-faulted in and zeroed by the kernel before it is written (a to_hetero
SAGE model on a 1M-paper graph spent 39% of its epoch in these ``aten::add`` calls).
The result equals PyG's up to rounding (the sum is formed inside the product). On
the CPU the output comes from Edgewise's host block cache (``_bridge.empty``), so an
epoch reuses the previous epoch's pages instead of faulting in fresh ones.

Everything but the linear maps is PyG's: ``project``, ``propagate`` (itself
accelerated), ``normalize``. The fused path is taken only when both maps are
initialised PyG / torch ``Linear`` modules without hooks, the operands are 2-D of one
floating dtype with shapes that chain, and nothing is scripting; otherwise PyG's own
forward runs (and raises PyG's errors).
"""

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import _bridge


def _plain_linear(module, operand) -> bool:
    from torch_geometric.nn.dense.linear import Linear

    if type(module) not in (Linear, torch.nn.Linear):
        return False
    if module._forward_hooks or module._forward_pre_hooks or torch.nn.modules.module._global_forward_hooks \
            or torch.nn.modules.module._global_forward_pre_hooks:
        return False
    weight = module.weight
    return (isinstance(weight, Tensor) and not isinstance(weight, torch.nn.parameter.UninitializedParameter)
            and weight.dim() == 2 and weight.dtype == operand.dtype and weight.device == operand.device)


def _fusable(self, out, x_r) -> bool:
    return (self.root_weight and isinstance(x_r, Tensor) and isinstance(out, Tensor) and out.dim() == 2
            and x_r.dim() == 2 and out.dtype == x_r.dtype and out.dtype.is_floating_point
            and out.device == x_r.device and out.size(0) == x_r.size(0) and _plain_linear(self.lin_l, out)
            and _plain_linear(self.lin_r, x_r) and self.lin_l.weight.size(1) == out.size(1)
            and self.lin_r.weight.size(1) == x_r.size(1))


class _RootedLinear(torch.autograd.Function):
    """lin_l(aggregated) + lin_r(x_r) (lin_r without bias) into one output tensor."""

    @staticmethod
    def forward(ctx, aggregated, x_r, weight_l, bias_l, weight_r):
        out = _bridge.empty((aggregated.size(0), weight_l.size(0)), aggregated.dtype, aggregated.device)
        if bias_l is not None:
            torch.addmm(bias_l, aggregated, weight_l.t(), out=out)
        else:
            torch.mm(aggregated, weight_l.t(), out=out)
        out.addmm_(x_r, weight_r.t())
        ctx.save_for_backward(aggregated, x_r, weight_l, weight_r)
        ctx.has_bias = bias_l is not None
        return out

    @staticmethod
    def backward(ctx, grad):
        aggregated, x_r, weight_l, weight_r = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad.mm(weight_l) if need[0] else None, grad.mm(weight_r) if need[1] else None,
                grad.t().mm(aggregated) if need[2] else None,
                grad.sum(0) if ctx.has_bias and need[3] else None, grad.t().mm(x_r) if need[4] else None)


def make_sage_forward(original):
    def forward(self, x, edge_index, size=None):
        if torch.jit.is_scripting():
            return original(self, x, edge_index, size)
        if isinstance(x, Tensor):
            x = (x, x)
        if self.project and hasattr(self, "lin"):
            x = (self.lin(x[0]).relu(), x[1])
        out = self.propagate(edge_index, x=x, size=size)
        x_r = x[1]
        if _fusable(self, out, x_r):
            lin_l, lin_r = self.lin_l, self.lin_r
            out = _RootedLinear.apply(out, x_r, lin_l.weight, lin_l.bias, lin_r.weight)
            if lin_r.bias is not None:
                out = out + lin_r.bias
        else:
            out = self.lin_l(out)
            if self.root_weight and x_r is not None:
                out = out + self.lin_r(x_r)
        if self.normalize:
            out = F.normalize(out, p=2.0, dim=-1)
        return out

    forward.__wrapped__ = original
    return forward
