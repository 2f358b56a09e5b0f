"""NeighborLoader on HeteroData: per-edge-type fanouts (pyg-lib's hetero_neighbor_sample)
drawn by Edgewise's native sampler, batches in PyG's HeteroData layout."""

import math
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Deque, Dict, Iterator, List, Optional, Tuple
from collections import deque

import torch

from ... import _edgewise
from ._graph_source import check_input_nodes, check_num_neighbors, check_pin_memory, pin_batch, set_batching_args

EdgeType = Tuple[str, str, str]

def is_hetero_data(data: Any) -> bool:
    return hasattr(data, "node_types") and hasattr(data, "edge_types") and hasattr(data, "edge_index_dict")


def _edge_type_name(edge_type: EdgeType) -> str:
    return "__".join(edge_type)


def hetero_num_neighbors(op: str, num_neighbors: Any, edge_types: List[EdgeType]) -> List[List[int]]:
    """One list per edge type (in ``edge_types`` order): a list for all, or a dict by
    edge type (tuple or ``"src__rel__dst"``); every edge type the same number of hops."""
    if not isinstance(num_neighbors, dict):
        values = check_num_neighbors(op, num_neighbors)
        return [list(values) for _ in edge_types]
    by_name = {}
    for key, value in num_neighbors.items():
        name = _edge_type_name(key) if isinstance(key, tuple) else str(key)
        if name not in {_edge_type_name(e) for e in edge_types}:
            raise ValueError(f"{op}: num_neighbors names edge type {key!r}, which the graph does not have "
                             f"(edge types: {[_edge_type_name(e) for e in edge_types]})")
        by_name[name] = check_num_neighbors(f"{op}: num_neighbors[{key!r}]", value)
    out = []
    for edge_type in edge_types:
        name = _edge_type_name(edge_type)
        if name not in by_name:
            raise ValueError(f"{op}: num_neighbors has no entry for edge type {edge_type!r}")
        out.append(by_name[name])
    hops = {len(v) for v in out}
    if len(hops) > 1:
        raise ValueError(f"{op}: num_neighbors must name the same number of hops for every edge type "
                         f"(got {sorted(hops)})")
    return out


class HeteroNeighborLoader:
    r"""PyG's ``NeighborLoader`` on ``HeteroData`` (what ``edgewise.torch.loader.NeighborLoader``
    becomes when given one).

    ``num_neighbors``: a list (the same fanouts for every edge type) or a dict by edge
    type (``(src, rel, dst)`` or ``"src__rel__dst"``) of lists, each the same number of
    hops; ``-1`` takes every neighbour. ``input_nodes``: a node type, or ``(node type,
    ids | bool mask | None)``. ``replace``, ``batch_size``, ``shuffle``, ``drop_last``,
    ``transform`` as PyG's. Per hop, each edge type draws its fanout for every node of
    its destination type found by the hops before (pyg-lib's hetero_neighbor_sample);
    new nodes take local ids of their type in discovery order, the seeds first.
    ``weight_attr``: an edge-level attribute (of some edge types; the others draw
    uniformly), neighbours drawn in proportion to it. ``time_attr``: a node-level
    attribute of some node types or an edge-level one of some edge types (not both),
    as PyG's; a neighbour is eligible when its time is at most its seed's
    (``input_time``, else the seed's own time); temporal sampling is disjoint, as in
    PyG. ``temporal_strategy``: ``"uniform"`` or ``"last"`` (the newest eligible).
    ``disjoint``: each seed grows its own subgraph.

    Each batch is a ``HeteroData`` with every node- and edge-level attribute sliced to
    the sample and PyG's fields: per node type ``n_id`` and ``num_sampled_nodes``, per
    edge type ``edge_index`` (local ids, source -> target), ``e_id`` and
    ``num_sampled_edges``, and on the input type ``input_id``, ``batch_size`` and
    ``seed_time`` (None). ``seed`` (default: drawn from torch's generator) fixes every
    epoch. Batches are sampled natively without the GIL by ``num_threads`` threads, at
    most ``prefetch`` ahead. ``subgraph_type="bidirectional"`` merges each edge type's
    sample with its reverse type's (PyG's ``HeteroSamplerOutput.to_bidirectional``: the
    merged types lose ``e_id`` and the per-hop counts, as in PyG); ``"induced"`` (or
    ``directed=False``) keeps every edge of every edge type among the sampled nodes
    (not with disjoint subgraphs).
    """

    def __init__(self, data: Any, num_neighbors: Any, input_nodes: Any = None, input_time: Any = None,
                 replace: bool = False, subgraph_type: str = "directional", disjoint: bool = False,
                 temporal_strategy: str = "uniform", time_attr: Optional[str] = None,
                 weight_attr: Optional[str] = None, transform: Optional[Callable] = None, batch_size: int = 1,
                 shuffle: bool = False, drop_last: bool = False, num_threads: Optional[int] = None,
                 prefetch: int = 4, seed: Optional[int] = None, directed: bool = True,
                 pin_memory: bool = False, **kwargs: Any) -> None:
        from ._neighbor_loader import _IGNORED_LOADER_ARGS
        op = "NeighborLoader"
        unknown = [k for k in kwargs if k not in _IGNORED_LOADER_ARGS]
        if unknown:
            raise TypeError(f"{op}: unexpected argument '{unknown[0]}'")
        self.pin_memory = check_pin_memory(op, pin_memory)
        subgraph_type = "induced" if not directed else str(getattr(subgraph_type, "value", subgraph_type))
        if subgraph_type not in ("directional", "bidirectional", "induced"):
            raise ValueError(f"{op}: subgraph_type '{subgraph_type}' must be 'directional', 'bidirectional' or "
                             f"'induced'")
        if subgraph_type == "induced" and (disjoint or time_attr is not None):
            raise ValueError(f"{op}: subgraph_type 'induced' with disjoint subgraphs is not supported")
        self.subgraph_type = subgraph_type
        self.op = op
        self.data = data
        self.node_types: List[str] = list(data.node_types)
        self.edge_types: List[EdgeType] = list(data.edge_types)
        self.num_neighbors = hetero_num_neighbors(op, num_neighbors, self.edge_types)
        self.replace = bool(replace)
        if temporal_strategy not in ("uniform", "last"):
            raise ValueError(f"{op}: temporal_strategy '{temporal_strategy}' must be 'uniform' or 'last'")
        self.temporal_strategy = temporal_strategy
        self.node_time, self.edge_time = self._times(time_attr)
        self.time_attr = time_attr
        self.disjoint = bool(disjoint) or time_attr is not None  # PyG: temporal sampling is disjoint
        self.edge_weight = self._weights(weight_attr)
        set_batching_args(self, op, batch_size, shuffle, drop_last, transform, num_threads, prefetch, seed)
        self.input_type, self.input_nodes = self._check_input_nodes(input_nodes)
        self.input_time = self._check_input_time(input_time)
        self.sampler = self._make_sampler()
        self._epoch = 0

    def _check_input_nodes(self, input_nodes: Any) -> Tuple[str, torch.Tensor]:
        op = self.op
        if isinstance(input_nodes, str):
            input_nodes = (input_nodes, None)
        if not isinstance(input_nodes, tuple) or len(input_nodes) != 2 or not isinstance(input_nodes[0], str):
            raise ValueError(f"{op}: input_nodes of HeteroData must be a node type or (node type, ids / mask / "
                             f"None) (got {type(input_nodes).__name__})")
        node_type, nodes = input_nodes
        if node_type not in self.node_types:
            raise ValueError(f"{op}: input_nodes names node type '{node_type}', which the graph does not have "
                             f"(node types: {self.node_types})")
        return node_type, check_input_nodes(op, nodes, self._num_nodes(node_type), allow_repeats=self.disjoint)

    def _times(self, time_attr: Optional[str]) -> Tuple[Dict[str, torch.Tensor], Dict[EdgeType, torch.Tensor]]:
        """time_attr's node-level tensors by node type, or its edge-level ones by edge type."""
        if time_attr is None:
            return {}, {}
        op = self.op
        node = {t: self.data[t][time_attr] for t in self.node_types if time_attr in self.data[t]}
        edge = {e: self.data[e][time_attr] for e in self.edge_types if time_attr in self.data[e]}
        if node and edge:
            raise ValueError(f"{op}: time_attr '{time_attr}' holds both node-level and edge-level times")
        if not node and not edge:
            raise ValueError(f"{op}: time_attr '{time_attr}' is neither a node-level nor an edge-level attribute of "
                             f"any type")
        for key, t in list(node.items()) + list(edge.items()):
            size = self._num_nodes(key) if key in node else self.data[key].edge_index.size(1)
            if (not isinstance(t, torch.Tensor) or t.dim() != 1 or t.numel() != size or t.is_floating_point()
                    or t.is_complex() or t.dtype == torch.bool):
                raise ValueError(f"{op}: data[{key!r}].{time_attr} must be a 1-D integer tensor with {size} entries "
                                 f"(got {getattr(t, 'dtype', type(t).__name__)}, shape "
                                 f"{list(getattr(t, 'shape', []))})")
        as64 = {k: t.detach().to("cpu", torch.int64).contiguous() for k, t in node.items()}
        return as64, {k: t.detach().to("cpu", torch.int64).contiguous() for k, t in edge.items()}

    def _weights(self, weight_attr: Optional[str]) -> Dict[EdgeType, torch.Tensor]:
        """weight_attr by edge type (the types that have it), finite and >= 0."""
        if weight_attr is None:
            return {}
        op = self.op
        weights = {e: self.data[e][weight_attr] for e in self.edge_types if weight_attr in self.data[e]}
        if not weights:
            raise ValueError(f"{op}: weight_attr '{weight_attr}' is not an edge-level attribute of any edge type")
        out = {}
        for e, w in weights.items():
            size = self.data[e].edge_index.size(1)
            if not isinstance(w, torch.Tensor) or w.dim() != 1 or w.numel() != size or not w.is_floating_point():
                raise ValueError(f"{op}: data[{e!r}].{weight_attr} must be a 1-D floating-point tensor with {size} "
                                 f"entries (got {getattr(w, 'dtype', type(w).__name__)}, shape "
                                 f"{list(getattr(w, 'shape', []))})")
            wd = w.detach().to("cpu", torch.float64).contiguous()
            bad = ~(torch.isfinite(wd) & (wd >= 0))
            if bool(bad.any()):
                k = int(bad.nonzero()[0])
                raise ValueError(f"{op}: data[{e!r}].{weight_attr}[{k}] ({float(wd[k])}) must be finite and >= 0")
            out[e] = wd
        return out

    def _check_input_time(self, input_time: Any) -> Optional[torch.Tensor]:
        op = self.op
        if input_time is None:
            if self.edge_time:
                raise ValueError(f"{op}: time_attr '{self.time_attr}' is edge-level: the seeds' times must come as "
                                 f"input_time")
            if self.node_time and self.input_type not in self.node_time:
                raise ValueError(f"{op}: node type '{self.input_type}' has no '{self.time_attr}'; pass input_time")
            return None
        if self.time_attr is None:
            raise ValueError(f"{op}: input_time needs time_attr (temporal sampling)")
        t = torch.as_tensor(input_time)
        if t.dim() != 1 or t.numel() != self.input_nodes.numel() or t.is_floating_point() or t.dtype == torch.bool:
            raise ValueError(f"{op}: input_time must be a 1-D integer tensor with one entry per input node "
                             f"({self.input_nodes.numel()}; got {t.dtype}, shape {list(t.shape)})")
        return t.to("cpu", torch.int64).contiguous()

    def _num_nodes(self, node_type: str) -> int:
        n = self.data[node_type].num_nodes
        if n is None:
            raise ValueError(f"{self.op}: node type '{node_type}' has no num_nodes and no node-level tensor")
        return int(n)

    def _make_sampler(self) -> Any:
        index = {t: i for i, t in enumerate(self.node_types)}
        relations = []
        for edge_type in self.edge_types:
            src, _, dst = edge_type
            edge_index = self.data[edge_type].edge_index
            if not isinstance(edge_index, torch.Tensor) or edge_index.dim() != 2 or edge_index.size(0) != 2:
                raise ValueError(f"{self.op}: data[{edge_type!r}].edge_index must be a [2, E] tensor")
            relations.append((_edge_type_name(edge_type), index[src], index[dst], edge_index.detach().cpu(),
                              self.edge_weight.get(edge_type), self.edge_time.get(edge_type)))
        node_time = [self.node_time.get(t) for t in self.node_types] if self.node_time else None
        try:
            return _edgewise.HeteroHopSampler([self._num_nodes(t) for t in self.node_types], relations,
                                              self.num_neighbors, replace=self.replace, disjoint=self.disjoint,
                                              temporal_strategy=self.temporal_strategy, node_time=node_time,
                                              directed=self.subgraph_type != "induced")
        except ValueError as error:
            raise ValueError(f"{self.op}: {str(error).split(': ', 1)[-1]}") from None

    def __len__(self) -> int:
        n = self.input_nodes.numel()
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def _order(self, epoch: int) -> torch.Tensor:
        if not self.shuffle:
            return torch.arange(self.input_nodes.numel())
        generator = torch.Generator().manual_seed((self.seed + epoch) % 2**63)
        return torch.randperm(self.input_nodes.numel(), generator=generator)

    def __iter__(self) -> Iterator[Any]:
        epoch = self._epoch
        self._epoch += 1
        return _HeteroEpoch(self, epoch)

    def _sample(self, epoch: int, batch: int, input_id: torch.Tensor) -> Any:
        from torch_geometric.loader.utils import filter_hetero_data

        seeds: List[Optional[torch.Tensor]] = [None] * len(self.node_types)
        at = self.node_types.index(self.input_type)
        seeds[at] = self.input_nodes[input_id]
        seed_time = self._seed_time(input_id)
        times: Optional[List[Optional[torch.Tensor]]] = None
        if self.input_time is not None:
            times = [None] * len(self.node_types)
            times[at] = seed_time
        out = self.sampler.sample(seeds, seed=self.seed, stream=epoch * max(1, len(self)) + batch, seed_time=times)
        nodes = {t: torch.from_dlpack(c) for t, c in zip(self.node_types, out["node"])}
        rows = {e: torch.from_dlpack(c) for e, c in zip(self.edge_types, out["row"])}
        cols = {e: torch.from_dlpack(c) for e, c in zip(self.edge_types, out["col"])}
        edges: Dict[EdgeType, Optional[torch.Tensor]] = {
            e: torch.from_dlpack(c) for e, c in zip(self.edge_types, out["edge"])}
        num_sampled_nodes = dict(zip(self.node_types, out["num_sampled_nodes"]))
        num_sampled_edges = dict(zip(self.edge_types, out["num_sampled_edges"]))
        if self.subgraph_type == "bidirectional":
            # PyG's own conversion (HeteroSamplerOutput.to_bidirectional): each edge type
            # merged with its reverse type's sample; edge ids and per-hop counts dropped.
            from torch_geometric.sampler import HeteroSamplerOutput
            both = HeteroSamplerOutput(node=nodes, row=rows, col=cols, edge=edges).to_bidirectional()
            rows, cols, edges = both.row, both.col, both.edge
            num_sampled_nodes = num_sampled_edges = None
        data = filter_hetero_data(self.data, nodes, rows, cols, edges)
        for t, n_id in nodes.items():
            data[t].n_id = n_id
        if out["batch"] is not None:
            for t, c in zip(self.node_types, out["batch"]):
                data[t].batch = torch.from_dlpack(c)
        for e, e_id in edges.items():
            if e_id is not None:
                data[e].e_id = e_id
        if num_sampled_nodes is not None:
            data.set_value_dict("num_sampled_nodes", num_sampled_nodes)
            data.set_value_dict("num_sampled_edges", num_sampled_edges)
        data[self.input_type].input_id = input_id
        data[self.input_type].seed_time = seed_time
        data[self.input_type].batch_size = input_id.numel()
        if self.transform is not None:
            data = self.transform(data)
        return pin_batch(data) if self.pin_memory else data

    def _seed_time(self, input_id: torch.Tensor) -> Optional[torch.Tensor]:
        if self.time_attr is None:
            return None
        if self.input_time is not None:
            return self.input_time[input_id]
        return self.node_time[self.input_type][self.input_nodes[input_id]]

    def __repr__(self) -> str:
        return (f"NeighborLoader(HeteroData, input_type='{self.input_type}', batch_size={self.batch_size}, "
                f"batches={len(self)})")


class _HeteroEpoch:
    """One pass: batches submitted to the sampling threads at most ``prefetch`` ahead,
    handed out in order."""

    def __init__(self, loader: HeteroNeighborLoader, epoch: int) -> None:
        self.loader = loader
        self.epoch = epoch
        order = loader._order(epoch)
        self.batches = [order[i:i + loader.batch_size] for i in range(0, order.numel(), loader.batch_size)]
        if loader.drop_last and self.batches and self.batches[-1].numel() < loader.batch_size:
            self.batches.pop()
        self.next_submit = 0
        self.pending: Deque[Future] = deque()
        self.pool: Optional[ThreadPoolExecutor] = ThreadPoolExecutor(max_workers=loader.num_threads)

    def __iter__(self) -> "_HeteroEpoch":
        return self

    def _fill(self) -> None:
        while self.pool is not None and len(self.pending) < self.loader.prefetch and \
                self.next_submit < len(self.batches):
            b = self.next_submit
            self.pending.append(self.pool.submit(self.loader._sample, self.epoch, b, self.batches[b]))
            self.next_submit += 1

    def __next__(self) -> Any:
        self._fill()
        if not self.pending:
            self.close()
            raise StopIteration
        future = self.pending.popleft()
        try:
            batch = future.result()
        except BaseException:
            self.close()
            raise
        self._fill()
        return batch

    def close(self) -> None:
        for future in self.pending:
            future.cancel()
        self.pending.clear()
        if self.pool is not None:
            self.pool.shutdown(wait=False)
            self.pool = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
