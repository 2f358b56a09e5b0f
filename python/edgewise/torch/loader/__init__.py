"""Loaders for graphs too big for full-batch training: sampled neighbourhoods as
minibatches, prepared by native threads (``NeighborLoader``), with PyG's arguments
and PyG ``Data`` batches (a :class:`SampledData` where torch_geometric is absent), or
``HeteroData`` batches from ``HeteroData`` with per-edge-type fanouts;
``LinkNeighborLoader``: minibatches around label edges (with negatives), prepared
the same way."""

from ._hetero_neighbor_loader import HeteroNeighborLoader
from ._link_neighbor_loader import LinkNeighborLoader
from ._graph_source import default_num_threads
from ._neighbor_loader import NeighborLoader
from ._sampled_data import SampledData

__all__ = ["HeteroNeighborLoader", "LinkNeighborLoader", "NeighborLoader", "SampledData", "default_num_threads"]
