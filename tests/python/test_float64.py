"""float64 through segment_reduce, scatter_reduce and spmm (+ its backward helpers),
against float64 NumPy references held to 1e-12: a float32 path anywhere would miss."""

import numpy as np
import pytest

import edgewise

OPS = ["sum", "mean", "min", "max"]
FINE = 1.0 + 2.0**-40  # float32 rounds it to 1.0


def random_offsets(rng, S, mean):
    lengths = rng.integers(0, 2 * mean + 1, size=S)
    lengths[rng.random(S) < 0.2] = 0
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def reduce_groups(values2d, groups, op):
    """groups: one array of row indices per output, rows increasing; (out, arg)."""
    S, C = len(groups), values2d.shape[1]
    out = np.zeros((S, C), np.float64)
    arg = np.full((S, C), -1, np.int64)
    for s, rows in enumerate(groups):
        if len(rows) == 0:
            continue
        seg = values2d[rows]
        if op == "sum":
            out[s] = seg.sum(0)
        elif op == "mean":
            out[s] = seg.mean(0)
        else:
            idx = (np.argmax if op == "max" else np.argmin)(seg, axis=0)  # first occurrence: lower row
            arg[s] = rows[idx]
            out[s] = seg[idx, np.arange(C)]
    return out, arg


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("C", [None, 2, 7])
def test_segment_reduce_float64(rng, op, C):
    offsets = random_offsets(rng, 40, 5)
    M = int(offsets[-1])
    values = rng.uniform(-1, 1, size=(M,) if C is None else (M, C))
    groups = [np.arange(offsets[s], offsets[s + 1]) for s in range(len(offsets) - 1)]
    want, want_arg = reduce_groups(values.reshape(M, -1), groups, op)
    if op in ("min", "max"):
        got, got_arg = edgewise.segment_reduce(values, offsets, op=op, return_arg=True)
        np.testing.assert_array_equal(got_arg.reshape(want_arg.shape), want_arg)
    else:
        got = edgewise.segment_reduce(values, offsets, op=op)
    assert got.dtype == np.float64 and got.shape == ((40,) if C is None else (40, C))
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_scatter_reduce_float64(rng, op, index_dtype):
    M, S, C = 500, 30, 3
    values = rng.uniform(-1, 1, size=(M, C))
    values[::7] = 0.5  # ties
    index = rng.integers(0, S, size=M).astype(index_dtype)
    groups = [np.flatnonzero(index == s) for s in range(S)]
    want, want_arg = reduce_groups(values, groups, op)
    if op in ("min", "max"):
        got, got_arg = edgewise.scatter_reduce(values, index, S, op=op, return_arg=True)
        np.testing.assert_array_equal(got_arg, want_arg)
    else:
        got = edgewise.scatter_reduce(values, index, S, op=op)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_values_float32_cannot_hold_survive():
    values = np.array([FINE, 2.0**-41, FINE])
    assert edgewise.segment_reduce(values, np.array([0, 3]), op="max")[0] == FINE
    assert edgewise.scatter_reduce(values, np.array([0, 0, 0]), 1, op="sum")[0] == 2 * FINE + 2.0**-41
    out, arg = edgewise.scatter_reduce(values, np.array([0, 0, 0]), 1, op="max", return_arg=True)
    assert out[0] == FINE and arg[0] == 0  # tie -> the lower row


def spmm_reference(offsets, indices, x, weights, op):
    w = np.ones(len(indices)) if weights is None else weights
    messages = w[:, None] * x[indices]
    groups = [np.arange(offsets[v], offsets[v + 1]) for v in range(len(offsets) - 1)]
    return reduce_groups(messages, groups, op)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("weighted", [False, True])
def test_spmm_float64_forward_and_backward(rng, op, weighted):
    S, N, C = 30, 25, 4
    offsets = random_offsets(rng, S, 4)
    E = int(offsets[-1])
    indices = rng.integers(0, N, size=E).astype(np.int64)
    x = rng.uniform(-1, 1, size=(N, C))
    weights = rng.uniform(0.5, 1.5, size=E) if weighted else None
    want, want_arg = spmm_reference(offsets, indices, x, weights, op)
    if op in ("min", "max"):
        got, arg = edgewise.spmm(offsets, indices, x, weights, op=op, return_arg=True)
        np.testing.assert_array_equal(arg, want_arg)
    else:
        got, arg = edgewise.spmm(offsets, indices, x, weights, op=op), None
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

    # Backward against a float64 scatter over the forward edges.
    grad_out = rng.uniform(-1, 1, size=(S, C))
    dst = np.repeat(np.arange(S), np.diff(offsets))
    w = np.ones(E) if weights is None else weights
    deg = np.diff(offsets)
    coef = w / deg[dst] if op == "mean" else w
    contrib = coef[:, None] * grad_out[dst]
    if arg is not None:
        contrib = np.where(arg[dst] == np.arange(E)[:, None], contrib, 0.0)
    want_x = np.zeros((N, C))
    np.add.at(want_x, indices, contrib)
    order = np.argsort(indices, kind="stable")
    t_offsets = np.concatenate([[0], np.cumsum(np.bincount(indices, minlength=N))]).astype(np.int64)
    t_indices, t_edge_ids = dst[order].astype(np.int64), order.astype(np.int64)
    if op in ("min", "max"):
        got_x = edgewise.spmm_arg_backward(t_offsets, t_indices, t_edge_ids, grad_out, arg, weights)
    else:
        got_x = edgewise.spmm_backward(t_offsets, t_indices, grad_out, t_edge_ids, weights, op=op, offsets=offsets)
    assert got_x.dtype == np.float64
    np.testing.assert_allclose(got_x, want_x, rtol=1e-12, atol=1e-12)

    terms = grad_out[dst] * x[indices]
    if arg is not None:
        terms = np.where(arg[dst] == np.arange(E)[:, None], terms, 0.0)
    want_w = terms.sum(1) / (deg[dst] if op == "mean" else 1)
    got_w = edgewise.spmm_weight_backward(offsets, indices, x, grad_out, op=op, arg=arg)
    assert got_w.dtype == np.float64
    np.testing.assert_allclose(got_w, want_w, rtol=1e-12, atol=1e-12)


def test_mixed_float_dtypes_are_rejected_not_cast():
    offsets, indices = np.array([0, 2]), np.array([0, 1])
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match="weights must be float64"):
        edgewise.spmm(offsets, indices, x, weights=np.ones(2, np.float32))
    with pytest.raises(ValueError, match="grad_out must be float64"):
        edgewise.spmm_weight_backward(offsets, indices, x, np.zeros((1, 3), np.float32))


def test_reduce_ops_lists_every_op_once():
    names = edgewise.reduce_ops()
    assert len(names) == len(set(names))
    assert set(OPS) <= set(names)
