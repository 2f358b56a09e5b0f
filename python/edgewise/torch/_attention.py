"""Edge-level attention primitives over a CSR (edges in CSR order): sddmm_add,
sddmm_dot, edge_softmax and attention_aggregate (float32 / float64)."""

from torch import Tensor

from . import _attention_ops, _bridge
from ._spmm import CSR


def _csr_structure(csr: CSR):
    return csr.offsets, csr.sources


def _csr_transposed(csr: CSR):
    return csr.t_offsets, csr.t_targets, csr.t_edge_ids


def _check_rows(t: Tensor, rows: int, name: str, op: str, kind: str = "source"):
    if t.size(0) != rows:
        raise ValueError(f"{op}: {name} has {t.size(0)} rows but the graph has {rows} {kind} nodes")


def sddmm_add(csr: CSR, a: Tensor, b: Tensor) -> Tensor:
    """GAT's attention logits: out[e, h] = a[src_e, h] + b[dst_e, h] for every CSR edge e.

    a, b: [N, H] or [N] (one dtype, float32 or float64). Returns [E, H] or [E] in CSR order.
    """
    _bridge.refuse_tangents("sddmm_add", a, b)
    one_d = a.dim() == 1
    a2, b2 = (t.unsqueeze(1) if one_d else t for t in (a, b))
    if a2.dim() != 2 or b2.dim() != 2 or b2.size(1) != a2.size(1):
        raise ValueError(f"sddmm_add: a and b must both be [N] or [N, H] (got {tuple(a.shape)} and {tuple(b.shape)})")
    _check_rows(a2, csr.num_sources, "a", "sddmm_add", "source")
    _check_rows(b2, csr.num_nodes, "b", "sddmm_add", "destination")
    out = _attention_ops.sddmm_add(*_csr_structure(csr), a2.contiguous(), b2.contiguous(), *_csr_transposed(csr))
    return out.squeeze(1) if one_d else out


def sddmm_dot(csr: CSR, x: Tensor, y: Tensor) -> Tensor:
    """Per-edge dot products: out[e, h] = x[src_e, h, :] . y[dst_e, h, :] for every CSR edge e.

    x, y: [N, H, D] (-> [E, H]) or [N, D] (-> [E]), one dtype (float32 or float64).
    """
    _bridge.refuse_tangents("sddmm_dot", x, y)
    one_head = x.dim() == 2
    x3, y3 = (t.unsqueeze(1) if one_head else t for t in (x, y))
    if x3.dim() != 3 or y3.dim() != 3 or y3.shape[1:] != x3.shape[1:]:
        raise ValueError(
            f"sddmm_dot: x and y must both be [N, D] or [N, H, D] (got {tuple(x.shape)} and {tuple(y.shape)})"
        )
    _check_rows(x3, csr.num_sources, "x", "sddmm_dot", "source")
    _check_rows(y3, csr.num_nodes, "y", "sddmm_dot", "destination")
    N, H, D = x3.shape
    out = _attention_ops.sddmm_dot(
        *_csr_structure(csr), x3.reshape(N, H * D).contiguous(), y3.reshape(y3.size(0), H * D).contiguous(), H,
        *_csr_transposed(csr),
    )
    return out.squeeze(1) if one_head else out


def edge_softmax(csr: CSR, scores: Tensor) -> Tensor:
    """Softmax of per-edge scores over each destination's incoming edges, per head.

    scores: [E] or [E, H] in CSR order (float32 or float64); numerically stable.
    """
    _bridge.refuse_tangents("edge_softmax", scores)
    one_d = scores.dim() == 1
    s = scores.unsqueeze(1) if one_d else scores
    if s.dim() != 2 or s.size(0) != csr.sources.size(0):
        raise ValueError(f"edge_softmax: scores must be [E] or [E, H] with E = {csr.sources.size(0)} "
                         f"(got shape {tuple(scores.shape)})")
    out = _attention_ops.edge_softmax(csr.offsets, s.contiguous())
    return out.squeeze(1) if one_d else out


def attention_aggregate(csr: CSR, alpha: Tensor, x: Tensor) -> Tensor:
    """out[v, h, :] = sum over CSR edges e = (u -> v) of alpha[e, h] * x[u, h, :].

    alpha: [E, H] (x [N, H, D]) or [E] (x [N, D]); returns x's shape. No [E, H, D]
    message tensor is built.
    """
    _bridge.refuse_tangents("attention_aggregate", alpha, x)
    one_head = x.dim() == 2
    x3 = x.unsqueeze(1) if one_head else x
    a = alpha.unsqueeze(1) if alpha.dim() == 1 else alpha
    if x3.dim() != 3 or a.dim() != 2 or a.size(1) != x3.size(1) or a.size(0) != csr.sources.size(0):
        raise ValueError(f"attention_aggregate: alpha [E, H] and x [N, H, D] must agree "
                         f"(got {tuple(alpha.shape)} and {tuple(x.shape)})")
    _check_rows(x3, csr.num_sources, "x", "attention_aggregate", "source")
    N, H, D = x3.shape
    out = _attention_ops.attention_aggregate(
        *_csr_structure(csr), a.contiguous(), x3.reshape(N, H * D).contiguous(), *_csr_transposed(csr)
    )
    return out.view(-1, D) if one_head else out.view(-1, H, D)
