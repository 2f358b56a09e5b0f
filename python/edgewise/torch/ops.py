"""Every public operator of edgewise.torch in one namespace (``edgewise.torch.ops``).

The torch_scatter API (``scatter*``, ``segment_*_csr``, ``segment_*_coo``,
``gather_csr``, ``gather_coo``, ``scatter_std`` / ``logsumexp`` / ``softmax`` /
``log_softmax``), the fused ``spmm`` over a :class:`CSR`, and the attention
primitives. Each family lives in its own module; this one only gathers them.
"""

from ._attention import attention_aggregate, edge_softmax, sddmm_add, sddmm_dot  # noqa: F401
from ._composite import scatter_log_softmax, scatter_logsumexp, scatter_softmax, scatter_std  # noqa: F401
from ._scatter import (  # noqa: F401
    scatter,
    scatter_add,
    scatter_max,
    scatter_mean,
    scatter_min,
    scatter_mul,
    scatter_sum,
)
from ._segment_coo import (  # noqa: F401
    gather_coo,
    segment_add_coo,
    segment_coo,
    segment_max_coo,
    segment_mean_coo,
    segment_min_coo,
    segment_sum_coo,
)
from ._segment_csr import (  # noqa: F401
    gather_csr,
    segment_add_csr,
    segment_csr,
    segment_max_csr,
    segment_mean_csr,
    segment_min_csr,
    segment_sum_csr,
)
from ._spmm import CSR, spmm, spmm_csr  # noqa: F401
from ._typed_matmul import grouped_matmul, segment_matmul  # noqa: F401

# torch_scatter's public names (its __all__ without the module and __version__).
TORCH_SCATTER_API = (
    "scatter_sum", "scatter_add", "scatter_mul", "scatter_mean", "scatter_min", "scatter_max", "scatter",
    "segment_sum_csr", "segment_add_csr", "segment_mean_csr", "segment_min_csr", "segment_max_csr", "segment_csr",
    "gather_csr", "segment_sum_coo", "segment_add_coo", "segment_mean_coo", "segment_min_coo", "segment_max_coo",
    "segment_coo", "gather_coo", "scatter_std", "scatter_logsumexp", "scatter_softmax", "scatter_log_softmax",
)

__all__ = list(TORCH_SCATTER_API) + ["CSR", "attention_aggregate", "edge_softmax", "sddmm_add", "sddmm_dot",
                                     "grouped_matmul", "segment_matmul", "spmm", "spmm_csr"]
