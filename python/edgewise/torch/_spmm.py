"""The fused gather-reduce ``spmm`` over an edge list or a prebuilt :class:`CSR`.

PyG's conventions: ``edge_index`` [2, E] with row 0 the source, row 1 the target;
``edge_weight`` [E] in edge_index order scales each message. reduce "max" / "min"
mirror PyG's max aggregation (torch's scatter_reduce amax / amin onto zeros): the
gradient of an output is split evenly among the messages equal to it, with one more
share where the output is 0 (tie rule ``split_zero_base``), so layers built on it
give PyG's gradients on tied inputs.
"""

from typing import Optional

import torch
from torch import Tensor

from . import _bridge, _checks, _spmm_ops

# mul / var / std as the kernels define them (torch_scatter's product; PyG's population
# variance and clamped std).
SPMM_REDUCES = ("sum", "add", "mean", "min", "max", "mul", "var", "std")
_FEATURE_DTYPES = (torch.float32, torch.float64)


def check_features(x, name: str, op: str) -> Tensor:
    """x for the spmm kernels: a float32 / float64 tensor on CPU or CUDA."""
    x = _checks.tensor(x, name, op)
    if x.dtype not in _FEATURE_DTYPES:
        raise ValueError(f"{op}: {name} must be float32 or float64 (got {x.dtype})")
    return x


def check_edge_index(edge_index, op: str, name: str = "edge_index") -> Tensor:
    edge_index = _checks.tensor(edge_index, name, op)
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"{op}: {name} must be [2, E] (got shape {tuple(edge_index.shape)})")
    if edge_index.dtype.is_floating_point or edge_index.dtype.is_complex or edge_index.dtype == torch.bool:
        raise ValueError(f"{op}: {name} must be an integer tensor (got {edge_index.dtype})")
    return edge_index


def check_edge_weight(edge_weight, edges: int, like: Tensor, op: str) -> Optional[Tensor]:
    """edge_weight: None or [E] (one weight per edge), on like's device."""
    if edge_weight is None:
        return None
    edge_weight = _checks.tensor(edge_weight, "edge_weight", op)
    if edge_weight.dim() != 1 or edge_weight.size(0) != edges:
        raise ValueError(f"{op}: edge_weight must be [E] with E = {edges} edges (got shape "
                         f"{tuple(edge_weight.shape)})")
    if not edge_weight.is_floating_point():
        raise ValueError(f"{op}: edge_weight must be a floating-point tensor (got {edge_weight.dtype})")
    _checks.same_device(edge_weight, "edge_weight", like, op, "x")
    return edge_weight


class CSR:
    """A graph's CSR by destination plus its transpose, as the spmm operators take it.

    Build with ``CSR.from_edge_index``; ``weight`` (CSR order) is optional.
    ``num_nodes`` counts destinations (output rows), ``num_sources`` the rows of x
    (equal unless built bipartite). Built outside torch.compile, the transpose (by
    source, for gradients with respect to x) is made on first use: a layer whose
    input needs no gradient, as a sampled batch's first layer, never pays for it.
    """

    __slots__ = ("offsets", "sources", "edge_ids", "_transpose", "_make_transpose", "num_nodes", "num_sources")

    def __init__(self, offsets, sources, edge_ids, t_offsets=None, t_targets=None, t_edge_ids=None,
                 make_transpose=None, num_sources=None):
        """Either the transpose's three tensors, or make_transpose() giving them on first
        use with num_sources given."""
        self.offsets, self.sources, self.edge_ids = offsets, sources, edge_ids
        self.num_nodes = offsets.size(0) - 1
        if make_transpose is None:
            self._transpose, self._make_transpose = (t_offsets, t_targets, t_edge_ids), None
            self.num_sources = t_offsets.size(0) - 1
        else:
            self._transpose, self._make_transpose = None, make_transpose
            self.num_sources = num_sources

    def _transposed(self):
        if self._transpose is None:
            self._transpose = tuple(self._make_transpose())
            self._make_transpose = None
        return self._transpose

    @property
    def t_offsets(self) -> Tensor:
        return self._transposed()[0]

    @property
    def t_targets(self) -> Tensor:
        return self._transposed()[1]

    @property
    def t_edge_ids(self) -> Tensor:
        return self._transposed()[2]

    def transpose_or_placeholders(self, needed: bool):
        """(t_offsets, t_targets, t_edge_ids), or empty stand-ins when no backward will
        read them (an operator's input that needs no gradient)."""
        if needed or self._transpose is not None:
            return self._transposed()
        empty = self.offsets.new_empty(0)
        return self.offsets.new_zeros(1), self.sources.new_empty(0), empty

    @property
    def num_edges(self) -> int:
        return self.sources.size(0)

    @staticmethod
    def from_edge_index(edge_index: Tensor, num_nodes: Optional[int] = None,
                        num_sources: Optional[int] = None) -> "CSR":
        """The CSR of edge_index (row 0 sources, row 1 destinations). num_sources:
        a bipartite graph, sources in [0, num_sources) and destinations in
        [0, num_nodes) (else both share num_nodes)."""
        op = "CSR.from_edge_index"
        edge_index = check_edge_index(edge_index, op)
        if num_nodes is None:
            num_nodes = int(edge_index.max()) + 1 if edge_index.numel() > 0 else 0
        else:
            num_nodes = _checks.size(num_nodes, "num_nodes", op)
        if isinstance(num_nodes, int):
            _checks.output_fits((num_nodes + 1, 2), torch.int64, edge_index.device, f"num_nodes {num_nodes}", op)
        if num_sources is None:
            return CSR._build(edge_index.to(torch.int64), num_nodes, num_nodes, num_nodes)
        num_sources = _checks.size(num_sources, "num_sources", op)
        if edge_index.numel() > 0 and not torch.compiler.is_compiling():
            for row, (name, bound) in enumerate((("sources", num_sources), ("destinations", num_nodes))):
                lo, hi = (int(v) for v in torch.aminmax(edge_index[row]))
                if lo < 0 or hi >= bound:
                    raise ValueError(f"{op}: edge_index row {row} ({name}) holds {lo if lo < 0 else hi}, "
                                     f"outside [0, {bound})")
        # Rows past either count hold no edges: slicing drops only empty rows.
        return CSR._build(edge_index.to(torch.int64), max(num_nodes, num_sources), num_nodes, num_sources)

    @staticmethod
    def _build(edge_index: Tensor, nodes, num_nodes, num_sources) -> "CSR":
        if torch.compiler.is_compiling() or not isinstance(nodes, int):
            offsets, sources, edge_ids, t_offsets, t_targets, t_edge_ids = _spmm_ops.csr_from_edge_index(
                edge_index, nodes)
            return CSR(offsets[: num_nodes + 1], sources, edge_ids, t_offsets[: num_sources + 1], t_targets,
                       t_edge_ids)
        graph, parts = _spmm_ops.csr_by_destination(edge_index, nodes)
        offsets, sources, edge_ids = parts

        def make_transpose():
            t_offsets, t_targets, t_edge_ids = _spmm_ops.transpose_of(graph, edge_index.device)
            return t_offsets[: num_sources + 1], t_targets, t_edge_ids

        return CSR(offsets[: num_nodes + 1], sources, edge_ids, make_transpose=make_transpose,
                   num_sources=num_sources)

    def to_csr_order(self, edge_weight: Tensor) -> Tensor:
        """Per-edge values in input order -> CSR order (differentiable)."""
        return edge_weight.index_select(0, self.edge_ids)


def spmm_csr(csr: CSR, x: Tensor, weight_csr: Optional[Tensor] = None, reduce: str = "sum") -> Tensor:
    """out[v] = reduce over CSR edges e into v of weight_csr[e] * x[sources[e]] (min / max: PyG's tie rule)."""
    op = "spmm"
    reduce = _checks.reduce_name(reduce, SPMM_REDUCES, op)
    x = check_features(x, "x", op)
    one_d = x.dim() == 1
    x2 = (x.unsqueeze(1) if one_d else x).contiguous()
    if x2.dim() != 2:
        raise ValueError(f"{op}: x must be [N] or [N, C] (got shape {tuple(x.shape)})")
    if x2.size(0) != csr.num_sources:
        raise ValueError(f"{op}: x has {x2.size(0)} rows but the graph has {csr.num_sources} source nodes")
    _checks.same_device(csr.offsets, "the CSR", x, op, "x")
    _bridge.refuse_tangents(op, x, weight_csr)
    if weight_csr is not None:
        weight_csr = check_edge_weight(weight_csr, csr.num_edges, x, op)
        if weight_csr.dtype != x.dtype:
            raise ValueError(f"{op}: edge_weight has dtype {weight_csr.dtype} but x has {x.dtype} (never cast)")
    # The transpose serves only gradients with respect to x (min / max / var: of the
    # weight too, through the full backward).
    needed = torch.is_grad_enabled() and (x2.requires_grad or (
        weight_csr is not None and weight_csr.requires_grad and reduce not in ("sum", "mean")))
    args = (csr.offsets, csr.sources, x2, weight_csr, *csr.transpose_or_placeholders(needed), reduce)
    out = _spmm_ops.spmm(*args)
    return out.squeeze(1) if one_d else out


def spmm_csr_and_rows(csr: CSR, x: Tensor, weight_csr: Optional[Tensor], reduce: str, rows: int):
    """(spmm_csr(csr, x, weight_csr, reduce), x[:rows]) with one gradient tensor for x:
    for a layer reading both (a bipartite layer whose targets are x's first rows).
    x: [N, C] float32 / float64; reduce sum or mean."""
    op = "spmm"
    x = check_features(x, "x", op)
    if x.dim() != 2 or x.size(0) != csr.num_sources or not 0 <= rows <= x.size(0):
        raise ValueError(f"{op}: x must be [N, C] with N = {csr.num_sources} source nodes and rows <= N "
                         f"(got shape {tuple(x.shape)}, rows {rows})")
    _bridge.refuse_tangents(op, x, weight_csr)
    if weight_csr is not None:
        weight_csr = check_edge_weight(weight_csr, csr.num_edges, x, op)
    return _spmm_ops.spmm_and_rows(csr.offsets, csr.sources, x.contiguous(), weight_csr, csr.t_offsets,
                                   csr.t_targets, csr.t_edge_ids, _checks.reduce_name(reduce, ("sum", "mean"), op),
                                   rows)


def spmm(
    edge_index_or_csr, x: Tensor, edge_weight: Optional[Tensor] = None, reduce: str = "sum",
    num_nodes: Optional[int] = None,
) -> Tensor:
    """Fused gather-reduce: out[t] = reduce over edges (s -> t) of w * x[s], no [E, C] messages.

    edge_index_or_csr: ``edge_index`` [2, E] (row 0 source, row 1 target; PyG; an
    integer tensor) or a :class:`CSR`. x: float32 or float64 [N] or [N, C].
    edge_weight: [E] in edge_index order, x's dtype. reduce: sum, mean, min, max (and
    mul, var, std); empty rows give 0; min / max split the gradient among tied messages
    as PyG's max aggregation does. num_nodes defaults to x.size(0).
    """
    op = "spmm"
    x = check_features(x, "x", op)
    if isinstance(edge_index_or_csr, CSR):
        csr = edge_index_or_csr
        edges = csr.num_edges
    else:
        edge_index = check_edge_index(edge_index_or_csr, op)
        _checks.same_device(edge_index, "edge_index", x, op, "x")
        edges = edge_index.size(1)
        nodes = x.size(0) if num_nodes is None else _checks.size(num_nodes, "num_nodes", op)
        csr = CSR.from_edge_index(edge_index, nodes)
    weight = check_edge_weight(edge_weight, edges, x, op)
    return spmm_csr(csr, x, None if weight is None else csr.to_csr_order(weight), reduce)
