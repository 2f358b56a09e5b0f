"""Edgewise: graph-neural-network message-passing primitives and engine.

NumPy arrays in, NumPy arrays out; C-contiguous inputs of the right dtype are
used without copying. Bad input raises ValueError with the C++ message.
"""

from ._edgewise import (  # noqa: F401
    __version__,
    cuda_built,
    cuda_device_count,
    offsets_from_keys,
    run_length_encode,
    scatter_reduce,
    galloping_search,
    segment_reduce,
    SegmentTree,
    sort_by_key,
    unique,
)
from ._edgewise import (  # noqa: F401
    DataFileError,
    default_data_dir,
    load_dataset,
    planted_partition,
    read_npz,
    rmat_graph,
    Graph,
    train,
    spmm,
    spmm_arg_backward,
    spmm_backward,
    spmm_weight_backward,
)
from ._edgewise import (  # noqa: F401
    LayerwiseSampler,
    NeighborSampler,
    SeedSampler,
)

__all__ = [
    "__version__",
    "cuda_built",
    "cuda_device_count",
    "offsets_from_keys",
    "run_length_encode",
    "scatter_reduce",
    "galloping_search",
    "segment_reduce",
    "SegmentTree",
    "sort_by_key",
    "unique",
    "DataFileError",
    "default_data_dir",
    "load_dataset",
    "planted_partition",
    "read_npz",
    "rmat_graph",
    "Graph",
    "train",
    "spmm",
    "spmm_arg_backward",
    "spmm_backward",
    "spmm_weight_backward",
    "LayerwiseSampler",
    "NeighborSampler",
    "SeedSampler",
]
