"""Loaders for graphs too big for full-batch training: sampled neighbourhoods as
minibatches, prepared by native threads (``NeighborLoader``), with PyG's arguments
and PyG ``Data`` batches (a :class:`SampledData` where torch_geometric is absent)."""

from ._neighbor_loader import NeighborLoader, default_num_threads
from ._sampled_data import SampledData

__all__ = ["NeighborLoader", "SampledData", "default_num_threads"]
