"""PyG's neighbour sampling on Edgewise's HopSampler (homogeneous) and HeteroHopSampler
(typed): the replacement of ``torch_geometric.sampler.NeighborSampler._sample`` that
accelerate() installs (so PyG's own NeighborLoader / LinkNeighborLoader run without
pyg-lib or torch-sparse, on Data and HeteroData), and ``NeighborSampler``, a PyG
BaseSampler that always uses it."""

import contextlib
import functools
import threading
import warnings
from typing import Any, Callable, Optional

import torch

from ... import _edgewise


# pyg-lib features PyG's NeighborSampler checks for at construction (weights, edge
# times); HopSampler has both.
SAMPLING_FEATURES = ("WITH_WEIGHTED_NEIGHBOR_SAMPLE", "WITH_EDGE_TIME_NEIGHBOR_SAMPLE")
_features_lock = threading.Lock()


@contextlib.contextmanager
def _sampling_features_enabled():
    import torch_geometric.typing as pyg_typing

    with _features_lock:
        saved = {name: getattr(pyg_typing, name, False) for name in SAMPLING_FEATURES}
        for name in SAMPLING_FEATURES:
            setattr(pyg_typing, name, True)
        try:
            yield
        finally:
            for name, value in saved.items():
                setattr(pyg_typing, name, value)


def _sampler_of(sampler: Any) -> Any:
    """The HopSampler for a PyG NeighborSampler's CSC and options, built once."""
    num_neighbors = list(sampler.num_neighbors.get_mapped_values())
    key = (id(sampler.colptr), id(sampler.row), tuple(num_neighbors), bool(sampler.replace), bool(sampler.disjoint),
           str(sampler.subgraph_type), sampler.temporal_strategy)
    cached = sampler.__dict__.get("_edgewise_hop_sampler")
    if cached is not None and cached[0] == key:
        return cached[1]

    def int64(t: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
        return None if t is None else t.detach().to("cpu", torch.int64).contiguous()

    weight = sampler.edge_weight
    graph = _edgewise.CscGraph.from_csc(
        int64(sampler.colptr), int64(sampler.row),
        edge_weight=None if weight is None else weight.detach().to("cpu", torch.float64).contiguous(),
        edge_time=int64(sampler.edge_time), node_time=int64(sampler.node_time))
    induced = str(getattr(sampler.subgraph_type, "value", sampler.subgraph_type)) == "induced"
    hop = _edgewise.HopSampler(graph, num_neighbors, replace=bool(sampler.replace), directed=not induced,
                               disjoint=bool(sampler.disjoint), temporal_strategy=sampler.temporal_strategy)
    sampler.__dict__["_edgewise_hop_sampler"] = (key, hop)
    return hop


def sample_homogeneous(sampler: Any, seed: torch.Tensor, seed_time: Optional[torch.Tensor]) -> Any:
    """What pyg-lib's neighbor_sample returns, as PyG's SamplerOutput (edge: CSC positions,
    which PyG maps through edge_permutation). The draws follow torch's generator."""
    from torch_geometric.sampler import SamplerOutput

    hop = _sampler_of(sampler)
    draw_seed = int(torch.randint(0, 2**62, ()).item())
    out = hop.sample(seed.detach().to("cpu", torch.int64).contiguous(),
                     None if seed_time is None else seed_time.detach().to("cpu", torch.int64).contiguous(),
                     seed=draw_seed)
    row, col = torch.from_dlpack(out["row"]), torch.from_dlpack(out["col"])
    if getattr(sampler, "sample_direction", "forward") == "backward":
        row, col = col, row
    return SamplerOutput(node=torch.from_dlpack(out["node"]), row=row, col=col, edge=torch.from_dlpack(out["edge"]),
                         batch=torch.from_dlpack(out["batch"]) if out["batch"] is not None else None,
                         num_sampled_nodes=list(out["num_sampled_nodes"]),
                         num_sampled_edges=list(out["num_sampled_edges"]))


def _hetero_sampler_of(sampler: Any) -> Any:
    """The HeteroHopSampler for a PyG NeighborSampler's per-edge-type CSC and options,
    built once: each edge type's CSC read back as its edge list in CSC order, so the
    edge ids sampled are CSC positions, as pyg-lib's (PyG maps them through perm)."""
    rels = [sampler.to_rel_type[e] for e in sampler.edge_types]
    mapped = sampler.num_neighbors.get_mapped_values(sampler.edge_types)
    induced = str(getattr(sampler.subgraph_type, "value", sampler.subgraph_type)) == "induced"
    key = (tuple(id(sampler.colptr_dict[r]) for r in rels), tuple(id(sampler.row_dict[r]) for r in rels),
           tuple(tuple(mapped[r]) for r in rels), bool(sampler.replace), bool(sampler.disjoint),
           sampler.temporal_strategy, induced)
    cached = sampler.__dict__.get("_edgewise_hetero_hop_sampler")
    if cached is not None and cached[0] == key:
        return cached[1]
    node_types = list(sampler.node_types)
    position = {t: i for i, t in enumerate(node_types)}
    edge_weight, edge_time = sampler.edge_weight or {}, sampler.edge_time or {}
    relations = []
    for edge_type, rel in zip(sampler.edge_types, rels):
        colptr = sampler.colptr_dict[rel].detach().to("cpu", torch.int64)
        dst = torch.repeat_interleave(torch.arange(colptr.numel() - 1), colptr.diff())
        edge_index = torch.stack([sampler.row_dict[rel].detach().to("cpu", torch.int64), dst])
        weight, time = edge_weight.get(rel), edge_time.get(rel)
        relations.append((rel, position[edge_type[0]], position[edge_type[2]], edge_index,
                          None if weight is None else weight.detach().to("cpu", torch.float64).contiguous(),
                          None if time is None else time.detach().to("cpu", torch.int64).contiguous()))
    node_time = None
    if sampler.node_time is not None:
        node_time = [None if sampler.node_time.get(t) is None else
                     sampler.node_time[t].detach().to("cpu", torch.int64).contiguous() for t in node_types]
    hop = _edgewise.HeteroHopSampler([int(sampler.num_nodes[t]) for t in node_types], relations,
                                     [list(mapped[r]) for r in rels], replace=bool(sampler.replace),
                                     disjoint=bool(sampler.disjoint), temporal_strategy=sampler.temporal_strategy,
                                     node_time=node_time, directed=not induced)
    sampler.__dict__["_edgewise_hetero_hop_sampler"] = (key, hop)
    return hop


def sample_heterogeneous(sampler: Any, seed: dict, seed_time: Optional[dict]) -> Any:
    """What pyg-lib's hetero_neighbor_sample returns, as PyG's HeteroSamplerOutput (edges
    keyed by edge type, restored to forward types under backward sampling). The draws
    follow torch's generator."""
    from torch_geometric.sampler import HeteroSamplerOutput

    hop = _hetero_sampler_of(sampler)
    node_types, edge_types = list(sampler.node_types), list(sampler.edge_types)

    def per_type(values: Optional[dict]) -> Optional[list]:
        if values is None:
            return None
        return [None if values.get(t) is None else values[t].detach().to("cpu", torch.int64).contiguous()
                for t in node_types]

    draw_seed = int(torch.randint(0, 2**62, ()).item())
    out = hop.sample(per_type(seed), seed=draw_seed, seed_time=per_type(seed_time))
    node = {t: torch.from_dlpack(c) for t, c in zip(node_types, out["node"])}
    row = {e: torch.from_dlpack(c) for e, c in zip(edge_types, out["row"])}
    col = {e: torch.from_dlpack(c) for e, c in zip(edge_types, out["col"])}
    edge = {e: torch.from_dlpack(c) for e, c in zip(edge_types, out["edge"])}
    batch = None
    if out["batch"] is not None:
        batch = {t: torch.from_dlpack(c) for t, c in zip(node_types, out["batch"])}
    num_sampled_nodes = {t: list(v) for t, v in zip(node_types, out["num_sampled_nodes"])}
    num_sampled_edges = {e: list(v) for e, v in zip(edge_types, out["num_sampled_edges"])}
    if getattr(sampler, "sample_direction", "forward") == "backward":
        restore = sampler.to_restored_edge_type
        row, col = col, row
        row, col, edge, num_sampled_edges = ({restore[k]: v for k, v in d.items()}
                                             for d in (row, col, edge, num_sampled_edges))
    return HeteroSamplerOutput(node=node, row=row, col=col, edge=edge, batch=batch,
                               num_sampled_nodes=num_sampled_nodes, num_sampled_edges=num_sampled_edges)


def make_neighbor_sample(original: Callable) -> Callable:
    """NeighborSampler._sample on Edgewise: homogeneous seeds on HopSampler, typed ones (a
    dict) on HeteroHopSampler."""

    def _sample(self, seed, seed_time=None, **kwargs):
        if isinstance(seed, dict):
            return sample_heterogeneous(self, seed, seed_time)
        return sample_homogeneous(self, seed, seed_time)

    _sample.__edgewise_original__ = original
    _sample.__doc__ = original.__doc__
    return _sample


@functools.lru_cache(maxsize=None)
def neighbor_sampler_class() -> type:
    """edgewise.torch.pyg.NeighborSampler (made on first use: it subclasses PyG's)."""
    from torch_geometric.sampler import NeighborSampler as PygNeighborSampler

    class NeighborSampler(PygNeighborSampler):
        """PyG's ``NeighborSampler`` (same arguments, a ``BaseSampler`` that PyG's
        ``NodeLoader`` / ``LinkLoader`` take) whose sampling runs on Edgewise's
        HopSampler (``Data``) and HeteroHopSampler (``HeteroData``): no pyg-lib or
        torch-sparse needed."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            with warnings.catch_warnings(), _sampling_features_enabled():
                warnings.filterwarnings("ignore", message=".*without a 'pyg-lib' installation.*")
                super().__init__(*args, **kwargs)

        def _sample(self, seed, seed_time=None, **kwargs):
            if isinstance(seed, dict):
                return sample_heterogeneous(self, seed, seed_time)
            return sample_homogeneous(self, seed, seed_time)

    return NeighborSampler
