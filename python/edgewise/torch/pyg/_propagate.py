"""``MessagePassing.propagate`` with Edgewise's fused gather-reduce on plain edge lists.

A call is fused when the layer's message is a gather, optionally scaled by one
scalar per edge or per edge and head (``_message_form``), its aggregation is PyG's
plain sum / mean / min / max module, ``aggregate`` and ``update`` are
MessagePassing's own, and the call is an ordinary one: no hooks registered, not
explaining, one decomposed layer, keyword arguments only, a plain integer
``edge_index`` [2, E] or PyG's EdgeIndex (its sizes taken, as PyG does; not a sparse
adjacency), features [N, C] of float32 / float64 along ``node_dim`` -2 or 0 (or
[N, H, C] with a weight [E, H], summed: GAT's attention), the weight (if any) of the
features' dtype, and every index within its size. Then ``out[i] = reduce_j w_ji x_j``
runs as one spmm (or attention_aggregate) over a CSR built once per graph contents
(``_structure``) with no [E, C] message tensor. Anything else runs PyG's propagate
unchanged, which also raises PyG's errors on bad input.
"""

import functools

import torch
from torch import Tensor

from .. import _attention_ops, _bridge, _spmm_ops
from . import _structure
from ._message_form import message_form

_FUSED_REDUCES = {"sum": "sum", "add": "sum", "mean": "mean", "min": "min", "max": "max"}
_FEATURE_DTYPES = (torch.float32, torch.float64)
_HOOK_DICTS = (
    "_propagate_forward_pre_hooks", "_propagate_forward_hooks", "_message_forward_pre_hooks",
    "_message_forward_hooks", "_aggregate_forward_pre_hooks", "_aggregate_forward_hooks",
    "_message_and_aggregate_forward_pre_hooks", "_message_and_aggregate_forward_hooks",
)


class _State:
    active = False  # read by every wrapped propagate; flipped under the package's lock


state = _State()
_plans = {}  # layer class -> MessageForm or None (classes live as long as the program)


def class_plan(cls, message_passing):
    """The MessageForm of cls's message when cls keeps MessagePassing's aggregate and update."""
    plan = _plans.get(cls, _plans)
    if plan is not _plans:
        return plan
    if torch.compiler.is_compiling():
        return None  # parsing source is not traceable; an eager call fills the table
    plan = None
    if cls.aggregate is message_passing.aggregate and cls.update is message_passing.update:
        plan = message_form(cls.message)
    _plans[cls] = plan
    return plan


def _fusable_propagate(original) -> bool:
    """PyG's own propagate (MessagePassing's or the one its template generates), not a
    layer's override."""
    return getattr(original, "__name__", "") == "propagate" and (
        getattr(original, "__qualname__", "") == "MessagePassing.propagate"
        or getattr(original, "__module__", "").endswith("_propagate"))


def _features(data, i, j, size, node_dim, per_head):
    """(x_j, num_src, num_dst) or None: x_j [N, C], or [N, H, C] for a per-head weight."""
    x_dst = None
    if isinstance(data, (tuple, list)):
        if len(data) != 2:
            return None
        x_src, x_dst = data[j], data[i]
    else:
        x_src = data
    if not isinstance(x_src, Tensor) or x_src.dtype not in _FEATURE_DTYPES:
        return None
    if x_src.dim() == 2:
        if node_dim not in (-2, 0):
            return None
    elif not (per_head and x_src.dim() == 3 and node_dim in (-3, 0)):
        return None
    num_src = x_src.size(0)
    num_dst = None
    if size is not None:
        if len(size) != 2 or (size[j] is not None and size[j] != num_src):
            return None
        num_dst = size[i]
    if isinstance(x_dst, Tensor):
        if x_dst.dim() < 1 or (num_dst is not None and num_dst != x_dst.size(node_dim)):
            return None
        num_dst = x_dst.size(node_dim)
    elif x_dst is not None:
        return None
    return x_src, num_src, num_src if num_dst is None else num_dst


def _fused(layer, plan, edge_index, size, kwargs, plain_aggregations, edge_index_type=None):
    """The fused result, or None to run PyG's propagate."""
    if layer.decomposed_layers != 1 or getattr(layer, "_explain", None) or getattr(layer, "explain", False):
        return None
    if any(getattr(layer, name, None) for name in _HOOK_DICTS):
        return None
    aggr = layer.aggr
    if not isinstance(aggr, str) or aggr not in _FUSED_REDUCES or type(layer.aggr_module) not in plain_aggregations:
        return None
    if type(edge_index) is not Tensor:
        if type(edge_index) is not edge_index_type or edge_index_type is None:
            return None
        # PyG takes an EdgeIndex's sizes (num_rows = sources) and ignores size=.
        size = (edge_index.num_rows, edge_index.num_cols)
        edge_index = edge_index.as_tensor()
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        return None
    if edge_index.dtype.is_floating_point or edge_index.dtype.is_complex or edge_index.dtype == torch.bool:
        return None
    expected = {plan.feature} | ({plan.weight} if plan.weight else set())
    if not set(kwargs) <= expected or plan.feature not in kwargs:
        return None
    i, j = (1, 0) if layer.flow == "source_to_target" else (0, 1)
    found = _features(kwargs[plan.feature], i, j, size, layer.node_dim, plan.per_head)
    if found is None:
        return None
    x, num_src, num_dst = found
    if edge_index.device != x.device:
        return None
    weight = kwargs.get(plan.weight) if plan.weight else None
    if weight is None and plan.weight and not plan.weight_optional:
        return None
    per_head = x.dim() == 3
    if weight is not None:
        want = (edge_index.size(1), x.size(1)) if per_head else (edge_index.size(1),)
        if (not isinstance(weight, Tensor) or tuple(weight.shape) != want or weight.dtype != x.dtype
                or weight.device != x.device):
            return None
    if per_head and (weight is None or _FUSED_REDUCES[aggr] != "sum"):
        return None  # heads are only fused as attention: a weighted sum
    if _bridge.carries_tangent(x, weight):  # forward-mode AD: PyG's own path has the formulas
        return None
    csr = _structure.bipartite_csr(edge_index, j, num_src, num_dst)
    if csr is None:
        return None
    weight_csr = None if weight is None else weight.index_select(0, csr.edge_ids)
    if per_head:
        N, H, C = x.shape
        out = _attention_ops.attention_aggregate(csr.offsets, csr.sources, weight_csr.contiguous(),
                                                 x.reshape(N, H * C).contiguous(), csr.t_offsets, csr.t_targets,
                                                 csr.t_edge_ids)
        return out.view(-1, H, C)
    return _spmm_ops.spmm(csr.offsets, csr.sources, x.contiguous(), weight_csr, csr.t_offsets, csr.t_targets,
                          csr.t_edge_ids, _FUSED_REDUCES[aggr])


def wrap(original, owner, message_passing, plain_aggregations, edge_index_type=None):
    """owner's propagate trying the fused path first (while accelerated), else ``original``."""
    fusable = _fusable_propagate(original)
    class_plan(owner, message_passing)  # parsed now, outside any compiled region

    @functools.wraps(original)
    def propagate(self, edge_index, *args, **kwargs):
        if state.active and fusable and not args and not torch.jit.is_scripting():
            plan = class_plan(type(self), message_passing)
            if plan is not None:
                call_kwargs = dict(kwargs)
                size = call_kwargs.pop("size", None)
                out = _fused(self, plan, edge_index, size, call_kwargs, plain_aggregations, edge_index_type)
                if out is not None:
                    return out
        return original(self, edge_index, *args, **kwargs)

    propagate.__edgewise_original__ = original
    return propagate
