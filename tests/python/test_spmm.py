"""edgewise.spmm and its backward helpers against NumPy references (no scipy)."""

import numpy as np
import pytest

import edgewise


def random_graph(rng, S, N, mean, index_dtype=np.int64):
    lengths = rng.integers(0, 2 * mean + 1, size=S)
    lengths[rng.random(S) < 0.2] = 0  # empty rows
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    indices = rng.integers(0, N, size=int(offsets[-1])).astype(index_dtype)
    return offsets, indices


def dst_of_edges(offsets):
    return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))


def reference(offsets, indices, x, weights, op):
    """Materialise the messages, then reduce each row; returns (out, arg) as [S, C]."""
    x2 = x.reshape(len(x), -1)
    w = np.ones(len(indices), np.float32) if weights is None else weights
    messages = (w[:, None] * x2[indices]).astype(np.float32)
    S, C = len(offsets) - 1, x2.shape[1]
    out = np.zeros((S, C), np.float64 if op in ("sum", "mean") else np.float32)
    arg = np.full((S, C), -1, np.int64)
    dst = dst_of_edges(offsets)
    if op in ("sum", "mean"):
        np.add.at(out, dst, messages.astype(np.float64))
        if op == "mean":
            deg = np.diff(offsets)
            out[deg > 0] /= deg[deg > 0, None]
        return out.astype(np.float32), arg
    for v in range(S):
        seg = messages[offsets[v]:offsets[v + 1]]
        if len(seg) == 0:
            continue
        idx = (np.argmax if op == "max" else np.argmin)(seg, axis=0)  # first occurrence: lower edge
        arg[v] = offsets[v] + idx
        out[v] = seg[idx, np.arange(C)]
    return out, arg


def transpose(offsets, indices, N):
    """The transposed CSR: (t_offsets, t_indices = destination, t_edge_ids = forward position)."""
    order = np.argsort(indices, kind="stable")
    t_offsets = np.concatenate([[0], np.cumsum(np.bincount(indices, minlength=N))]).astype(np.int64)
    return t_offsets, dst_of_edges(offsets)[order].astype(indices.dtype), order.astype(np.int64)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("op", ["sum", "mean", "min", "max"])
@pytest.mark.parametrize("C", [None, 1, 7, 32])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_numpy_reference(rng, index_dtype, op, C, weighted):
    offsets, indices = random_graph(rng, 60, 45, 5, index_dtype)
    shape = (45,) if C is None else (45, C)
    x = rng.integers(-6, 7, size=shape).astype(np.float32)  # small integers: frequent ties
    weights = rng.integers(-2, 3, size=len(indices)).astype(np.float32) if weighted else None
    want, want_arg = reference(offsets, indices, x, weights, op)
    if op in ("min", "max"):
        got, got_arg = edgewise.spmm(offsets, indices, x, weights, op=op, return_arg=True)
        np.testing.assert_array_equal(got_arg.reshape(want_arg.shape), want_arg)
    else:
        got = edgewise.spmm(offsets, indices, x, weights=weights, op=op)
    assert got.dtype == np.float32
    assert got.shape == ((60,) if C is None else (60, C))
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-5, atol=1e-5)


def test_sparse_times_dense():
    rng = np.random.default_rng(7)
    dense_features = rng.standard_normal((30, 200)).astype(np.float32)
    dense_features[rng.random((30, 200)) > 0.03] = 0
    rows, cols = np.nonzero(dense_features)
    offsets = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=30))])
    weight_matrix = rng.standard_normal((200, 16)).astype(np.float32)
    got = edgewise.spmm(offsets, cols.astype(np.int32), weight_matrix, weights=dense_features[rows, cols])
    np.testing.assert_allclose(got, dense_features @ weight_matrix, rtol=1e-5, atol=1e-5)


def test_empty_rows_ties_and_arg_edge_positions():
    offsets = np.array([0, 3, 3, 5])
    indices = np.array([0, 2, 0, 1, 1], dtype=np.int32)
    x = np.array([4, 9, 4], dtype=np.float32)
    out, arg = edgewise.spmm(offsets, indices, x, op="max", return_arg=True)
    np.testing.assert_array_equal(out, [4, 0, 9])
    np.testing.assert_array_equal(arg, [0, -1, 3])  # edge positions; ties -> lower edge


@pytest.mark.parametrize("op", ["sum", "mean", "min", "max"])
@pytest.mark.parametrize("weighted", [False, True])
def test_backward_helpers_match_numpy(rng, op, weighted):
    S, N, C = 50, 40, 6
    offsets, indices = random_graph(rng, S, N, 4, np.int32)
    x = rng.standard_normal((N, C)).astype(np.float32)
    weights = rng.standard_normal(len(indices)).astype(np.float32) if weighted else None
    w = np.ones(len(indices)) if weights is None else weights.astype(np.float64)
    grad_out = rng.standard_normal((S, C)).astype(np.float32)
    dst = dst_of_edges(offsets)
    deg = np.diff(offsets)
    t_offsets, t_indices, t_edge_ids = transpose(offsets, indices, N)

    if op in ("min", "max"):
        _, arg = edgewise.spmm(offsets, indices, x, weights, op=op, return_arg=True)
        picked = arg[dst] == np.arange(len(indices))[:, None]  # [E, C]: where edge e won
        scale = picked * w[:, None]
        got_x = edgewise.spmm_arg_backward(t_offsets, t_indices, t_edge_ids, grad_out, arg, weights=weights)
        got_w = edgewise.spmm_weight_backward(offsets, indices, x, grad_out, op=op, arg=arg)
        want_w = (picked * grad_out[dst] * x[indices]).sum(1)
    else:
        scale = np.repeat((w / (deg[dst] if op == "mean" else 1.0))[:, None], C, axis=1)
        got_x = edgewise.spmm_backward(t_offsets, t_indices, grad_out, t_edge_ids=t_edge_ids, weights=weights, op=op,
                                       offsets=offsets if op == "mean" else None)
        got_w = edgewise.spmm_weight_backward(offsets, indices, x, grad_out, op=op)
        want_w = (grad_out[dst].astype(np.float64) * x[indices]).sum(1)
        if op == "mean":
            want_w /= deg[dst]
    want_x = np.zeros((N, C))
    np.add.at(want_x, indices, scale * grad_out[dst])
    np.testing.assert_allclose(got_x, want_x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_w, want_w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "offsets, indices, needle",
    [
        ([0, 2, 4], [0, 1, 3, 2], "indices[2] (3) must lie in [0, 3)"),
        ([0, 2, 4], [0, -1, 2, 2], "indices[1] (-1) must lie in [0, 3)"),
        ([1, 2, 4], [0, 1, 2, 2], "offsets[0] (1) must be 0"),
        ([0, 2, 3], [0, 1, 2, 2], "must equal the number of rows (4)"),
        ([], [0], "at least one element"),
    ],
)
def test_bad_graph_raises_value_error(offsets, indices, needle):
    x = np.zeros((3, 2), np.float32)
    with pytest.raises(ValueError, match="spmm") as info:
        edgewise.spmm(np.array(offsets, dtype=np.int64), np.array(indices, dtype=np.int32), x)
    assert needle in str(info.value)


def test_bad_arguments_raise_value_error():
    offsets, indices = np.array([0, 2]), np.array([0, 1])
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="weights.size\\(\\) \\(3\\) must equal indices.size\\(\\) \\(2\\)"):
        edgewise.spmm(offsets, indices, x, weights=np.ones(3, np.float32))
    with pytest.raises(ValueError, match="x must be float32 or float64"):
        edgewise.spmm(offsets, indices, x.astype(np.float16))
    with pytest.raises(ValueError, match="weights must be float32"):  # float64 weights, float32 x: no silent cast
        edgewise.spmm(offsets, indices, x, weights=np.ones(2))
    with pytest.raises(ValueError, match="weights must be float64"):
        edgewise.spmm(offsets, indices, x.astype(np.float64), weights=np.ones(2, np.float32))
    with pytest.raises(ValueError, match="return_arg is only defined for min and max"):
        edgewise.spmm(offsets, indices, x, op="mean", return_arg=True)
    with pytest.raises(ValueError, match="integer array"):
        edgewise.spmm(offsets, np.array([0.0, 1.0]), x)
    with pytest.raises(ValueError, match="arg is required for max"):
        edgewise.spmm_weight_backward(offsets, indices, x, np.zeros((1, 3), np.float32), op="max")
