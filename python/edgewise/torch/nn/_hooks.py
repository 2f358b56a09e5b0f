"""PyG's MessagePassing hook API for the fused layers.

The layers never form per-edge messages; with a hook registered they take an
explicit path instead, the one PyG's propagate runs: gather the messages, call the
message and aggregate hooks around the message and the reduction with PyG's
arguments, and the propagate hooks around the whole (with decomposed_layers > 1, the
message and aggregation per feature chunk, as PyG). For a sparse adjacency PyG runs
its fused message_and_aggregate instead, with its own hooks: so do the layers that PyG
fuses (GCNConv, SAGEConv, GINConv). The attention layers' edge-update hooks wrap their
attention the same way. Without hooks nothing changes.
"""

from collections import OrderedDict

import torch
from torch.utils.hooks import RemovableHandle

from .._scatter import scatter
from . import _scripting

_HOOK_KINDS = ("propagate_forward_pre", "propagate_forward", "message_forward_pre", "message_forward",
               "aggregate_forward_pre", "aggregate_forward", "message_and_aggregate_forward_pre",
               "message_and_aggregate_forward")
_EDGE_UPDATE_HOOK_KINDS = ("edge_update_forward_pre", "edge_update_forward")


def reduction(reduce: str, node_dim: int = -2):
    """aggregate(messages, index [E], dim_size) -> dim_size rows along node_dim (the
    messages' edge dimension) for a kernel reduction name; min / max with PyG's
    gradient rule (torch's amax / amin onto zeros)."""

    def aggregate(messages, index, dim_size):
        if messages.dtype in (torch.float16, torch.bfloat16):
            # The scatter kernels take float32 / float64: reduce in float32.
            return aggregate(messages.float(), index, dim_size).to(messages.dtype)
        flat = messages.movedim(node_dim, 0)
        if reduce in ("max", "min"):
            out = flat.new_zeros((dim_size,) + tuple(flat.shape[1:]))
            expanded = index.view(-1, *([1] * (flat.dim() - 1))).expand_as(flat)
            out = out.scatter_reduce(0, expanded, flat, "a" + reduce, include_self=False)
        else:
            out = scatter(flat, index, dim=0, dim_size=dim_size, reduce=reduce)
        return out.movedim(0, node_dim)

    return aggregate


class MessagePassingHooks:
    """register_{propagate,message,aggregate,edge_update}_forward{_pre,}_hook as PyG's
    MessagePassing, and its decomposed_layers attribute; torch.jit.script through PyG's
    own layer (_scripting)."""

    def __new__(cls, *args, **kwargs):
        # The constructor's arguments, for PyG's twin of the layer under torch.jit.script.
        self = super().__new__(cls)
        self.__dict__["_constructor_arguments"] = (args, dict(kwargs))
        return self

    def __prepare_scriptable__(self):
        return _scripting.pyg_twin(self)

    # PyG's: messages formed in this many feature chunks. The fused kernels never form
    # messages, so only the hooked path (whose hooks see the chunks) splits them.
    decomposed_layers = 1

    def _message_passing_options(self, layer, options, **fixed):
        """PyG's MessagePassing keyword arguments, which PyG's layers pass on from
        **kwargs: decomposed_layers, and those in fixed (name=the one value this layer
        computes, e.g. aggr="add"), set as attributes. Others: TypeError, as Python's."""
        options = dict(options)
        self.decomposed_layers = int(options.pop("decomposed_layers", 1))
        for name, value in fixed.items():
            given = options.pop(name, value)
            if given != value and not (name == "aggr" and {given, value} == {"add", "sum"}):
                raise ValueError(f"{layer}: {name}={given!r} is not supported (only {value!r})")
            setattr(self, name, value)
        if options:
            raise TypeError(f"{layer}.__init__() got an unexpected keyword argument '{next(iter(options))}'")

    def _hooks(self, kind):
        name = f"_{kind}_hooks"
        if name not in self.__dict__:
            self.__dict__[name] = OrderedDict()
        return self.__dict__[name]

    def _register(self, kind, hook):
        hooks = self._hooks(kind)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def register_propagate_forward_pre_hook(self, hook):
        """hook(module, (edge_index, size, kwargs)) before propagation; may return new inputs."""
        return self._register("propagate_forward_pre", hook)

    def register_propagate_forward_hook(self, hook):
        """hook(module, (edge_index, size, kwargs), out) after propagation; may return a new out."""
        return self._register("propagate_forward", hook)

    def register_message_forward_pre_hook(self, hook):
        """hook(module, (message kwargs,)) before the message; may return new kwargs."""
        return self._register("message_forward_pre", hook)

    def register_message_forward_hook(self, hook):
        """hook(module, (message kwargs,), messages) after the message; may return new messages."""
        return self._register("message_forward", hook)

    def register_aggregate_forward_pre_hook(self, hook):
        """hook(module, (aggregate kwargs,)) before the aggregation; may return new kwargs."""
        return self._register("aggregate_forward_pre", hook)

    def register_aggregate_forward_hook(self, hook):
        """hook(module, (aggregate kwargs,), out) after the aggregation; may return a new out."""
        return self._register("aggregate_forward", hook)

    def register_message_and_aggregate_forward_pre_hook(self, hook):
        """hook(module, (adj_t, kwargs)) before the fused message and aggregation, which
        PyG runs for a sparse adjacency; may return new inputs."""
        return self._register("message_and_aggregate_forward_pre", hook)

    def register_message_and_aggregate_forward_hook(self, hook):
        """hook(module, (adj_t, kwargs), out) after the fused message and aggregation; may return a new out."""
        return self._register("message_and_aggregate_forward", hook)

    def register_edge_update_forward_pre_hook(self, hook):
        """hook(module, (edge_index, size, kwargs)) before the edge update; may return new inputs."""
        return self._register("edge_update_forward_pre", hook)

    def register_edge_update_forward_hook(self, hook):
        """hook(module, (edge_index, size, kwargs), out) after the edge update; may return a new out."""
        return self._register("edge_update_forward", hook)

    def has_message_passing_hooks(self) -> bool:
        """Whether a hook is registered (then forward takes the explicit path)."""
        return any(self._hooks(kind) for kind in _HOOK_KINDS)

    def has_edge_update_hooks(self) -> bool:
        """Whether an edge-update hook is registered (then the attention takes the explicit path)."""
        return any(self._hooks(kind) for kind in _EDGE_UPDATE_HOOK_KINDS)

    def hooked_edge_update(self, edge_index, size, kwargs, edge_update):
        """PyG's edge_updater with hooks: out = edge_update(edge_index, kwargs), the pre
        hooks before (they may replace the inputs), the forward hooks after."""
        for hook in self._hooks("edge_update_forward_pre").values():
            result = hook(self, (edge_index, size, kwargs))
            if result is not None:
                edge_index, size, kwargs = result
        out = edge_update(edge_index, kwargs)
        for hook in self._hooks("edge_update_forward").values():
            result = hook(self, (edge_index, size, kwargs), out)
            if result is not None:
                out = result
        return out

    def hooked_propagate(self, edge_index, size, kwargs, sources, destinations, dim_size, aggregate, message,
                         node_dim=-2, edge_data=("edge_weight",)):
        """PyG's propagate with hooks: messages = message(**message kwargs) over the edges
        sources -> destinations, aggregate(messages, index, dim_size) into dim_size rows.
        kwargs: propagate's keyword data (x and the per-edge tensors named in edge_data,
        in the edges' order), also handed to the propagate hooks."""
        for hook in self._hooks("propagate_forward_pre").values():
            result = hook(self, (edge_index, size, kwargs))
            if result is not None:
                edge_index, size, kwargs = result
        x = kwargs["x"]
        x_src = x[0] if isinstance(x, (tuple, list)) else x
        # A name the layer put in kwargs reaches the message even as None (GCNConv's
        # edge_weight without normalisation, as PyG's message(x_j, edge_weight)).
        edge_kwargs = {name: kwargs[name] for name in edge_data if name in kwargs}
        parts = [self._hooked_message_aggregate(x_part, edge_kwargs, sources, destinations, dim_size, aggregate,
                                                message, node_dim)
                 for x_part in x_src.chunk(max(self.decomposed_layers, 1), -1)]
        out = parts[0] if len(parts) == 1 else torch.cat(parts, dim=-1)
        size = _collected_size(size, x, node_dim, getattr(self, "flow", "source_to_target"))
        for hook in self._hooks("propagate_forward").values():
            result = hook(self, (edge_index, size, kwargs), out)
            if result is not None:
                out = result
        return out

    def hooked_fused_propagate(self, adj_t, size, kwargs, message_and_aggregate):
        """PyG's propagate for a sparse adjacency adj_t, its fused path: the propagate
        hooks around out = message_and_aggregate(adj_t, {"x": kwargs["x"]}) and its own
        hooks; the message and aggregate hooks do not run (as in PyG)."""
        for hook in self._hooks("propagate_forward_pre").values():
            result = hook(self, (adj_t, size, kwargs))
            if result is not None:
                adj_t, size, kwargs = result
        fused_kwargs = {"x": kwargs["x"]}
        for hook in self._hooks("message_and_aggregate_forward_pre").values():
            result = hook(self, (adj_t, fused_kwargs))
            if result is not None:
                adj_t, fused_kwargs = result
        out = message_and_aggregate(adj_t, fused_kwargs)
        for hook in self._hooks("message_and_aggregate_forward").values():
            result = hook(self, (adj_t, fused_kwargs), out)
            if result is not None:
                out = result
        size = [adj_t.size(1), adj_t.size(0)]  # PyG's size for a sparse adjacency
        for hook in self._hooks("propagate_forward").values():
            result = hook(self, (adj_t, size, kwargs), out)
            if result is not None:
                out = result
        return out

    def _hooked_message_aggregate(self, x_src, edge_kwargs, sources, destinations, dim_size, aggregate, message,
                                  node_dim):
        """One chunk of the hooked propagate: message and aggregate with their hooks."""
        message_kwargs = {"x_j": x_src.index_select(node_dim, sources), **edge_kwargs}
        for hook in self._hooks("message_forward_pre").values():
            result = hook(self, (message_kwargs,))
            if result is not None:
                message_kwargs = result[0] if isinstance(result, tuple) else result
        out = message(**message_kwargs)
        for hook in self._hooks("message_forward").values():
            result = hook(self, (message_kwargs,), out)
            if result is not None:
                out = result
        aggregate_kwargs = {"index": destinations, "ptr": None, "dim_size": dim_size}
        for hook in self._hooks("aggregate_forward_pre").values():
            result = hook(self, (aggregate_kwargs,))
            if result is not None:
                aggregate_kwargs = result[0] if isinstance(result, tuple) else result
        out = aggregate(out, aggregate_kwargs["index"], aggregate_kwargs["dim_size"])
        for hook in self._hooks("aggregate_forward").values():
            result = hook(self, (aggregate_kwargs,), out)
            if result is not None:
                out = result
        return out


def _collected_size(size, x, node_dim, flow):
    """The size PyG's propagate forward hooks get: [N_src, N_dst] as its argument
    collection fills it in from x (a pair fills both entries it holds tensors for, a
    single tensor only the source side)."""
    out = list(size) if size is not None else [None, None]
    if isinstance(x, (tuple, list)):
        for position, t in enumerate(x):
            if isinstance(t, torch.Tensor):
                out[position] = t.size(node_dim)
    elif isinstance(x, torch.Tensor):
        out[0 if flow == "source_to_target" else 1] = x.size(node_dim)
    return out


def gather_message(x_j, edge_weight=None):
    """PyG's x_j, or edge_weight.view(-1, 1) * x_j (GCNConv's message)."""
    return x_j if edge_weight is None else edge_weight.view(-1, 1) * x_j


def attention_message(x_j, alpha):
    """GATConv's message: alpha [E, H] scales x_j [E, H, C] per head."""
    return alpha.unsqueeze(-1) * x_j

