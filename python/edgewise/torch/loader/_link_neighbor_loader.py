"""LinkNeighborLoader: PyG's LinkNeighborLoader whose sampling runs on Edgewise's HopSampler."""

from typing import Any, List

# Arguments PyG's LinkNeighborLoader hands to its NeighborSampler.
_SAMPLER_ARGS = ("subgraph_type", "replace", "disjoint", "temporal_strategy", "time_attr", "weight_attr", "is_sorted",
                 "share_memory", "directed")


def LinkNeighborLoader(data: Any, num_neighbors: List[int], **kwargs: Any) -> Any:
    """``torch_geometric.loader.LinkNeighborLoader`` (same arguments: ``edge_label_index``,
    ``edge_label``, ``edge_label_time``, ``neg_sampling`` / ``neg_sampling_ratio``,
    ``batch_size``, ...) with ``edgewise.torch.pyg.NeighborSampler`` as its sampler: it
    runs without pyg-lib or torch-sparse. Batches are PyG's (``edge_label_index``,
    ``edge_label``, ``n_id``, ``e_id``, ``input_id``, ...), prepared by PyG's DataLoader
    (its ``num_workers``), not by NeighborLoader's native threads. Needs torch_geometric."""
    try:
        from torch_geometric.loader import LinkNeighborLoader as PygLinkNeighborLoader
    except ImportError as error:
        raise ImportError("edgewise.torch.loader.LinkNeighborLoader builds on torch_geometric's LinkLoader: "
                          "install torch_geometric (pip install torch_geometric)") from error
    from ..pyg import NeighborSampler

    if isinstance(num_neighbors, dict):
        raise ValueError("LinkNeighborLoader: num_neighbors as a dict is for heterogeneous graphs, which this "
                         "loader does not sample; pass a list of ints")
    sampler_kwargs = {k: kwargs[k] for k in _SAMPLER_ARGS if k in kwargs}
    sampler = NeighborSampler(data, num_neighbors=num_neighbors, **sampler_kwargs)
    return PygLinkNeighborLoader(data, num_neighbors=num_neighbors, neighbor_sampler=sampler, **kwargs)
