"""NeighborLoader: PyG's NeighborLoader arguments and batches, prepared by native threads."""

from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import torch

from ... import _edgewise
from ._graph_source import (GraphSource, check_input_nodes, check_num_neighbors, check_pin_memory, pin_batch,
                            set_batching_args)
from ._sampled_data import SampledData

# DataLoader arguments PyG's loaders pass on that have no meaning here: batches are
# prepared by native threads (num_threads), never by Python worker processes.
_IGNORED_LOADER_ARGS = ("num_workers", "persistent_workers", "prefetch_factor", "filter_per_worker",
                        "is_sorted", "share_memory", "timeout", "worker_init_fn", "multiprocessing_context")


class NeighborLoader:
    r"""Minibatches of sampled neighbourhoods, PyG's ``NeighborLoader`` on Edgewise's threads.

    Arguments follow ``torch_geometric.loader.NeighborLoader``: ``num_neighbors`` per hop
    from the seeds (``-1``: all), ``input_nodes`` (ids, a bool mask, or None for every
    node), ``input_time``, ``replace``, ``subgraph_type`` (``"directional"``,
    ``"bidirectional"`` or ``"induced"``), ``disjoint``, ``temporal_strategy`` (``"uniform"`` / ``"last"``),
    ``time_attr`` (a node- or edge-level integer attribute; temporal sampling makes the
    subgraphs disjoint, as in PyG), ``weight_attr`` (an edge-level weight: neighbours
    drawn in proportion), ``transform``, ``batch_size``, ``shuffle``, ``drop_last``.

    Each batch is a ``torch_geometric.data.Data`` (a :class:`SampledData` without PyG)
    with every node- and edge-level attribute of ``data`` sliced to the sample, and
    PyG's fields: ``edge_index`` (local ids, source -> target), ``n_id``, ``e_id``,
    ``input_id``, ``batch_size``, ``num_sampled_nodes``, ``num_sampled_edges``,
    ``batch`` (disjoint) and ``seed_time`` (temporal). The first ``batch_size`` nodes
    are the seeds, so ``model(batch)[:batch.batch_size]`` are their outputs.

    Given ``HeteroData`` it returns a :class:`HeteroNeighborLoader`: ``num_neighbors``
    may then be a dict by edge type, ``input_nodes`` names the node type, and batches
    are ``HeteroData``.

    Batches are sampled and their rows gathered by ``num_threads`` native threads,
    at most ``prefetch`` batches ahead, without the GIL; the tensors are handed to
    torch without copies. ``pin_memory=True`` (when torch sees a CUDA device) gathers
    the attribute rows straight into page-locked memory and pins the batch's other
    tensors, as a DataLoader's ``pin_memory`` would, so ``batch.to("cuda",
    non_blocking=True)`` copies asynchronously. ``overlap=False`` lets them sample only while the loop waits
    for a batch: right when the model trains on the CPU with torch's threads on every
    core, where sampling beside it stalls each of torch's parallel regions. ``seed`` (default: drawn from torch's generator when the
    loader is made) fixes every epoch: epoch ``e`` of a loader is the same for any
    thread count. Bad arguments raise ``ValueError`` naming them before any thread
    starts; a batch that fails raises in the loop, in its turn.
    """

    def __new__(cls, data: Any = None, *args: Any, **kwargs: Any) -> Any:
        # HeteroData: the typed loader (per-edge-type fanouts, HeteroData batches).
        from ._hetero_neighbor_loader import HeteroNeighborLoader, is_hetero_data
        if cls is NeighborLoader and is_hetero_data(data):
            return HeteroNeighborLoader(data, *args, **kwargs)
        return super().__new__(cls)

    def __init__(self, data: Any, num_neighbors: List[int], input_nodes: Any = None, input_time: Any = None,
                 replace: bool = False, subgraph_type: str = "directional", disjoint: bool = False,
                 temporal_strategy: str = "uniform", time_attr: Optional[str] = None,
                 weight_attr: Optional[str] = None, transform: Optional[Callable] = None, batch_size: int = 1,
                 shuffle: bool = False, drop_last: bool = False, num_threads: Optional[int] = None,
                 prefetch: int = 4, seed: Optional[int] = None, directed: bool = True, overlap: bool = True,
                 pin_memory: bool = False, **kwargs: Any) -> None:
        op = type(self).__name__
        unknown = [k for k in kwargs if k not in _IGNORED_LOADER_ARGS]
        if unknown:
            raise TypeError(f"{op}: unexpected argument '{unknown[0]}'")
        self.op = op
        self.data = data
        self.source = GraphSource(op, data)
        self.num_neighbors = check_num_neighbors(op, num_neighbors)
        subgraph_type = str(getattr(subgraph_type, "value", subgraph_type))
        if not directed:
            subgraph_type = "induced"
        if subgraph_type not in ("directional", "bidirectional", "induced"):
            raise ValueError(f"{op}: subgraph_type '{subgraph_type}' must be 'directional', 'bidirectional' or "
                             f"'induced'")
        if temporal_strategy not in ("uniform", "last"):
            raise ValueError(f"{op}: temporal_strategy '{temporal_strategy}' must be 'uniform' or 'last'")
        self.subgraph_type = subgraph_type
        self.temporal_strategy = temporal_strategy
        self.time_attr = time_attr
        self.weight_attr = weight_attr
        self.replace = bool(replace)
        self.disjoint = bool(disjoint) or time_attr is not None  # PyG: temporal sampling is disjoint
        if self.disjoint and subgraph_type == "induced":
            raise ValueError(f"{op}: subgraph_type 'induced' with disjoint subgraphs is not supported")
        set_batching_args(self, op, batch_size, shuffle, drop_last, transform, num_threads, prefetch, seed)
        if not isinstance(overlap, bool):
            raise ValueError(f"{op}: overlap must be True or False (got {overlap!r})")
        self.overlap = overlap
        self.pin_memory = check_pin_memory(op, pin_memory)
        self.input_nodes = check_input_nodes(op, input_nodes, self.source.num_nodes, allow_repeats=self.disjoint)
        self.input_time = self._check_input_time(input_time)
        self.graph = self.source.csc(weight_attr, time_attr, sort_by_time=temporal_strategy == "last")
        self._node_tensors = self.source.tables(self.source.node_keys)
        self._edge_tensors = self.source.tables(self.source.edge_keys)
        self.pipeline = self._make_pipeline()
        self._epoch = 0
        self._active: Optional["_Epoch"] = None

    def _check_input_time(self, input_time: Any) -> Optional[torch.Tensor]:
        if input_time is None:
            return None
        if self.time_attr is None:
            raise ValueError(f"{self.op}: input_time needs time_attr (temporal sampling)")
        t = torch.as_tensor(input_time)
        if t.dim() != 1 or t.numel() != self.input_nodes.numel() or t.is_floating_point():
            raise ValueError(f"{self.op}: input_time must be a 1-D integer tensor with one entry per input node "
                             f"({self.input_nodes.numel()}), got {t.dtype} {list(t.shape)}")
        return t.to("cpu", torch.int64).contiguous()

    def _make_pipeline(self) -> Any:
        try:
            return _edgewise.BatchPipeline(
                self.graph, self.num_neighbors, self.input_nodes, input_time=self.input_time,
                node_tables=self._node_tensors, edge_tables=self._edge_tensors, replace=self.replace,
                directed=self.subgraph_type != "induced", disjoint=self.disjoint,
                temporal_strategy=self.temporal_strategy, batch_size=self.batch_size, shuffle=self.shuffle,
                drop_last=self.drop_last, seed=self.seed, num_threads=self.num_threads,
                queue_depth=self.prefetch, overlap=self.overlap, pin_memory=self.pin_memory)
        except ValueError as error:
            raise ValueError(f"{self.op}: {str(error).split(': ', 1)[-1]}") from None

    def __len__(self) -> int:
        return int(self.pipeline.num_batches)

    def _start_epoch(self, epoch: int) -> None:
        self.pipeline.start_epoch(epoch)

    def __iter__(self) -> Iterator[Any]:
        self.source.check_unchanged()
        if self._active is not None:
            self._active.close()
        if self.source.attributes_replaced():
            # data.x = ... (a new tensor, or attributes added / removed) since the last
            # pass: gather from what data holds now, as PyG's loader would.
            self.source = GraphSource(self.op, self.data)
            self._node_tensors = self.source.tables(self.source.node_keys)
            self._edge_tensors = self.source.tables(self.source.edge_keys)
            self.pipeline = self._make_pipeline()
        self._active = _Epoch(self, self._epoch)
        self._epoch += 1
        return self._active

    def _batch(self, out: Dict[str, Any]) -> Any:
        fields = self._sampled_fields(out)
        input_id = torch.from_dlpack(out["input_id"])
        fields["input_id"] = input_id
        fields["seed_time"] = self._seed_time(input_id)
        fields["batch_size"] = input_id.numel()
        return self._finish(fields, ("batch", "seed_time", "num_sampled_nodes", "num_sampled_edges"))

    def _sampled_fields(self, out: Dict[str, Any]) -> Dict[str, Any]:
        """The sample's fields every loader's batch has: data's attributes sliced to it,
        edge_index, n_id, e_id, batch, num_sampled_nodes / edges."""
        node = torch.from_dlpack(out["node"])
        edge = torch.from_dlpack(out["edge"])
        fields: Dict[str, Any] = dict(self.source.other)
        for key, capsule in zip(self.source.node_keys, out["node_rows"]):
            fields[key] = torch.from_dlpack(capsule)
        for key, capsule in zip(self.source.edge_keys, out["edge_rows"]):
            fields[key] = torch.from_dlpack(capsule)
        # Built on the sampling thread: a torch op here would compete with it for the cores.
        fields["edge_index"] = torch.from_dlpack(out["edge_index"])
        if self.source.has_num_nodes:
            fields["num_nodes"] = node.numel()
        fields["n_id"] = node
        fields["e_id"] = edge
        fields["batch"] = torch.from_dlpack(out["batch"]) if out["batch"] is not None else None
        fields["num_sampled_nodes"] = list(out["num_sampled_nodes"])
        fields["num_sampled_edges"] = list(out["num_sampled_edges"])
        if self.subgraph_type == "bidirectional":
            _make_bidirectional(fields, self.source.edge_keys, node.numel())
        return fields

    def _finish(self, fields: Dict[str, Any], none_keys: Tuple[str, ...]) -> Any:
        """The batch object (PyG Data, else SampledData), transformed. Keys in
        none_keys stay attributes (None) when unset, as PyG's loaders leave them."""
        if self.source.pyg:
            from torch_geometric.data import Data
            data = Data(**{k: v for k, v in fields.items() if v is not None})
            for key in none_keys:
                if fields.get(key) is None:
                    setattr(data, key, None)
        else:
            data = SampledData(**fields)
        if self.transform is not None:
            data = self.transform(data)
        return pin_batch(data) if self.pin_memory else data

    def _seed_time(self, input_id: torch.Tensor) -> Optional[torch.Tensor]:
        if self.time_attr is None:
            return None
        if self.input_time is not None:
            return self.input_time[input_id]
        node_time, _ = self.source.node_time(self.time_attr)
        if node_time is None:
            return None
        return node_time[self.input_nodes[input_id]]

    def __repr__(self) -> str:
        return f"{self.op}(num_neighbors={self.num_neighbors}, batch_size={self.batch_size}, batches={len(self)})"


def _make_bidirectional(fields: Dict[str, Any], edge_keys: List[str], num_nodes: int) -> None:
    """PyG's subgraph_type="bidirectional" (SamplerOutput.to_bidirectional): every sampled
    edge also reversed, duplicates merged, ordered by (target, source); a merged edge keeps
    the id (and the edge attributes) of its last copy in that order, the original edges
    before the reversed ones. The per-hop counts no longer apply (None, as in PyG)."""
    row, col = fields["edge_index"]
    both = torch.stack([torch.cat([row, col]), torch.cat([col, row])])
    key, order = torch.sort(both[1] * max(num_nodes, 1) + both[0], stable=True)
    last = torch.ones_like(key, dtype=torch.bool)
    last[:-1] = key[1:] != key[:-1]
    kept = order[last]
    fields["edge_index"] = both[:, kept]
    original = kept % max(row.numel(), 1)
    fields["e_id"] = fields["e_id"][original]
    for key_name in edge_keys:
        fields[key_name] = fields[key_name][original]
    fields["num_sampled_nodes"] = fields["num_sampled_edges"] = None


class _Epoch:
    """One pass over a loader; a newer pass (iter(loader) again) ends this one."""

    def __init__(self, loader: NeighborLoader, epoch: int) -> None:
        self.loader = loader
        self.closed = False
        loader._start_epoch(epoch)

    def __iter__(self) -> "_Epoch":
        return self

    def __next__(self) -> Any:
        if self.closed:
            raise StopIteration
        self.loader.source.check_unchanged()
        try:
            out = self.loader.pipeline.next()
        except BaseException:
            self.close()
            raise
        if out is None:
            self.closed = True
            raise StopIteration
        return self.loader._batch(out)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.loader.pipeline.stop()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
