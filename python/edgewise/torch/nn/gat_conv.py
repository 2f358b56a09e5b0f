"""GATConv and GATv2Conv on the edgewise attention kernels (PyG-compatible).

Constructor arguments, parameter names and shapes follow PyG's, so a PyG layer's
state_dict loads into these and the outputs agree. Attention runs edge-wise in CSR
order: logits by sddmm (GATConv: a_src[u] + a_dst[v], no [E, H, C] tensor) or by
gathering x_l[u] + x_r[v] (GATv2Conv, whose logits need the per-edge vector), then
edge_softmax per destination and one fused attention-weighted aggregation. The
structure (self loops, CSR) is built once per edge_index tensor and cached. With
edge_dim, edge features enter the logits (GATConv: a_edge . W_e e_uv, GATv2Conv:
W_e e_uv inside the nonlinearity); added self loops get fill_value's features.
"""

from typing import Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor

from .._attention import attention_aggregate, edge_softmax, sddmm_add
from .._spmm import CSR
from . import functional
from ._hooks import MessagePassingHooks, attention_message, reduction
from .conv import (
    PygAssertionError, _SPARSE_FLOW_ERROR, _adjacency_edges, _adjacency_structures, _check_flow, _check_inputs,
    _check_low_precision, _checked_build, _glorot_, _is_lazy, _is_sparse_adjacency, _kernel_dtype, _lazy_or_linear,
    _structures, _widened_edge_index,
)


class _AttentionGraph:
    """edge_index after self-loop handling, its CSR (num_src sources, num_dst
    destinations), each CSR edge's destination, the CSR position of each edge (to report
    attention in edge_index order) and the input edges kept (None without self-loop
    handling: all of them, in order)."""

    __slots__ = ("edge_index", "csr", "destinations", "csr_position", "kept")

    def __init__(self, edge_index, num_src, num_dst, loop_nodes):
        ei = edge_index.to(torch.int64)
        self.kept = None
        if loop_nodes is not None:
            # PyG's remove_self_loops + add_self_loops: one loop per node of the first
            # loop_nodes, existing loops dropped.
            self.kept = (ei[0] != ei[1]).nonzero().squeeze(1)
            ei = ei.index_select(1, self.kept)
            loops = torch.arange(loop_nodes, device=ei.device)
            ei = torch.cat([ei, loops.unsqueeze(0).expand(2, -1)], dim=1)
        self.edge_index = ei
        self.csr = CSR.from_edge_index(ei, num_dst, None if num_src == num_dst else num_src)
        degrees = self.csr.offsets[1:] - self.csr.offsets[:-1]
        self.destinations = torch.repeat_interleave(
            torch.arange(num_dst, device=ei.device), degrees, output_size=ei.size(1)
        )
        self.csr_position = torch.empty_like(self.csr.edge_ids)
        self.csr_position[self.csr.edge_ids] = torch.arange(ei.size(1), device=ei.device)


def _attention_graph(layer, edge_index, num_src, num_dst, loop_nodes, cache=_structures):
    """The graph attention runs over; flow "target_to_source" (a square graph) runs on the
    reversed edges, cached under the caller's edge_index."""
    reverse = getattr(layer, "flow", "source_to_target") == "target_to_source"
    oriented = edge_index.flip(0) if reverse else edge_index
    return cache.get(
        edge_index, ("attention", num_src, num_dst, loop_nodes, reverse),
        _checked_build(type(layer).__name__, oriented[0], num_src,
                       lambda: _AttentionGraph(oriented, num_src, num_dst, loop_nodes), oriented[1], num_dst,
                       gathers_x_i=True),
    )


def _check_reverse_flow(layer, x, edge_index):
    """flow "target_to_source" runs as the reversed graph (hooks see the edges as
    given): for a single x or a pair of equal sizes, as PyG's. A pair of different
    sizes is refused: PyG's own layer then gathers by one size and writes by the other
    (zero rows, or an index or shape error). Sparse adjacencies are refused, as PyG
    refuses them."""
    if layer.flow != "target_to_source":
        return
    name = type(layer).__name__
    if _is_sparse_adjacency(edge_index):
        raise ValueError(_SPARSE_FLOW_ERROR)
    if isinstance(x, (tuple, list)) and len(x) == 2:
        sizes = [t.size(0) if isinstance(t, Tensor) else None for t in x]
        if sizes[0] is None or sizes[0] != sizes[1]:
            raise ValueError(f"{name}: flow='target_to_source' takes a pair (x_src, x_dst) only with as many source "
                             f"as destination nodes (got {sizes[0]} and {sizes[1]})")


class _Inputs:
    """PyG's GAT inputs: x or (x_src, x_dst) (x_dst may be None), size; the output
    rows and the self-loop count as PyG's GATConv / GATv2Conv take them."""

    __slots__ = ("x_src", "x_dst", "num_src", "num_dst", "loop_nodes", "edge_index", "cache", "layout")

    def __init__(self, layer, x, edge_index, size, add_self_loops):
        self.cache = _structures
        self.layout = None  # a sparse adjacency's layout
        if _is_sparse_adjacency(edge_index):
            self.layout = edge_index.layout
            # adj_t [N_dst, N_src]: its edges (values play no part in attention, as in PyG).
            size = (edge_index.size(1), edge_index.size(0))
            edge_index = _adjacency_edges(edge_index, layer)[0]
            self.cache = _adjacency_structures
        self.edge_index = edge_index
        pair = tuple(x) if isinstance(x, (tuple, list)) else (x, x)
        if len(pair) != 2 or not isinstance(pair[0], Tensor) or not (pair[1] is None or isinstance(pair[1], Tensor)):
            raise ValueError(f"{layer}: x must be a tensor or a pair (x_src, x_dst) of tensors (x_dst may be None)")
        for t in pair:
            if t is not None and t.dim() != 2:
                raise PygAssertionError(f"Static graphs not supported in '{layer}' ({layer}: x must be [N, F], got "
                                        f"shape {tuple(t.shape)})")
        self.x_src, self.x_dst = pair
        _check_inputs(self.x_src, edge_index, None, layer)
        sizes = [None, None] if size is None else list(size)
        if len(sizes) != 2:
            raise ValueError(f"{layer}: size must be a pair (N_src, N_dst) (got {size!r})")
        for position, t in ((0, self.x_src), (1, self.x_dst)):
            if t is not None:
                if sizes[position] is not None and sizes[position] != t.size(0):
                    raise ValueError(f"Encountered tensor with size {t.size(0)} in dimension 0, but expected size "
                                     f"{sizes[position]}.")
                sizes[position] = t.size(0)
        self.num_src = sizes[0]
        self.num_dst = sizes[1] if sizes[1] is not None else sizes[0]
        self.loop_nodes = None
        if add_self_loops:
            loops = self.num_src if self.x_dst is None else min(self.num_src, self.x_dst.size(0))
            self.loop_nodes = min(size) if size is not None else loops


_LOOP_REDUCE = {"mean": "mean", "add": "sum", "sum": "sum", "max": "amax", "min": "amin", "mul": "prod"}


def _loop_attr(attr, destinations, num_nodes, fill_value):
    """Features of the added self loops (PyG's compute_loop_attr): a reduction of each
    node's incoming features (a node without any gets 0), a constant, or a given row."""
    shape = (num_nodes, attr.size(1))
    if isinstance(fill_value, str):
        if fill_value not in _LOOP_REDUCE:
            raise ValueError(f"fill_value must be a number, a tensor or one of {', '.join(_LOOP_REDUCE)} "
                             f"(got {fill_value!r})")
        index = destinations.unsqueeze(1).expand_as(attr)
        return attr.new_zeros(shape).scatter_reduce(0, index, attr, _LOOP_REDUCE[fill_value], include_self=False)
    if isinstance(fill_value, Tensor):
        return fill_value.to(attr.device, attr.dtype).reshape(1, -1).expand(shape).contiguous()
    return attr.new_full(shape, float(fill_value))


def _edge_attr_with_loops(layer, graph, edge_attr, num_input_edges, num_nodes):
    """edge_attr [E] or [E, D] (edge_index order) -> [E', D] for graph.edge_index, the
    added loops' features included (num_nodes: the loops' count)."""
    attr = edge_attr.view(-1, 1) if edge_attr.dim() == 1 else edge_attr
    if attr.dim() != 2 or attr.size(0) != num_input_edges:
        raise ValueError(f"{type(layer).__name__}: edge_attr must be [E] or [E, D] with E = {num_input_edges} "
                         f"(got shape {tuple(edge_attr.shape)})")
    if graph.kept is not None:
        attr = attr.index_select(0, graph.kept)
        # PyG fills a loop from the edges whose edge_index[1] is its node, whatever the
        # flow: under "target_to_source" those are the reversed graph's sources.
        row = 0 if getattr(layer, "flow", "source_to_target") == "target_to_source" else 1
        destinations = graph.edge_index[row, : attr.size(0)]
        attr = torch.cat([attr, _loop_attr(attr, destinations, num_nodes, layer.fill_value)])
    return attr


def _edge_attr_in_csr_order(layer, graph, edge_attr, num_input_edges, num_nodes):
    """_edge_attr_with_loops for the CSR edges."""
    attr = _edge_attr_with_loops(layer, graph, edge_attr, num_input_edges, num_nodes)
    return attr.index_select(0, graph.csr.edge_ids)


def _edges_as_given(layer, graph):
    """graph.edge_index (self loops added) as the hooks see it: in the caller's
    orientation, so reversed back under flow "target_to_source"."""
    return graph.edge_index.flip(0) if layer.flow == "target_to_source" else graph.edge_index


def _hooked_attention(layer, graph, size, kwargs, edge_update):
    """The attention (CSR order) through PyG's edge_updater hooks: edge_update(kwargs)
    and the hooks see graph.edge_index (self loops added) and PyG's edge_update
    arguments (kwargs: the per-edge ones, in graph.edge_index order; index, ptr and
    dim_size are added here). A hook may change the tensors, not the edges."""
    kwargs = {**kwargs, "index": graph.edge_index[1], "ptr": None, "dim_size": graph.csr.num_nodes}
    shown = _edges_as_given(layer, graph)

    def update(edge_index, kwargs):
        if edge_index is not shown and not torch.equal(edge_index, shown):
            raise ValueError(f"{type(layer).__name__}: an edge-update hook may not change edge_index")
        return edge_update(kwargs)

    alpha = layer.hooked_edge_update(shown, size, kwargs, update)
    if alpha.size(0) != graph.edge_index.size(1):
        raise ValueError(f"{type(layer).__name__}: the edge update must give one row per edge "
                         f"({graph.edge_index.size(1)}, got {alpha.size(0)})")
    return alpha.index_select(0, graph.csr.edge_ids)


def _aggregate_attention(layer, graph, alpha, x_src, x_dst, size):
    """sum over v's incoming edges of alpha * x_src[u] per head: one fused kernel call,
    or PyG's explicit message / aggregate path (graph.edge_index and its order, as PyG)
    while a hook is registered. alpha: CSR order."""
    if not layer.has_message_passing_hooks():
        return attention_aggregate(graph.csr, alpha, x_src)
    kwargs = {"x": (x_src, x_dst), "alpha": alpha.index_select(0, graph.csr_position)}
    return layer.hooked_propagate(_edges_as_given(layer, graph), size, kwargs, graph.edge_index[0], graph.edge_index[1],
                                  graph.csr.num_nodes, reduction("sum", node_dim=0), attention_message, node_dim=0,
                                  edge_data=("alpha",))


def _finish(layer, out, graph, alpha, inputs, return_attention_weights):
    """Head concat/mean, residual (of x_dst, when given), bias, and PyG's optional
    (edge_index, alpha) return."""
    N = inputs.num_dst
    out = out.reshape(N, layer.heads * layer.out_channels) if layer.concat else out.mean(dim=1)
    if layer.res is not None and inputs.x_dst is not None:
        out = out + layer.res(inputs.x_dst)
    if layer.bias is not None:
        out = out + layer.bias
    if return_attention_weights:
        if inputs.layout is not None:
            return out, _sparse_attention(graph, alpha, inputs)
        edge_index = graph.edge_index.flip(0) if layer.flow == "target_to_source" else graph.edge_index
        return out, (edge_index, alpha.index_select(0, graph.csr_position))
    return out


def _sparse_attention(graph, alpha, inputs):
    """PyG's (adj_t holding the attention [N_dst, N_src, H], the attention in adj_t's
    value order) for a sparse adjacency input, in its layout: rows sorted, columns
    sorted within each (CSC: column-major). alpha: CSR order."""
    src, dst = graph.csr.sources.to(torch.int64), graph.destinations
    shape = (inputs.num_dst, inputs.num_src, alpha.size(1))
    if inputs.layout == torch.sparse_csc:
        order = torch.argsort(src * inputs.num_dst + dst)
        alpha = alpha.index_select(0, order)
        counts = torch.bincount(src, minlength=inputs.num_src)
        ccol = torch.cat([counts.new_zeros(1), counts.cumsum(0)])
        return torch.sparse_csc_tensor(ccol, dst[order], alpha, shape), alpha
    order = torch.argsort(dst * inputs.num_src + src)
    alpha = alpha.index_select(0, order)
    if inputs.layout == torch.sparse_csr:
        crow = graph.csr.offsets.to(torch.int64)
        return torch.sparse_csr_tensor(crow, src[order], alpha, shape), alpha
    indices = torch.stack([dst[order], src[order]])
    return torch.sparse_coo_tensor(indices, alpha, shape, is_coalesced=True), alpha


def _attention_weights(layer, graph, logits):
    alpha = edge_softmax(graph.csr, F.leaky_relu(logits, layer.negative_slope))
    return functional.dropout(alpha, p=layer.dropout, training=layer.training)


class GATConv(MessagePassingHooks, torch.nn.Module):
    """Graph attention (Veličković et al.; PyG's GATConv).

    alpha[u -> v, h] = softmax over v's incoming edges of
    LeakyReLU(a_src[h] . W x_u + a_dst[h] . W x_v); out_v = concat or mean over heads of
    sum_u alpha[u -> v, h] W x_u (+ residual, + bias). in_channels may be a pair
    (separate lin_src / lin_dst, applied to the one x) and -1 (lazy: glorot once the
    width is known, as PyG). dropout is applied to the
    attention weights while training. add_self_loops: drop existing loops, add one per
    node (PyG). edge_dim: edge features e_uv [E, edge_dim] (forward's edge_attr) add
    a_edge[h] . W_e e_uv to the logit; added loops get fill_value's features ("mean" of
    the node's incoming ones, a number or a row). Without edge_dim, edge_attr is
    ignored, as PyG does. Bipartite (x_src, x_dst) input (x_dst may be None) and size
    as PyG's (loops for min(N_src, N_dst) nodes). PyG's MessagePassing keywords:
    decomposed_layers, aggr "add", node_dim 0, flow (``"target_to_source"``: a single x
    or a pair of equal sizes); the edge-update hooks see PyG's edge_update inputs.
    """

    def __init__(
        self,
        in_channels: Union[int, Tuple[int, int]],
        out_channels: int,
        heads: int = 1,
        concat: bool = True,
        negative_slope: float = 0.2,
        dropout: float = 0.0,
        add_self_loops: bool = True,
        edge_dim: Optional[int] = None,
        fill_value: Union[float, Tensor, str] = "mean",
        bias: bool = True,
        residual: bool = False,
        **kwargs,
    ):
        super().__init__()
        self.flow = _check_flow(kwargs.pop("flow", "source_to_target"), "GATConv")
        self._message_passing_options("GATConv", kwargs, aggr="add", node_dim=0)
        self.in_channels, self.out_channels, self.heads = in_channels, out_channels, heads
        self.concat, self.negative_slope, self.dropout = concat, negative_slope, dropout
        self.add_self_loops, self.residual = add_self_loops, residual
        self.edge_dim, self.fill_value = edge_dim, fill_value
        self.lin = self.lin_src = self.lin_dst = None
        if isinstance(in_channels, int):
            self.lin = _lazy_or_linear(in_channels, heads * out_channels, False, glorot=True)
        else:
            self.lin_src = _lazy_or_linear(in_channels[0], heads * out_channels, False, glorot=True)
            self.lin_dst = _lazy_or_linear(in_channels[1], heads * out_channels, False, glorot=True)
        self.att_src = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        self.att_dst = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        if edge_dim is not None:
            self.lin_edge = torch.nn.Linear(edge_dim, heads * out_channels, bias=False)
            self.att_edge = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        else:
            self.lin_edge = None
            self.register_parameter("att_edge", None)
        total_out = out_channels * (heads if concat else 1)
        dst_in = in_channels if isinstance(in_channels, int) else in_channels[1]
        self.res = _lazy_or_linear(dst_in, total_out, False, glorot=True) if residual else None
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(total_out))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        for lin in (self.lin, self.lin_src, self.lin_dst, self.lin_edge, self.res):
            if lin is not None and not _is_lazy(lin):
                _glorot_(lin.weight)
        for att in (self.att_src, self.att_dst, self.att_edge):
            if att is not None:
                _glorot_(att)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def forward(
        self, x: Tensor, edge_index: Tensor, edge_attr: Optional[Tensor] = None, size=None,
        return_attention_weights: Optional[bool] = None,
    ):
        _check_low_precision(self, x)
        _check_reverse_flow(self, x, edge_index)
        inputs = _Inputs("GATConv", x, _widened_edge_index(edge_index), size, self.add_self_loops)
        edge_index = inputs.edge_index
        H, C = self.heads, self.out_channels
        lin_src, lin_dst = (self.lin, self.lin) if self.lin is not None else (self.lin_src, self.lin_dst)
        x_src = lin_src(inputs.x_src).view(-1, H, C)
        if isinstance(x, Tensor) and self.lin is not None:
            x_dst = x_src
        else:
            x_dst = None if inputs.x_dst is None else lin_dst(inputs.x_dst).view(-1, H, C)
        # float16 / bfloat16: the attention kernels run in float32; out and alpha come
        # back in the dtype PyG's arithmetic gives (x's promoted with the parameters').
        dtype, kernel = _kernel_dtype(x_src, self.att_src)
        x_src, x_dst = x_src.to(kernel), None if x_dst is None else x_dst.to(kernel)
        graph = _attention_graph(self, edge_index, inputs.num_src, inputs.num_dst, inputs.loop_nodes, inputs.cache)
        a_src = (x_src * self.att_src).sum(-1)
        a_dst = (x_dst * self.att_dst).sum(-1) if x_dst is not None else None
        if self.has_edge_update_hooks():
            sources, destinations = graph.edge_index
            kwargs = {"alpha_j": a_src.index_select(0, sources),
                      "alpha_i": None if a_dst is None else a_dst.index_select(0, destinations),
                      "edge_attr": None if edge_attr is None else _edge_attr_with_loops(
                          self, graph, edge_attr, edge_index.size(1), inputs.loop_nodes)}
            alpha = _hooked_attention(self, graph, size, kwargs, lambda kw: self._edge_update(graph, kw))
        else:
            # Per-node halves of the logit; sddmm adds them per edge (no per-edge vectors).
            logits = sddmm_add(graph.csr, a_src, a_dst if a_dst is not None else a_src.new_zeros((inputs.num_dst, H)))
            if edge_attr is not None and self.lin_edge is not None:
                attr = _edge_attr_in_csr_order(self, graph, edge_attr, edge_index.size(1), inputs.loop_nodes)
                logits = logits + self._edge_logits(attr)
            alpha = _attention_weights(self, graph, logits)
        out = _aggregate_attention(self, graph, alpha, x_src, x_dst, size)
        return _finish(self, out.to(dtype), graph, alpha.to(dtype), inputs, return_attention_weights)

    def _edge_logits(self, attr):
        """a_edge . W_e e_uv per head for edge features attr [E, D]."""
        return (self.lin_edge(attr).view(-1, self.heads, self.out_channels) * self.att_edge).sum(-1)

    def _edge_update(self, graph, kwargs):
        """PyG's edge_update over graph.edge_index from its arguments (alpha_j, alpha_i,
        edge_attr with the loops'): the attention in edge order."""
        logits = kwargs["alpha_j"]
        if kwargs["alpha_i"] is not None:
            logits = logits + kwargs["alpha_i"]
        attr = kwargs["edge_attr"]
        if attr is not None and self.lin_edge is not None:
            logits = logits + self._edge_logits(attr.view(-1, 1) if attr.dim() == 1 else attr)
        alpha = _attention_weights(self, graph, logits.index_select(0, graph.csr.edge_ids))
        return alpha.index_select(0, graph.csr_position)

    def __repr__(self):
        return f"{type(self).__name__}({self.in_channels}, {self.out_channels}, heads={self.heads})"


class GATv2Conv(MessagePassingHooks, torch.nn.Module):
    """GATv2 (Brody et al.; PyG's GATv2Conv): the attention nonlinearity comes before the dot.

    alpha[u -> v, h] = softmax over v's incoming edges of
    a[h] . LeakyReLU(W_l x_u + W_r x_v); out_v = concat or mean over heads of
    sum_u alpha[u -> v, h] W_l x_u (+ residual, + bias). share_weights: W_r = W_l.
    edge_dim: W_e e_uv joins W_l x_u + W_r x_v inside the LeakyReLU (loops: fill_value).
    Other arguments, bipartite input, size, MessagePassing keywords and hooks as GATConv.
    """

    def __init__(
        self,
        in_channels: Union[int, Tuple[int, int]],
        out_channels: int,
        heads: int = 1,
        concat: bool = True,
        negative_slope: float = 0.2,
        dropout: float = 0.0,
        add_self_loops: bool = True,
        edge_dim: Optional[int] = None,
        fill_value: Union[float, Tensor, str] = "mean",
        bias: bool = True,
        share_weights: bool = False,
        residual: bool = False,
        **kwargs,
    ):
        super().__init__()
        self.flow = _check_flow(kwargs.pop("flow", "source_to_target"), "GATv2Conv")
        self._message_passing_options("GATv2Conv", kwargs, aggr="add", node_dim=0)
        self.in_channels, self.out_channels, self.heads = in_channels, out_channels, heads
        self.edge_dim, self.fill_value = edge_dim, fill_value
        self.concat, self.negative_slope, self.dropout = concat, negative_slope, dropout
        self.add_self_loops, self.residual, self.share_weights = add_self_loops, residual, share_weights
        src_in, dst_in = (in_channels, in_channels) if isinstance(in_channels, int) else in_channels
        self.lin_l = _lazy_or_linear(src_in, heads * out_channels, bias, glorot=True)
        self.lin_r = self.lin_l if share_weights else _lazy_or_linear(dst_in, heads * out_channels, bias, glorot=True)
        self.att = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        self.lin_edge = torch.nn.Linear(edge_dim, heads * out_channels, bias=False) if edge_dim is not None else None
        total_out = out_channels * (heads if concat else 1)
        self.res = _lazy_or_linear(dst_in, total_out, False, glorot=True) if residual else None
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(total_out))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        for lin in (self.lin_l, self.lin_r, self.lin_edge, self.res):
            if lin is not None and not _is_lazy(lin):
                _glorot_(lin.weight)
                if lin.bias is not None:
                    torch.nn.init.zeros_(lin.bias)
        _glorot_(self.att)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def forward(
        self, x: Tensor, edge_index: Tensor, edge_attr: Optional[Tensor] = None, size=None,
        return_attention_weights: Optional[bool] = None,
    ):
        _check_low_precision(self, x)
        _check_reverse_flow(self, x, edge_index)
        if edge_attr is not None and self.lin_edge is None:
            raise PygAssertionError("GATv2Conv: edge_attr was given to a layer built without edge_dim (PyG's "
                                    "GATv2Conv asserts there too): pass edge_dim= to the constructor, or no edge_attr")
        inputs = _Inputs("GATv2Conv", x, _widened_edge_index(edge_index), size, self.add_self_loops)
        edge_index = inputs.edge_index
        H, C = self.heads, self.out_channels
        x_l = self.lin_l(inputs.x_src).view(-1, H, C)
        x_r = None if inputs.x_dst is None else self.lin_r(inputs.x_dst).view(-1, H, C)
        dtype, kernel = _kernel_dtype(x_l, self.att)  # as GATConv
        x_l, x_r = x_l.to(kernel), None if x_r is None else x_r.to(kernel)
        graph = _attention_graph(self, edge_index, inputs.num_src, inputs.num_dst, inputs.loop_nodes, inputs.cache)
        attr = None
        if edge_attr is not None and (self.lin_edge is not None or self.has_edge_update_hooks()):
            attr = _edge_attr_with_loops(self, graph, edge_attr, edge_index.size(1), inputs.loop_nodes)
        if self.has_edge_update_hooks():
            # PyG's GATv2Conv calls its edge_updater without size.
            sources, destinations = graph.edge_index
            kwargs = {"x_j": x_l.index_select(0, sources),
                      "x_i": None if x_r is None else x_r.index_select(0, destinations), "edge_attr": attr}
            alpha = _hooked_attention(self, graph, None, kwargs, lambda kw: self._edge_update(graph, kw))
        else:
            pair = x_l.index_select(0, graph.csr.sources.to(torch.int64))
            if x_r is not None:
                pair = pair + x_r.index_select(0, graph.destinations)
            alpha = self._attention(graph, pair, attr)
        out = _aggregate_attention(self, graph, alpha, x_l, x_r, size)
        return _finish(self, out.to(dtype), graph, alpha.to(dtype), inputs, return_attention_weights)

    def _attention(self, graph, pair, attr):
        """The attention in CSR order from the per-edge x_l[u] + x_r[v] (CSR order; GATv2's
        logit needs it before its nonlinearity) and the edge features (graph.edge_index
        order) or None."""
        if attr is not None and self.lin_edge is not None:
            attr = attr.view(-1, 1) if attr.dim() == 1 else attr
            pair = pair + self.lin_edge(attr.index_select(0, graph.csr.edge_ids)).view(-1, self.heads,
                                                                                       self.out_channels)
        logits = (F.leaky_relu(pair, self.negative_slope) * self.att).sum(-1)
        alpha = edge_softmax(graph.csr, logits)
        return functional.dropout(alpha, p=self.dropout, training=self.training)

    def _edge_update(self, graph, kwargs):
        """PyG's edge_update over graph.edge_index from its arguments (x_j, x_i, edge_attr
        with the loops'): the attention in edge order."""
        pair = kwargs["x_j"] if kwargs["x_i"] is None else kwargs["x_j"] + kwargs["x_i"]
        alpha = self._attention(graph, pair.index_select(0, graph.csr.edge_ids), kwargs["edge_attr"])
        return alpha.index_select(0, graph.csr_position)

    def __repr__(self):
        return f"{type(self).__name__}({self.in_channels}, {self.out_channels}, heads={self.heads})"
