"""The CSR (by destination) and its transpose of a PyG edge list, bipartite sizes allowed.

``edge_index`` [2, E] carries messages from row ``j`` to row ``i`` (PyG's flow:
j = 0, i = 1 for "source_to_target"). The result's offsets have ``num_dst + 1``
entries and the transpose's ``num_src + 1``, as the spmm operators expect for x of
``num_src`` rows and an output of ``num_dst`` rows. Built once per graph contents
(``ContentGraphCache``), so a fresh but equal edge list each forward (GCN's self
loops) is a hit. ``None`` when an index lies outside its range: the caller then runs
PyG's own code, which raises PyG's error.
"""

from typing import NamedTuple, Optional

import torch
from torch import Tensor

from .. import _spmm_ops
from ..nn._graph_cache import ContentGraphCache

_CACHE = ContentGraphCache(capacity=4)


class BipartiteCSR(NamedTuple):
    offsets: Tensor
    sources: Tensor
    edge_ids: Tensor  # input position of each CSR edge
    t_offsets: Tensor
    t_targets: Tensor
    t_edge_ids: Tensor  # CSR position of each transposed edge


def _in_range(row: Tensor, size: int) -> bool:
    if row.numel() == 0:
        return True
    lo, hi = torch.aminmax(row)
    return int(lo) >= 0 and int(hi) < size


def _build(edge_index: Tensor, src_row: int, num_src: int, num_dst: int) -> Optional[BipartiteCSR]:
    src, dst = edge_index[src_row], edge_index[1 - src_row]
    if not torch.compiler.is_compiling() and not (_in_range(src, num_src) and _in_range(dst, num_dst)):
        return None
    nodes = max(num_src, num_dst)
    directed = torch.stack([src, dst]).to(torch.int64)
    offsets, sources, edge_ids, t_offsets, t_targets, t_edge_ids = _spmm_ops.csr_from_edge_index(directed, nodes)
    # Rows past num_dst (columns past num_src) hold no edges: the slices drop only empty rows.
    return BipartiteCSR(offsets[: num_dst + 1], sources, edge_ids, t_offsets[: num_src + 1], t_targets, t_edge_ids)


def bipartite_csr(edge_index: Tensor, src_row: int, num_src: int, num_dst: int) -> Optional[BipartiteCSR]:
    """The structure of edge_index's messages from row ``src_row`` into ``num_dst`` outputs."""
    return _CACHE.get(edge_index, (src_row, num_src, num_dst),
                      lambda: _build(edge_index, src_row, num_src, num_dst))


def clear_cache():
    _CACHE.clear()


def cache_builds() -> int:
    return _CACHE.builds
