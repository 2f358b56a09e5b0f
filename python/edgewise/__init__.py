"""Edgewise: graph-neural-network message-passing primitives and engine.

NumPy arrays in, NumPy arrays out; C-contiguous inputs of the right dtype are
used without copying. Bad input raises ValueError with the C++ message.
train() trains a GCN / GraphSAGE / GIN node classifier on a named dataset or on
in-memory graph data (e.g. a torch_geometric Data) and returns a TrainResult.
"""

from ._edgewise import (  # noqa: F401
    __version__,
    cuda_built,
    cuda_device_count,
    empty_host_cache,
    memory_stats,
    offsets_from_keys,
    reduce_ops,
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
    node_ordering,
    spmm,
    spmm_arg_backward,
    spmm_backward,
    spmm_weight_backward,
)
from ._edgewise import (  # noqa: F401
    edge_gather_sum,
    edge_softmax,
    edge_softmax_backward,
    sddmm_add,
    sddmm_dot,
)
from ._edgewise import grouped_matmul, segment_matmul, segment_matmul_weight_grad  # noqa: F401
from ._edgewise import (  # noqa: F401
    LayerwiseSampler,
    NeighborSampler,
    SeedSampler,
)
from ._edgewise import load_graph_dataset, train_graph_classifier  # noqa: F401
from ._training import TrainResult, train
from . import hetero  # noqa: E402  (NumPy only: the mag-shaped generator, the .npz layout)

__all__ = [
    "__version__",
    "hetero",
    "cuda_built",
    "cuda_device_count",
    "empty_host_cache",
    "memory_stats",
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
    "node_ordering",
    "train",
    "TrainResult",
    "spmm",
    "spmm_arg_backward",
    "spmm_backward",
    "spmm_weight_backward",
    "edge_gather_sum",
    "edge_softmax",
    "edge_softmax_backward",
    "sddmm_add",
    "sddmm_dot",
    "grouped_matmul",
    "segment_matmul",
    "segment_matmul_weight_grad",
    "LayerwiseSampler",
    "NeighborSampler",
    "SeedSampler",
    "load_graph_dataset",
    "train_graph_classifier",
]
