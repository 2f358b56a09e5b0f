"""What a loader reads from its ``data``: the graph (as a cached CscGraph), node- and
edge-level tensors, and the checks that name the argument at fault."""

import math
import os
import sys
import warnings
import weakref
from typing import Any, Dict, List, Optional, Tuple

import torch

from ... import _edgewise

# id(edge_index) -> (weak reference to it, {(weight_attr, time_attr, sort_by_time, N): (graph
# version, CscGraph)}): the train / validation / test loaders of one graph share its
# CscGraph. Keyed by id (tensors compare elementwise), dropped when the tensor goes.
_CSC_CACHE: Dict[int, Tuple[Any, Dict[Tuple, Tuple[Any, Any]]]] = {}


def _cache_of(edge_index: torch.Tensor) -> Dict[Tuple, Tuple[Any, Any]]:
    key = id(edge_index)
    entry = _CSC_CACHE.get(key)
    if entry is None or entry[0]() is not edge_index:
        entry = (weakref.ref(edge_index), {})
        _CSC_CACHE[key] = entry
        weakref.finalize(edge_index, _CSC_CACHE.pop, key, None)
    return entry[1]


def is_pyg_data(data: Any) -> bool:
    # A PyG Data exists only once torch_geometric.data is imported: never import it here
    # (that alone takes seconds).
    module = sys.modules.get("torch_geometric.data")
    return module is not None and isinstance(data, module.Data)


def _items(data: Any) -> List[Tuple[str, Any]]:
    if is_pyg_data(data):
        return list(data.items())
    if isinstance(data, dict):
        return list(data.items())
    raise TypeError(f"data must be a torch_geometric.data.Data or a dict of tensors (got {type(data).__name__})")


class GraphSource:
    """The parts of ``data`` a loader uses, checked once, before any thread starts."""

    def __init__(self, op: str, data: Any) -> None:
        self.op = op
        self.data = data
        self.pyg = is_pyg_data(data)
        items = _items(data)
        fields = dict(items)
        if "edge_index" not in fields or not isinstance(fields["edge_index"], torch.Tensor):
            raise ValueError(f"{op}: data has no edge_index tensor")
        edge_index = fields["edge_index"]
        if edge_index.dim() != 2 or edge_index.size(0) != 2:
            raise ValueError(f"{op}: data.edge_index must be [2, E] (got {list(edge_index.shape)})")
        if edge_index.is_floating_point() or edge_index.dtype == torch.bool or edge_index.is_complex():
            raise ValueError(f"{op}: data.edge_index must hold integers (got {edge_index.dtype})")
        if edge_index.layout != torch.strided:
            raise ValueError(f"{op}: data.edge_index must be a dense tensor (got {edge_index.layout})")
        self.edge_index = edge_index
        self.num_edges = int(edge_index.size(1))
        if self.pyg:
            self.num_nodes = int(data.num_nodes)
        elif "num_nodes" in fields:
            self.num_nodes = int(fields["num_nodes"])
        else:
            x = fields.get("x")
            self.num_nodes = int(x.size(0)) if isinstance(x, torch.Tensor) else (
                int(edge_index.max()) + 1 if self.num_edges else 0)
        self.has_num_nodes = "num_nodes" in fields if not self.pyg else "num_nodes" in data._store
        self.node_keys: List[str] = []
        self.edge_keys: List[str] = []
        self.other: Dict[str, Any] = {}
        for key, value in items:
            if key in ("edge_index", "num_nodes"):
                continue
            if isinstance(value, torch.Tensor) and value.dim() >= 1 and value.layout == torch.strided:
                if self._is_node_attr(key, value):
                    self.node_keys.append(key)
                    continue
                if self._is_edge_attr(key, value):
                    self.edge_keys.append(key)
                    continue
            self.other[key] = value
        self._version = self._graph_version()
        self._attributes = {key: id(value) for key, value in items}

    def _is_node_attr(self, key: str, value: torch.Tensor) -> bool:
        if self.pyg:
            return bool(self.data.is_node_attr(key))
        return value.size(0) == self.num_nodes

    def _is_edge_attr(self, key: str, value: torch.Tensor) -> bool:
        if self.pyg:
            return bool(self.data.is_edge_attr(key))
        return value.size(0) == self.num_edges

    def field(self, key: str) -> Any:
        return self.data[key]

    def _graph_version(self) -> Tuple[int, int, Tuple[int, ...]]:
        e = self.edge_index
        return (e._version, e.data_ptr(), tuple(e.shape))

    def check_unchanged(self) -> None:
        """ValueError when data.edge_index was modified or replaced since the loader was built."""
        current = self.data["edge_index"] if (self.pyg or isinstance(self.data, dict)) else self.edge_index
        if current is not self.edge_index or self._graph_version() != self._version:
            raise ValueError(f"{self.op}: data.edge_index changed after the loader was built; the sampled graph "
                             f"would no longer be the data's (build a new loader for the new graph)")

    def attributes_replaced(self) -> bool:
        """Whether data's attributes are other objects (or other keys) than when read."""
        return {key: id(value) for key, value in _items(self.data)} != self._attributes

    def node_time(self, time_attr: Optional[str]) -> Tuple[Optional[torch.Tensor], Optional[torch.Tensor]]:
        """(node_time, edge_time) for time_attr, one of them set; ValueError naming time_attr."""
        if time_attr is None:
            return None, None
        if time_attr in self.node_keys:
            t = self.field(time_attr)
            kind = "node"
        elif time_attr in self.edge_keys:
            t = self.field(time_attr)
            kind = "edge"
        else:
            raise ValueError(f"{self.op}: time_attr '{time_attr}' is neither a node-level nor an edge-level "
                             f"attribute of data")
        if t.dim() != 1 or t.is_floating_point() or t.dtype == torch.bool or t.is_complex():
            raise ValueError(f"{self.op}: time_attr '{time_attr}' must be a 1-D integer tensor "
                             f"(got {t.dtype}, shape {list(t.shape)})")
        return (t, None) if kind == "node" else (None, t)

    def edge_weight(self, weight_attr: Optional[str]) -> Optional[torch.Tensor]:
        if weight_attr is None:
            return None
        if weight_attr not in self.edge_keys:
            raise ValueError(f"{self.op}: weight_attr '{weight_attr}' is not an edge-level attribute of data")
        w = self.field(weight_attr)
        if w.dim() != 1 or not w.is_floating_point():
            raise ValueError(f"{self.op}: weight_attr '{weight_attr}' must be a 1-D floating-point tensor "
                             f"(got {w.dtype}, shape {list(w.shape)})")
        wd = w.detach().to("cpu", torch.float64)
        bad = ~(torch.isfinite(wd) & (wd >= 0))
        if bool(bad.any()):
            k = int(bad.nonzero()[0])
            raise ValueError(f"{self.op}: weight_attr '{weight_attr}'[{k}] ({float(wd[k])}) must be finite "
                             f"and >= 0")
        return wd

    def csc(self, weight_attr: Optional[str], time_attr: Optional[str], sort_by_time: bool) -> Any:
        """The CscGraph of the data's graph, shared by the loaders that read it the same way."""
        weight = self.edge_weight(weight_attr)
        node_time, edge_time = self.node_time(time_attr)
        key = (weight_attr, time_attr, sort_by_time and time_attr is not None, self.num_nodes)
        per_graph = _cache_of(self.edge_index)
        hit = per_graph.get(key)
        if hit is not None and hit[0] == self._version:
            return hit[1]
        ei = self.edge_index.detach().to("cpu", torch.int64).contiguous()
        try:
            graph = _edgewise.CscGraph(
                ei, self.num_nodes, edge_weight=weight,
                edge_time=None if edge_time is None else edge_time.detach().to("cpu", torch.int64).contiguous(),
                node_time=None if node_time is None else node_time.detach().to("cpu", torch.int64).contiguous(),
                sort_by_time=sort_by_time and time_attr is not None)
        except ValueError as error:
            raise ValueError(f"{self.op}: data.{str(error).split(': ', 1)[-1]}") from None
        per_graph[key] = (self._version, graph)
        return graph

    def tables(self, keys: List[str]) -> List[torch.Tensor]:
        """Each key's tensor as a contiguous CPU tensor the pipeline can borrow."""
        out = []
        for key in keys:
            t = self.field(key).detach()
            if t.device.type != "cpu":
                raise ValueError(f"{self.op}: data.{key} must be on the CPU (got {t.device}); the loader "
                                 f"gathers on the host (move each batch with .to(device))")
            out.append(t.contiguous())
        return out


def check_num_neighbors(op: str, num_neighbors: Any) -> List[int]:
    if isinstance(num_neighbors, dict):
        raise ValueError(f"{op}: num_neighbors as a dict is for heterogeneous graphs, which this loader does not "
                         f"sample; pass a list of ints")
    try:
        values = [int(v) for v in num_neighbors]
    except (TypeError, ValueError):
        raise ValueError(f"{op}: num_neighbors must be a list of ints (got {num_neighbors!r})") from None
    if not values:
        raise ValueError(f"{op}: num_neighbors must name at least one hop (got an empty list)")
    for h, v in enumerate(values):
        if v < -1:
            raise ValueError(f"{op}: num_neighbors[{h}] ({v}) must be >= 0, or -1 for every neighbour")
    if len(values) > 64:
        raise ValueError(f"{op}: num_neighbors names {len(values)} hops; at most 64")
    return values


def check_input_nodes(op: str, input_nodes: Any, num_nodes: int, allow_repeats: bool) -> torch.Tensor:
    """input_nodes (None, a bool mask, or node ids) as int64 ids; ValueError naming it."""
    if input_nodes is None:
        return torch.arange(num_nodes, dtype=torch.int64)
    if isinstance(input_nodes, (tuple, str)):
        raise ValueError(f"{op}: input_nodes of a node type is for heterogeneous graphs; pass node ids or a mask")
    t = torch.as_tensor(input_nodes)
    if t.dim() != 1:
        raise ValueError(f"{op}: input_nodes must be 1-D (got shape {list(t.shape)})")
    if t.dtype == torch.bool:
        if t.numel() != num_nodes:
            raise ValueError(f"{op}: input_nodes as a mask must hold one entry per node ({num_nodes}), "
                             f"got {t.numel()}")
        return t.cpu().nonzero().view(-1)
    if t.is_floating_point() or t.is_complex():
        raise ValueError(f"{op}: input_nodes must hold node ids (integers) or be a bool mask (got {t.dtype})")
    t = t.to("cpu", torch.int64)
    if t.numel():
        bad = (t < 0) | (t >= num_nodes)
        if bool(bad.any()):
            k = int(bad.nonzero()[0])
            raise ValueError(f"{op}: input_nodes[{k}] ({int(t[k])}) must lie in [0, {num_nodes})")
        if not allow_repeats:
            values, counts = torch.unique(t, return_counts=True)
            if bool((counts > 1).any()):
                v = int(values[counts > 1][0])
                positions = (t == v).nonzero().view(-1).tolist()
                raise ValueError(f"{op}: input_nodes[{positions[1]}] ({v}) repeats input_nodes[{positions[0]}]; "
                                 f"seeds must be distinct (or pass disjoint=True)")
    return t.contiguous()


def check_finite_int(op: str, name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or (isinstance(value, float) and not math.isfinite(value)):
        raise ValueError(f"{op}: {name} must be an int (got {value!r})")
    if value < low:
        raise ValueError(f"{op}: {name} ({value}) must be >= {low}")
    return value


def check_pin_memory(op: str, pin_memory: Any) -> bool:
    """pin_memory as it takes effect: page-locked memory needs a CUDA device torch sees
    (without one, a DataLoader's warning, and pageable memory)."""
    if not isinstance(pin_memory, bool):
        raise ValueError(f"{op}: pin_memory must be True or False (got {pin_memory!r})")
    if pin_memory and not torch.cuda.is_available():
        warnings.warn(f"{op}: pin_memory=True but torch finds no CUDA device; batches stay in pageable memory",
                      UserWarning, stacklevel=3)
        return False
    return pin_memory


def pin_batch(batch: Any) -> Any:
    """The batch with every tensor page-locked (PyG's Data.pin_memory; tensors already
    pinned, the rows the pipeline gathered, are kept as they are)."""
    pin = getattr(batch, "pin_memory", None)
    return pin() if callable(pin) else batch


def default_num_threads() -> int:
    """Sampling threads by default: half the cores (the other half trains)."""
    return max(1, min(8, (os.cpu_count() or 2) // 2))


def set_batching_args(loader: Any, op: str, batch_size: Any, shuffle: Any, drop_last: Any, transform: Any,
                      num_threads: Any, prefetch: Any, seed: Any) -> None:
    """The arguments every loader takes about batches and threads, checked and set on it;
    ``seed`` None draws one from torch's generator."""
    loader.batch_size = check_finite_int(op, "batch_size", batch_size, 1)
    loader.num_threads = check_finite_int(op, "num_threads",
                                          default_num_threads() if num_threads is None else num_threads, 1)
    loader.prefetch = check_finite_int(op, "prefetch", prefetch, 1)
    loader.shuffle = bool(shuffle)
    loader.drop_last = bool(drop_last)
    loader.transform = transform
    if seed is None:
        seed = int(torch.randint(0, 2**62, ()).item())
    loader.seed = check_finite_int(op, "seed", seed, 0)
