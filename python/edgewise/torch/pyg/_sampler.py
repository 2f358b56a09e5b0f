"""PyG's homogeneous neighbour sampling on Edgewise's HopSampler: the replacement of
``torch_geometric.sampler.NeighborSampler._sample`` that accelerate() installs (so
PyG's own NeighborLoader / LinkNeighborLoader run without pyg-lib or torch-sparse),
and ``NeighborSampler``, a PyG BaseSampler that always uses it."""

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


def make_neighbor_sample(original: Callable) -> Callable:
    """NeighborSampler._sample: homogeneous seeds on Edgewise, heterogeneous ones (a dict)
    on PyG's code."""

    def _sample(self, seed, seed_time=None, **kwargs):
        if isinstance(seed, dict):
            return original(self, seed, seed_time, **kwargs)
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
        ``NodeLoader`` / ``LinkLoader`` take) whose homogeneous sampling runs on
        Edgewise's HopSampler: no pyg-lib or torch-sparse needed."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            with warnings.catch_warnings(), _sampling_features_enabled():
                warnings.filterwarnings("ignore", message=".*without a 'pyg-lib' installation.*")
                super().__init__(*args, **kwargs)

        def _sample(self, seed, seed_time=None, **kwargs):
            if isinstance(seed, dict):
                return super()._sample(seed, seed_time, **kwargs)
            return sample_homogeneous(self, seed, seed_time)

    return NeighborSampler
