"""GCNConv, SAGEConv, GINConv and GINEConv on the fused edgewise spmm / segment reduction.

Constructor arguments, parameter names and shapes follow PyG, so a PyG layer's
state_dict loads into these and the outputs agree. Messages are never materialised
as an [E, C] tensor: aggregation is one gather-reduce over a CSR by destination,
built once per edge_index and cached (see _graph_cache).
"""

import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import _checks
from .._segment_csr import segment_csr
from .._spmm import CSR, check_edge_weight, check_features, spmm_csr, spmm_csr_and_rows
from ._graph_cache import ContentGraphCache, GraphCache
from ._hooks import MessagePassingHooks, gather_message, reduction

_structures = GraphCache()
# Edge lists derived from a sparse adjacency are new tensors every call: keyed by contents.
_adjacency_structures = ContentGraphCache()


_SPARSE_FLOW_ERROR = ('Flow direction "target_to_source" is invalid for message propagation via '
                      '`torch_sparse.SparseTensor` or `torch.sparse.Tensor`. If you really want to make use of a '
                      'reverse message passing flow, pass in the transposed sparse tensor to the message passing '
                      'module, e.g., `adj_t.t()`.')


def _is_sparse_adjacency(t) -> bool:
    return isinstance(t, Tensor) and (t.is_sparse or t.layout in (torch.sparse_csr, torch.sparse_csc))


def _adjacency_edges(adj: Tensor, layer: str, hybrid: bool = False):
    """(edge_index [2, E] with row 0 the sources, values [E]) of PyG's transposed
    adjacency adj_t [N_dst, N_src] (torch.sparse COO / CSR / CSC): adj_t[v, u] is the
    edge u -> v. hybrid: values [E, D] (adj_t [N_dst, N_src, D]) are allowed too."""
    if adj.sparse_dim() != 2 or adj.dim() > 2 + hybrid:
        raise ValueError(f"{layer}: a sparse adjacency must be 2-D [N_dst, N_src] (got {adj.dim()}-D)")
    if adj.layout == torch.sparse_csr:
        cols = adj.col_indices()
        rows = torch.repeat_interleave(torch.arange(adj.size(0), device=adj.device), adj.crow_indices().diff(),
                                       output_size=cols.numel())
        values = adj.values()
    elif adj.layout == torch.sparse_csc:
        rows = adj.row_indices()
        cols = torch.repeat_interleave(torch.arange(adj.size(1), device=adj.device), adj.ccol_indices().diff(),
                                       output_size=rows.numel())
        values = adj.values()
    else:
        adj = adj.coalesce()
        rows, cols = adj.indices()
        values = adj.values()
    if values.dim() != 1 and not hybrid:
        raise ValueError(f"{layer}: a sparse adjacency must hold one value per edge (got values of shape "
                         f"{tuple(values.shape)})")
    return torch.stack([cols.to(torch.int64), rows.to(torch.int64)]), values


# The integer types PyG's MessagePassing takes for edge_index; the narrow ones are
# widened to int64 on entry (_widened_edge_index), the kernels take int32 / int64.
_EDGE_INDEX_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _widened_edge_index(edge_index):
    """edge_index with a uint8 / int8 / int16 tensor widened to int64 (PyG takes them);
    anything else as given (sparse adjacencies included)."""
    if isinstance(edge_index, Tensor) and edge_index.dtype in (torch.uint8, torch.int8, torch.int16) \
            and edge_index.layout == torch.strided:
        return edge_index.to(torch.int64)
    return edge_index


def _check_edge_index(edge_index, num_nodes, layer):
    """edge_index an int32 / int64 [2, E] tensor; a ValueError with PyG's message (its
    checks, in its order) and the layer's own words."""
    if not isinstance(edge_index, Tensor):
        raise ValueError(f"{layer}: edge_index must be [2, E] (got {type(edge_index).__name__})")
    if edge_index.dtype not in _EDGE_INDEX_DTYPES:
        raise ValueError(f"Expected 'edge_index' to be of integer type (got '{edge_index.dtype}') ({layer}: "
                         f"edge_index must be an int8 / int16 / int32 / int64 or uint8 tensor)")
    if edge_index.dim() != 2:
        raise ValueError(f"Expected 'edge_index' to be two-dimensional (got {edge_index.dim()} dimensions) "
                         f"({layer}: edge_index must be [2, E], got {tuple(edge_index.shape)})")
    if edge_index.size(0) != 2:
        raise ValueError(f"Expected 'edge_index' to have size '2' in the first dimension (got "
                         f"'{edge_index.size(0)}') ({layer}: edge_index must be [2, E], got {tuple(edge_index.shape)})")
    if edge_index.dtype not in (torch.int32, torch.int64):
        raise ValueError(f"{layer}: edge_index must be int32 or int64 here (got {edge_index.dtype}: "
                         f"narrower types are widened where the layer takes edge_index)")


class EdgeIndexError(IndexError, ValueError):
    """An edge_index entry outside the nodes: PyG's IndexError, and a ValueError as the
    layers' other input errors."""


def _checked_build(layer, sources, num_src, build, destinations=None, num_dst=None, gathers_x_i=False):
    """build() (a graph structure of edge_index); where it fails on an index outside the
    nodes, PyG's error for it (the original error chained): a source outside [0, num_src)
    is x_j's lookup, PyG's IndexError; a destination outside [0, num_dst) is x_i's lookup
    where the layer gathers x_i (gathers_x_i), else the aggregation's dim_size error."""

    def checked():
        try:
            return build()
        except (ValueError, IndexError, RuntimeError) as error:
            found = _out_of_range(sources, num_src)
            if found is not None:
                raise EdgeIndexError(_pyg_index_message(found, num_src) + f" ({layer}: {error})") from error
            found = None if destinations is None else _out_of_range(destinations, num_dst)
            if found is None:
                raise
            if gathers_x_i:
                raise EdgeIndexError(_pyg_index_message(found, num_dst) + f" ({layer}: {error})") from error
            raise ValueError(f"Encountered invalid 'dim_size' (got '{num_dst}' but expected >= "
                             f"'{int(destinations.max()) + 1}') ({layer}: {error})") from error

    return checked


def _out_of_range(indices, count):
    """PyG's description of the first problem of indices against [0, count), or None."""
    if indices.numel() == 0:
        return None
    lo, hi = (int(v) for v in torch.aminmax(indices))
    if lo < 0:
        return f"Found negative indices in 'edge_index' (got {lo})"
    if hi >= count:
        return f"Found indices in 'edge_index' that are larger than {count - 1} (got {hi})"
    return None


def _pyg_index_message(found, count):
    return (f"{found}. Please ensure that all indices in 'edge_index' point to valid indices in the interval "
            f"[0, {count}) in your node feature matrix and try again.")


_LOW_PRECISION = (torch.float16, torch.bfloat16)


def _check_x(x, layer):
    """Node features: float32 / float64 on CPU or CUDA, or float16 / bfloat16 (as PyG
    takes them: the kernels run in float32 on an upcast copy, see _kernel_dtype)."""
    if isinstance(x, Tensor) and x.dtype in _LOW_PRECISION:
        return x
    return check_features(x, "x", layer)


class PygAssertionError(ValueError, AssertionError):
    """An input PyG's layer rejects with an `assert`: an AssertionError as PyG's, and a
    ValueError naming the argument as the layers' other input errors."""


class DtypeMismatchError(ValueError, RuntimeError):
    """float16 / bfloat16 x into a layer whose parameters are another dtype: PyG's
    linear raises a RuntimeError there; this names the layer (a ValueError too)."""


def _check_low_precision(layer, x):
    """PyG takes float16 / bfloat16 x with a layer of that dtype (or under autocast);
    with parameters of another dtype its linear fails: fail first, naming the layer."""
    for t in x if isinstance(x, (tuple, list)) else (x,):
        if not (isinstance(t, Tensor) and t.dtype in _LOW_PRECISION) or torch.is_autocast_enabled(t.device.type):
            continue
        for p in layer.parameters():
            if p.is_floating_point() and not isinstance(p, torch.nn.parameter.UninitializedParameter):
                if p.dtype != t.dtype:
                    raise DtypeMismatchError(f"{type(layer).__name__}: x is {t.dtype} but the layer's parameters are "
                                             f"{p.dtype} (convert the layer with .to({t.dtype}), or run under "
                                             f"torch.autocast)")
                break


def _kernel_dtype(*tensors):
    """(the dtype PyG's arithmetic on these tensors gives, the dtype the kernels run in:
    that one widened to at least float32). None entries are skipped."""
    dtype = None
    for t in tensors:
        if t is not None:
            dtype = t.dtype if dtype is None else torch.promote_types(dtype, t.dtype)
    return dtype, torch.promote_types(dtype, torch.float32)


def _check_inputs(x, edge_index, edge_weight, layer):
    """x float [N, F] on CPU or CUDA (see _check_x), edge_index [2, E] on x's device,
    edge_weight None or [E]: a ValueError naming the layer and the argument."""
    x = _check_x(x, layer)
    _check_edge_index(edge_index, x.size(0), layer)
    _checks.same_device(edge_index, "edge_index", x, layer, "x")
    return check_edge_weight(edge_weight, edge_index.size(1), x, layer)


def _with_self_loops(edge_index, edge_weight, num_nodes, fill_value, dtype=torch.float32):
    """PyG's add_remaining_self_loops with static shapes: existing self loops stay in
    place with weight 0, one loop per node is appended carrying the existing loop's
    weight (fill_value where a node had none)."""
    src, dst = edge_index[0], edge_index[1]
    is_loop = src == dst
    loops = torch.arange(num_nodes, device=edge_index.device, dtype=edge_index.dtype)
    edge_index = torch.cat([edge_index, loops.unsqueeze(0).expand(2, -1)], dim=1)
    if edge_weight is None:
        # PyG gives every edge, loops included, weight 1 when no weights are passed
        # (fill_value then plays no part).
        ones = torch.ones(src.size(0), device=src.device, dtype=dtype)
        weight = torch.cat([ones.masked_fill(is_loop, 0.0), torch.ones(num_nodes, device=src.device, dtype=dtype)])
        return edge_index, weight
    target = torch.where(is_loop, src.to(torch.int64), torch.full_like(src, num_nodes, dtype=torch.int64))
    loop_weight = edge_weight.new_full((num_nodes + 1,), fill_value).scatter(0, target, edge_weight)[:num_nodes]
    weight = torch.cat([edge_weight.masked_fill(is_loop, 0.0), loop_weight])
    return edge_index, weight


def _gcn_norm(edge_index, weight, num_nodes):
    """w[e] * deg^-1/2[src] * deg^-1/2[dst], deg = weighted in-degree (PyG's gcn_norm)."""
    src, dst = edge_index[0], edge_index[1]
    deg = weight.new_zeros(num_nodes).index_add_(0, dst, weight)
    inv_sqrt = deg.pow(-0.5).masked_fill(deg == 0, 0.0)
    return inv_sqrt[src] * weight * inv_sqrt[dst]


def _glorot_(weight):
    bound = math.sqrt(6.0 / (weight.size(-2) + weight.size(-1)))
    with torch.no_grad():
        weight.uniform_(-bound, bound)


class GCNConv(MessagePassingHooks, torch.nn.Module):
    """Kipf & Welling's graph convolution: out = D^-1/2 (A + I) D^-1/2 X W + b (PyG's GCNConv).

    improved: self loops weigh 2 (as in PyG, only when edge weights are passed).
    cached: as PyG's, the first normalised graph is kept (``_cached_edge_index``: its
    edge list in CSR order, self loops included, and weights) and used for every later
    call whatever graph is passed, until reset_parameters(). Without it the normalised
    graph is still cached per edge_index tensor, rebuilt whenever that tensor changes.
    add_self_loops (default: normalize), normalize, bias, flow, lazy in_channels -1: as PyG.
    PyG's MessagePassing keywords: decomposed_layers, aggr "add", node_dim -2.
    """

    def __init__(
        self, in_channels: int, out_channels: int, improved: bool = False, cached: bool = False,
        add_self_loops: Optional[bool] = None, normalize: bool = True, bias: bool = True,
        flow: str = "source_to_target", **kwargs,
    ):
        super().__init__()
        self._message_passing_options("GCNConv", kwargs, aggr="add", node_dim=-2)
        self.flow = _check_flow(flow, "GCNConv")
        if add_self_loops is None:
            add_self_loops = normalize
        if add_self_loops and not normalize:
            raise ValueError("'GCNConv' does not support adding self-loops to the graph when no on-the-fly "
                             "normalization is applied")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.improved, self.cached = improved, cached
        self.add_self_loops, self.normalize = add_self_loops, normalize
        self.lin = _lazy_or_linear(in_channels, out_channels, False, glorot=True)
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if not _is_lazy(self.lin):
            _glorot_(self.lin.weight)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)
        # PyG's cache attributes (_cached_adj_t: torch_sparse's, never set here).
        self._cached_edge_index = self._cached_adj_t = self._cached_graph = None

    def _cache(self, csr, weight, sparse):
        """Keep (csr, weight) for every later call, as PyG's cached=True (sparse: built
        from a sparse adjacency)."""
        destinations = torch.repeat_interleave(torch.arange(csr.num_nodes, device=csr.offsets.device),
                                               csr.offsets.diff(), output_size=csr.num_edges)
        self._cached_edge_index = (torch.stack([csr.sources.to(torch.int64), destinations]), weight)
        self._cached_graph = (csr, weight, sparse)

    def _graph(self, edge_index, edge_weight, num_nodes, dtype=torch.float32):
        """(CSR, weights in CSR order or None). target_to_source: the reversed edge list
        (degrees over edge_index[0], messages into edge_index[0]), as PyG's gcn_norm."""
        fill = 2.0 if self.improved else 1.0
        reverse = self.flow == "target_to_source"
        oriented = edge_index.flip(0) if reverse else edge_index
        if not self.normalize:
            csr = _structures.get(edge_index, ("plain", num_nodes, reverse), _checked_build(
                "GCNConv", oriented[0], num_nodes, lambda: CSR.from_edge_index(oriented, num_nodes)))
            return csr, None if edge_weight is None else csr.to_csr_order(edge_weight)

        def build(weight):
            ei = oriented.to(torch.int64)
            if self.add_self_loops:
                ei, weight = _with_self_loops(ei, weight, num_nodes, fill, dtype)
            elif weight is None:
                weight = torch.ones(ei.size(1), device=ei.device, dtype=dtype)
            csr = CSR.from_edge_index(ei, num_nodes)
            return csr, csr.to_csr_order(_gcn_norm(ei, weight, num_nodes))

        if edge_weight is None:
            # The normalisation is computed in x's dtype (float64 models keep float64 weights).
            return _structures.get(edge_index, ("gcn", num_nodes, self.add_self_loops, dtype, reverse),
                                   _checked_build("GCNConv", oriented[0], num_nodes, lambda: build(None)))
        # Weighted: the normalisation is recomputed (differentiable in edge_weight).
        return _checked_build("GCNConv", oriented[0], num_nodes, lambda: build(edge_weight))()

    def _adjacency_graph(self, adj, x):
        """(CSR, weights in CSR order) of a sparse adj_t, PyG's gcn_norm on sparse input:
        a loop per node is added whatever loops exist (their weights add up)."""
        N = _num_nodes(x)
        if adj.size(0) != adj.size(1) or adj.size(1) != N:
            raise PygAssertionError(f"GCNConv: a sparse adjacency must be [N, N] with N = {N} nodes in x "
                                    f"(got {tuple(adj.shape)})")
        ei, values = _adjacency_edges(adj, "GCNConv")
        values = values.to(x.dtype)
        if self.add_self_loops:
            loops = torch.arange(N, device=ei.device)
            ei = torch.cat([ei, loops.unsqueeze(0).expand(2, -1)], dim=1)
            values = torch.cat([values, values.new_full((N,), 2.0 if self.improved else 1.0)])
        csr = _adjacency_structures.get(ei, ("gcn", N), lambda: CSR.from_edge_index(ei, N))
        weight = _gcn_norm(ei, values, N) if self.normalize else values
        return csr, csr.to_csr_order(weight)

    def _normalised_graph(self, x, edge_index, edge_weight):
        """(CSR, weights in CSR order or None) of edge_index or a sparse adj_t."""
        if _is_sparse_adjacency(edge_index):
            return self._adjacency_graph(edge_index, _check_x(x, "GCNConv"))
        edge_weight = _check_inputs(x, edge_index, edge_weight, "GCNConv")
        return self._graph(edge_index, edge_weight, _num_nodes(x), x.dtype)

    def forward(self, x: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None) -> Tensor:
        edge_index = _widened_edge_index(edge_index)
        if isinstance(x, (tuple, list)):
            raise ValueError("'GCNConv' received a tuple of node features as input while this layer does not "
                             "support bipartite message passing. Please try other layers such as 'SAGEConv' or "
                             "'GraphConv' instead")
        if _is_sparse_adjacency(edge_index) and self.flow != "source_to_target":
            raise ValueError(_SPARSE_FLOW_ERROR)
        _check_low_precision(self, x)
        if self.normalize and self._cached_graph is not None:
            # PyG: the cached graph serves whatever graph is passed.
            x = _check_x(x, "GCNConv")
            csr, weight, sparse = self._cached_graph
        else:
            csr, weight = self._normalised_graph(x, edge_index, edge_weight)
            sparse = _is_sparse_adjacency(edge_index)
            if self.normalize and self.cached:
                self._cache(csr, weight, sparse)
        if weight is not None and weight.dtype != x.dtype:
            weight = weight.to(x.dtype)
        h = self.lin(x)
        if self.has_message_passing_hooks():
            out = self._hooked(h, csr, weight, edge_index, sparse)
        else:
            out = _aggregate(csr, h, weight, "sum")
        if self.bias is not None:
            out = out + self.bias
        return out

    def _hooked(self, h, csr, weight, edge_index, sparse):
        """The explicit propagate with PyG's hooks over the normalised graph: PyG's edges
        in its order (input edges, less their self loops where loops are added, then one
        loop per node) with the normalised weights. sparse (the graph came from a sparse
        adjacency): PyG's fused path over the normalised adj_t instead."""
        if sparse:
            layout = edge_index.layout if _is_sparse_adjacency(edge_index) else torch.sparse_coo
            adj_t = _as_adjacency(csr, weight, layout)
            return self.hooked_fused_propagate(adj_t, None, {"x": h, "edge_weight": None},
                                               lambda adj, kwargs: _sparse_aggregate("GCNConv", adj, kwargs["x"]))
        own_loops_dropped = self.normalize and self.add_self_loops
        sources, destinations, weight = _pyg_gcn_order(csr, weight, own_loops_dropped)
        if not _is_sparse_adjacency(edge_index):
            pair = (sources, destinations) if self.flow == "source_to_target" else (destinations, sources)
            edge_index = torch.stack(pair)
        kwargs = {"x": h, "edge_weight": weight}
        return self.hooked_propagate(edge_index, None, kwargs, sources, destinations, csr.num_nodes,
                                     reduction("sum"), gather_message)

    def __repr__(self):
        return f"{type(self).__name__}({self.in_channels}, {self.out_channels})"


def _as_adjacency(csr, weight, layout):
    """csr's graph as a coalesced adj_t [N_dst, N_src] in layout, weight (CSR order; None:
    ones) its values, a repeated edge's summed."""
    destinations = torch.repeat_interleave(torch.arange(csr.num_nodes, device=csr.offsets.device),
                                           csr.offsets.diff(), output_size=csr.num_edges)
    if weight is None:
        weight = torch.ones(csr.num_edges, device=csr.offsets.device)
    indices = torch.stack([destinations, csr.sources.to(torch.int64)])
    adj = torch.sparse_coo_tensor(indices, weight, (csr.num_nodes, csr.num_sources)).coalesce()
    if layout == torch.sparse_csr:
        return adj.to_sparse_csr()
    return adj.to_sparse_csc() if layout == torch.sparse_csc else adj


def _sparse_aggregate(layer, adj_t, x_src, reduce="sum", module=None):
    """PyG's message_and_aggregate over a sparse adj_t: reduce (or the aggregation
    module) of x_src over its edges, its values weighing the messages."""
    m = _Messages((x_src, None), adj_t, None, None, "source_to_target", layer)
    if module is not None:
        return _module_aggregate(module, m, x_src)
    return _aggregate(m.csr, x_src, m.weight, reduce)


def _pyg_gcn_order(csr, weight, loops_added):
    """(sources, destinations, weight) of csr's edges back in the order they were built
    from (edge_index, then the appended loops); with loops_added, the input's own loops
    (weight 0 here, their weight moved to the appended loop) dropped, as PyG's
    add_remaining_self_loops. weight: CSR order, or None."""
    destinations = torch.repeat_interleave(torch.arange(csr.num_nodes, device=csr.offsets.device),
                                           csr.offsets.diff(), output_size=csr.num_edges)
    order = torch.empty_like(csr.edge_ids)
    order[csr.edge_ids] = torch.arange(csr.num_edges, device=order.device, dtype=order.dtype)
    sources, destinations = csr.sources.to(torch.int64)[order], destinations[order]
    weight = None if weight is None else weight[order]
    if loops_added:
        keep = sources != destinations
        keep[csr.num_edges - csr.num_nodes:] = True  # the appended loops, one per node
        sources, destinations = sources[keep], destinations[keep]
        weight = None if weight is None else weight[keep]
    return sources, destinations, weight


def _plain_graph(edge_index, edge_weight, num_nodes):
    csr = _structures.get(edge_index, ("plain", num_nodes), lambda: CSR.from_edge_index(edge_index, num_nodes))
    return csr, None if edge_weight is None else csr.to_csr_order(edge_weight)


_FLOWS = ("source_to_target", "target_to_source")


def _num_nodes(x: Tensor) -> int:
    """Nodes lie along dimension -2 (PyG's node_dim), [B, N, C] static-graph batches too."""
    return x.size(-2) if x.dim() >= 2 else x.size(0)


def _aggregate(csr, x: Tensor, weight, reduce: str) -> Tensor:
    """spmm over x's node dimension -2; a static-graph batch [..., N, C] is one [N, B * C] product.
    float16 / bfloat16 run in float32 and come back in PyG's dtype."""
    dtype, kernel = _kernel_dtype(x, weight)
    if x.dtype != kernel or (weight is not None and weight.dtype != kernel):
        return _aggregate(csr, x.to(kernel), None if weight is None else weight.to(kernel), reduce).to(dtype)
    if x.dim() <= 2:
        return spmm_csr(csr, x, weight, reduce)
    lead, (n, c) = x.shape[:-2], x.shape[-2:]
    out = spmm_csr(csr, x.movedim(-2, 0).reshape(n, -1), weight, reduce)
    return out.reshape(out.size(0), *lead, c).movedim(0, -2)


def _check_flow(flow, layer):
    if flow not in _FLOWS:
        raise ValueError(f"Expected 'flow' to be either 'source_to_target' or 'target_to_source' (got '{flow}')")
    return flow


class _Messages:
    """PyG's message-passing inputs resolved: x or a pair (x_src, x_dst) (x_dst may be
    None), size (N_src, N_dst) and flow. Messages go from edge_index[j] to
    edge_index[i] ((j, i) = (0, 1) for source_to_target); x_j = pair[0] whatever the
    flow (PyG's generated argument collection: a pair's x_j is its first entry, so
    target_to_source reads x[0] at edge_index[1]); out has size[i] rows (else size[j]).
    ``root`` is pair[1] as PyG's layers take it."""

    __slots__ = ("x_src", "root", "csr", "weight", "edge_index", "input_weight", "values")

    def __init__(self, x, edge_index, edge_weight, size, flow, layer, values_weigh=True):
        cache = _structures
        self.values = None
        if _is_sparse_adjacency(edge_index):
            # PyG: adj_t's values weigh the messages (values_weigh; else they are left in
            # ``values`` for the layer), its shape gives the sizes, flow must be
            # source_to_target (pass adj_t.t() for the reverse).
            if flow != "source_to_target":
                raise ValueError(_SPARSE_FLOW_ERROR)
            size = (edge_index.size(1), edge_index.size(0))
            edge_index, values = _adjacency_edges(edge_index, layer, hybrid=not values_weigh)
            if not values_weigh:
                self.values, values = values, None
            edge_weight = values if edge_weight is None else edge_weight
            features = x[0] if isinstance(x, (tuple, list)) else x
            if isinstance(features, Tensor) and edge_weight is not None and edge_weight.dtype != features.dtype:
                edge_weight = edge_weight.to(features.dtype)
            cache = _adjacency_structures
        pair = tuple(x) if isinstance(x, (tuple, list)) else (x, x)
        if len(pair) != 2 or not isinstance(pair[0], Tensor) or not (pair[1] is None or isinstance(pair[1], Tensor)):
            raise ValueError(f"{layer}: x must be a tensor or a pair (x_src, x_dst) of tensors (x_dst may be None)")
        i, j = (1, 0) if flow == "source_to_target" else (0, 1)
        self.x_src = _check_x(pair[0], layer)
        self.root = pair[1]
        if self.root is not None:
            _check_x(self.root, layer)
        _check_edge_index(edge_index, None, layer)
        _checks.same_device(edge_index, "edge_index", self.x_src, layer, "x")
        sizes = [None, None]
        if size is not None:
            if not isinstance(size, (tuple, list)) or len(size) != 2:
                raise ValueError(f"{layer}: size must be a pair (N_src, N_dst) (got {size!r})")
            sizes = list(size)
        for position, t in enumerate(pair):
            if isinstance(t, Tensor):
                if sizes[position] is not None and sizes[position] != _num_nodes(t):
                    raise ValueError(f"Encountered tensor with size {_num_nodes(t)} in dimension -2, but expected "
                                     f"size {sizes[position]}.")
                sizes[position] = _num_nodes(t)
        num_src = sizes[0]
        num_dst = sizes[i] if sizes[i] is not None else num_src
        edge_weight = check_edge_weight(edge_weight, edge_index.size(1), self.x_src, layer)
        square = num_src == num_dst and j == 0
        key = ("messages", num_dst, num_src, j)
        oriented = edge_index if j == 0 else edge_index.flip(0)
        self.csr = cache.get(edge_index, key, _checked_build(
            layer, oriented[0], num_src, lambda: CSR.from_edge_index(oriented, num_dst, None if square else num_src),
            oriented[1], num_dst))
        self.weight = None if edge_weight is None else self.csr.to_csr_order(edge_weight)
        self.edge_index, self.input_weight = oriented, edge_weight  # (sources, destinations), input order


class _GlorotLazyLinear(torch.nn.LazyLinear):
    """LazyLinear initialised as PyG's Linear(-1, ..., weight_initializer='glorot'):
    glorot weight and zero bias once the input width is known."""

    def reset_parameters(self):
        # Linear's constructor calls this with in_features 0, before the lazy weight exists.
        if not self.has_uninitialized_params() and self.in_features != 0:
            _glorot_(self.weight)
            if self.bias is not None:
                torch.nn.init.zeros_(self.bias)


def _lazy_or_linear(in_features, out_features, bias, glorot=False):
    """torch.nn.Linear, or a LazyLinear for PyG's lazy in_channels = -1 (glorot: the
    lazy one initialised as PyG's glorot layers; the layer initialises a sized one)."""
    if in_features == -1:
        return (_GlorotLazyLinear if glorot else torch.nn.LazyLinear)(out_features, bias=bias)
    return torch.nn.Linear(in_features, out_features, bias=bias)


def _is_lazy(module) -> bool:
    """Whether module's parameters wait for the first input (lazy in_channels -1)."""
    return isinstance(module, torch.nn.modules.lazy.LazyModuleMixin) and module.has_uninitialized_params()


def _split_size_argument(edge_weight, size):
    """PyG's SAGEConv / GINConv take size as the third positional argument: a pair there is size."""
    if isinstance(edge_weight, (tuple, list)) and size is None:
        return None, edge_weight
    return edge_weight, size


_KERNEL_AGGREGATIONS = ("mean", "max", "sum", "add", "var", "std")


def _pyg_aggregation(aggr, aggr_kwargs, in_width):
    """(PyG's aggregation module for aggr, PyG's aggr attribute, its output width), as
    PyG's SAGEConv resolves them (lstm defaults to in_width in and out)."""
    try:
        from torch_geometric.nn.aggr import MultiAggregation
        from torch_geometric.nn.resolver import aggregation_resolver
    except ImportError as error:
        raise ValueError(f"SAGEConv: aggr={aggr!r} needs torch_geometric (the kernels aggregate "
                         f"{', '.join(_KERNEL_AGGREGATIONS)})") from error
    kwargs = dict(aggr_kwargs or {})
    if aggr == "lstm":
        kwargs.setdefault("in_channels", in_width)
        kwargs.setdefault("out_channels", in_width)
    module = aggregation_resolver(aggr, **kwargs)
    width = module.get_out_channels(in_width) if isinstance(module, MultiAggregation) else in_width
    name = [str(a) for a in aggr] if isinstance(aggr, (list, tuple)) else str(aggr)
    return module, name, width


def _hooked(layer, edge_index, size, m, x_src, aggregate, reduce="sum", module=None):
    """The explicit propagate with PyG's hooks over m's edges (edge_index order); for a
    sparse adjacency PyG's fused path (message_and_aggregate: reduce or module)."""
    kwargs = {"x": (x_src, m.root)}
    if _is_sparse_adjacency(edge_index):
        name = type(layer).__name__
        return layer.hooked_fused_propagate(
            edge_index, size, kwargs, lambda adj, fused: _sparse_aggregate(name, adj, fused["x"][0], reduce, module))
    if m.input_weight is not None:
        kwargs["edge_weight"] = m.input_weight
    return layer.hooked_propagate(edge_index, size, kwargs, m.edge_index[0], m.edge_index[1], m.csr.num_nodes,
                                  aggregate, gather_message)


def _module_aggregate(module, m, x_src):
    """PyG's aggregation module over the gathered messages (edge_index order, as PyG's
    propagate gives them: its sorted-index aggregations see the same order)."""
    edges = m.edge_index
    messages = x_src.index_select(-2, edges[0])
    if m.input_weight is not None:
        messages = messages * m.input_weight.unsqueeze(-1)
    return module(messages, edges[1], dim_size=m.csr.num_nodes, dim=-2)


def _reset(module):
    """PyG's reset: module.reset_parameters(), else each child's, recursively (a
    Sequential has none of its own)."""
    if hasattr(module, "reset_parameters"):
        module.reset_parameters()
    else:
        for child in module.children() if hasattr(module, "children") else []:
            _reset(child)


class SAGEConv(MessagePassingHooks, torch.nn.Module):
    """GraphSAGE: out = lin_l(aggr_{u -> v} x_u) + lin_r(x_v) (PyG's SAGEConv).

    aggr: "mean", "max", "sum", "var" or "std" (PyG's VarAggregation / StdAggregation:
    population variance; std clamped at 1e-5, masked to 0 at or below sqrt(1e-5); an
    isolated node aggregates to 0); normalize: L2-
    normalise each output row; root_weight: add lin_r(x); project: x_u <- relu(lin(x_u))
    before aggregating; bias: lin_l's bias. edge_weight (an extension: PyG's SAGEConv
    takes none) scales each message. As PyG's: in_channels -1 (lazy) or a pair,
    x a pair (x_src, x_dst) (bipartite; x_dst None skips the root term), size
    (N_src, N_dst), flow, a sparse adjacency adj_t. Any other aggr PyG resolves (a
    list such as ["mean", "max"], "lstm", an Aggregation module, with aggr_kwargs)
    runs PyG's aggregation module (``aggr_module``, PyG's parameter names) on the
    gathered messages: that needs torch_geometric. PyG's MessagePassing keywords:
    decomposed_layers, node_dim -2.
    """

    def __init__(
        self, in_channels, out_channels: int, aggr="mean", normalize: bool = False,
        root_weight: bool = True, project: bool = False, bias: bool = True, flow: str = "source_to_target",
        aggr_kwargs: Optional[dict] = None, **kwargs,
    ):
        super().__init__()
        self._message_passing_options("SAGEConv", kwargs, node_dim=-2)
        # in_channels is kept as given (PyG's repr shows an int as an int).
        self.in_channels, self.out_channels = in_channels, out_channels
        if isinstance(in_channels, int):
            in_channels = (in_channels, in_channels)
        self.aggr_module = None
        aggr_width = in_channels[0]
        if isinstance(aggr, str) and aggr in _KERNEL_AGGREGATIONS:
            self.aggr = "sum" if aggr == "add" else aggr
        else:
            self.aggr_module, self.aggr, aggr_width = _pyg_aggregation(aggr, aggr_kwargs, in_channels[0])
        self.normalize, self.root_weight, self.project = normalize, root_weight, project
        self.flow = _check_flow(flow, "SAGEConv")
        if project:
            if in_channels[0] == -1:
                raise ValueError("'SAGEConv' does not support lazy initialization with `project=True`")
            self.lin = torch.nn.Linear(in_channels[0], in_channels[0], bias=True)
        self.lin_l = _lazy_or_linear(aggr_width, out_channels, bias)
        if root_weight:
            self.lin_r = _lazy_or_linear(in_channels[1], out_channels, False)

    def reset_parameters(self):
        # PyG's order (the aggregation module first), so a seeded reset draws the same values.
        if self.aggr_module is not None:
            _reset(self.aggr_module)
        for lin in (getattr(self, "lin", None), self.lin_l, getattr(self, "lin_r", None)):
            if lin is not None and not _is_lazy(lin):
                lin.reset_parameters()

    def forward(self, x, edge_index: Tensor, edge_weight: Optional[Tensor] = None, size=None) -> Tensor:
        edge_index = _widened_edge_index(edge_index)
        edge_weight, size = _split_size_argument(edge_weight, size)
        _check_low_precision(self, x)
        m = _Messages(x, edge_index, edge_weight, size, self.flow, "SAGEConv")
        x_src = F.relu(self.lin(m.x_src)) if self.project else m.x_src
        if self.has_message_passing_hooks():
            aggregate = (reduction(self.aggr) if self.aggr_module is None else
                         lambda messages, index, dim_size: self.aggr_module(messages, index, dim_size=dim_size, dim=-2))
            out = self.lin_l(_hooked(self, edge_index, size, m, x_src, aggregate, self.aggr, self.aggr_module))
        elif self.aggr_module is None:
            rows = _leading_rows(m.root, x_src) if self.root_weight and self.aggr in ("mean", "sum", "add") else None
            if rows is None:
                out = self.lin_l(_aggregate(m.csr, x_src, m.weight, self.aggr))
            else:
                aggregated, root = spmm_csr_and_rows(m.csr, x_src, m.weight, self.aggr, rows)
                out = _add_linear(self.lin_l(aggregated), self.lin_r, root, inplace=_unobserved(self.lin_l))
                return F.normalize(out, p=2.0, dim=-1) if self.normalize else out
        else:
            out = self.lin_l(_module_aggregate(self.aggr_module, m, x_src))
        if self.root_weight and m.root is not None:
            out = _add_linear(out, self.lin_r, m.root, inplace=_unobserved(self.lin_l))
        if self.normalize:
            out = F.normalize(out, p=2.0, dim=-1)
        return out

    def __repr__(self):
        return f"{type(self).__name__}({self.in_channels}, {self.out_channels}, aggr={self.aggr})"


def _add_linear(out: Tensor, lin: torch.nn.Module, x: Tensor, inplace: bool = False) -> Tensor:
    """out + lin(x) for a bias-free linear layer: one GEMM accumulating into out
    (addmm) rather than a product and an add, each a fresh [N, C] tensor. inplace:
    out is a fresh result nothing else holds, so the GEMM accumulates into its pages
    (autograd allows it: a linear layer's backward does not read its output)."""
    if type(lin) is torch.nn.Linear and lin.bias is None and out.dim() == 2 and x.dim() == 2:
        if inplace and out.dtype == x.dtype == lin.weight.dtype and not torch.is_autocast_enabled():
            return out.addmm_(x, lin.weight.t())
        return torch.addmm(out, x, lin.weight.t())
    return out + lin(x)


def _leading_rows(x_dst: Optional[Tensor], x_src: Tensor) -> Optional[int]:
    """n when x_dst is x_src[:n] sliced under autograd (PyG's trimmed bipartite input
    (x, x[:n_dst])), so one gradient tensor can serve both; else None."""
    if (x_dst is None or not x_src.requires_grad or torch.compiler.is_compiling() or x_src.dim() != 2
            or x_src.dtype not in (torch.float32, torch.float64) or not x_src.is_contiguous()):
        return None
    node = x_dst.grad_fn
    if (node is None or node.name() != "SliceBackward0" or x_dst.dtype != x_src.dtype or x_dst.dim() != 2
            or x_dst.size(1) != x_src.size(1) or x_dst.size(0) > x_src.size(0) or x_dst.stride() != x_src.stride()
            or x_dst.data_ptr() != x_src.data_ptr()):
        return None
    parent = node.next_functions[0][0]
    if parent is None or not (parent is x_src.grad_fn or getattr(parent, "variable", None) is x_src):
        return None
    return x_dst.size(0)


def _unobserved(module: torch.nn.Module) -> bool:
    """Whether module's output reaches only its caller: no forward hook (its own or a
    global one) could have kept it."""
    from torch.nn.modules import module as module_hooks
    return not (module._forward_hooks or module_hooks._global_forward_hooks)


class GINConv(MessagePassingHooks, torch.nn.Module):
    """Graph isomorphism network layer: out = nn((1 + eps) x_v + sum_{u -> v} x_u) (PyG's GINConv).

    eps is a parameter when train_eps, else a buffer (both named ``eps``, shape [1]).
    edge_weight (an extension) scales each message. As PyG's: x a pair (x_src, x_dst)
    (x_dst None drops the root term), size (N_src, N_dst), flow. PyG's MessagePassing
    keywords: decomposed_layers, aggr "add", node_dim -2.
    """

    def __init__(self, nn: torch.nn.Module, eps: float = 0.0, train_eps: bool = False,
                 flow: str = "source_to_target", **kwargs):
        super().__init__()
        self._message_passing_options("GINConv", kwargs, aggr="add", node_dim=-2)
        self.nn = nn
        self.flow = _check_flow(flow, "GINConv")
        self.initial_eps = eps
        if train_eps:
            self.eps = torch.nn.Parameter(torch.empty(1))
        else:
            self.register_buffer("eps", torch.empty(1))
        self.reset_parameters()

    def reset_parameters(self):
        _reset(self.nn)
        with torch.no_grad():
            self.eps.fill_(self.initial_eps)

    def forward(self, x, edge_index: Tensor, edge_weight: Optional[Tensor] = None, size=None) -> Tensor:
        edge_index = _widened_edge_index(edge_index)
        edge_weight, size = _split_size_argument(edge_weight, size)
        m = _Messages(x, edge_index, edge_weight, size, self.flow, "GINConv")
        if self.has_message_passing_hooks():
            out = _hooked(self, edge_index, size, m, m.x_src, reduction("sum"))
        else:
            out = _aggregate(m.csr, m.x_src, m.weight, "sum")
        if m.root is not None:
            out = out + (1 + self.eps) * m.root
        return self.nn(out)

    def __repr__(self):
        return f"{type(self).__name__}(nn={self.nn})"


def _gine_in_channels(nn):
    """The input width of GINEConv's nn, inferred as PyG does (first layer of a Sequential)."""
    first = nn[0] if isinstance(nn, torch.nn.Sequential) else nn
    for attr in ("in_features", "in_channels"):
        if hasattr(first, attr):
            return getattr(first, attr)
    raise ValueError("Could not infer input channels from `nn`.")


class GINEConv(MessagePassingHooks, torch.nn.Module):
    """GIN with edge features (Hu et al.; PyG's GINEConv):
    out = nn((1 + eps) x_v + sum_{u -> v} ReLU(x_u + lin(e_uv))).

    edge_dim: width of edge_attr, projected by ``lin`` to nn's input width; without it
    edge_attr must already be x's width. eps: a parameter when train_eps, else a buffer
    (both named ``eps``). edge_attr is [E, D] in edge_index order. The messages are
    formed per edge ([E, C]: the ReLU sits on each) and summed by the fused CSR
    segment reduction. As PyG's: x a pair (x_src, x_dst) (x_dst None drops the root
    term), size (N_src, N_dst), flow, static graphs x [B, N, C], a sparse adjacency
    adj_t [N_dst, N_src, D] whose values are the edge features, the message-passing hooks;
    MessagePassing keywords: decomposed_layers, aggr "add", node_dim -2.
    """

    def __init__(self, nn: torch.nn.Module, eps: float = 0.0, train_eps: bool = False, edge_dim: Optional[int] = None,
                 flow: str = "source_to_target", **kwargs):
        super().__init__()
        self._message_passing_options("GINEConv", kwargs, aggr="add", node_dim=-2)
        self.nn = nn
        self.flow = _check_flow(flow, "GINEConv")
        self.initial_eps = eps
        if train_eps:
            self.eps = torch.nn.Parameter(torch.empty(1))
        else:
            self.register_buffer("eps", torch.empty(1))
        self.lin = torch.nn.Linear(edge_dim, _gine_in_channels(nn)) if edge_dim is not None else None
        self.reset_parameters()

    def reset_parameters(self):
        _reset(self.nn)
        with torch.no_grad():
            self.eps.fill_(self.initial_eps)
        if self.lin is not None:
            self.lin.reset_parameters()

    def message(self, x_j: Tensor, edge_attr: Tensor) -> Tensor:
        """PyG's GINEConv message: ReLU(x_j + lin(edge_attr))."""
        if self.lin is None and x_j.size(-1) != edge_attr.size(-1):
            raise ValueError("Node and edge feature dimensionalities do not match. Consider setting the "
                             "'edge_dim' attribute of 'GINEConv'")
        if self.lin is not None:
            edge_attr = self.lin(edge_attr)
        return F.relu(x_j + edge_attr)

    def forward(self, x, edge_index: Tensor, edge_attr: Optional[Tensor] = None, size=None) -> Tensor:
        edge_index = _widened_edge_index(edge_index)
        m = _Messages(x, edge_index, None, size, self.flow, "GINEConv", values_weigh=False)
        if edge_attr is None and m.values is not None and m.values.dim() == 2:
            edge_attr = m.values  # PyG reads a hybrid adjacency's values as edge_attr
        edges = m.edge_index.size(1)
        if edge_attr is None or edge_attr.dim() != 2 or edge_attr.size(0) != edges:
            shape = None if edge_attr is None else tuple(edge_attr.shape)
            raise ValueError(f"GINEConv: edge_attr must be [E, D] with E = {edges} (got {shape})")
        if self.has_message_passing_hooks():
            kwargs = {"x": (m.x_src, m.root), "edge_attr": edge_attr}
            out = self.hooked_propagate(edge_index, size, kwargs, m.edge_index[0], m.edge_index[1], m.csr.num_nodes,
                                        reduction("sum"), self.message, edge_data=("edge_attr",))
        else:
            csr = m.csr
            messages = self.message(m.x_src.index_select(-2, csr.sources.to(torch.int64)),
                                    csr.to_csr_order(edge_attr))
            dtype, kernel = _kernel_dtype(messages)
            out = segment_csr(messages.to(kernel).movedim(-2, 0), csr.offsets, reduce="sum").movedim(0, -2).to(dtype)
        if m.root is not None:
            out = out + (1 + self.eps) * m.root
        return self.nn(out)

    def __repr__(self):
        return f"{type(self).__name__}(nn={self.nn})"
