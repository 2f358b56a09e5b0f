"""edgewise.scatter_reduce against a NumPy reference."""

import numpy as np
import pytest

import edgewise


def reference(values, index, num_segments, op):
    """Straightforward per-output loop over the rows that index names; returns (out, arg)."""
    values2d = values.reshape(len(values), -1)
    S, C = num_segments, values2d.shape[1]
    out = np.zeros((S, C), dtype=values.dtype)
    arg = np.full((S, C), -1, dtype=np.int64)
    for s in range(S):
        rows = np.flatnonzero(index == s)  # increasing row order
        if len(rows) == 0:
            continue
        seg = values2d[rows]
        if op == "sum":
            out[s] = seg.astype(np.float64 if values.dtype.kind == "f" else np.int64).sum(0).astype(values.dtype)
        elif op == "mean":
            if values.dtype.kind == "f":
                out[s] = seg.astype(np.float64).mean(0)
            else:
                total = seg.astype(np.int64).sum(0)
                out[s] = np.floor_divide(total, len(seg)).astype(values.dtype)  # floor, as torch_scatter
        else:
            pick = np.argmax if op == "max" else np.argmin  # first occurrence: lower row
            idx = pick(seg, axis=0)
            arg[s] = rows[idx]
            out[s] = seg[idx, np.arange(C)]
    shape = (S,) + values.shape[1:]
    return out.reshape(shape), arg.reshape(shape)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
@pytest.mark.parametrize("op", ["sum", "mean", "min", "max"])
@pytest.mark.parametrize("shape_c", [None, 1, 16])
@pytest.mark.parametrize("M, S, index_dtype", [(300, 7, np.int64), (120, 200, np.int32)])
def test_matches_numpy_reference(rng, dtype, op, shape_c, index_dtype, M, S):
    shape = (M,) if shape_c is None else (M, shape_c)
    if np.dtype(dtype).kind == "f":
        values = rng.uniform(-10, 10, size=shape).astype(dtype)
    else:
        values = rng.integers(0, 20, size=shape).astype(dtype)
    index = rng.integers(0, S, size=M).astype(index_dtype)
    want, want_arg = reference(values, index, S, op)
    if op in ("min", "max"):
        got, got_arg = edgewise.scatter_reduce(values, index, S, op=op, return_arg=True)
        np.testing.assert_array_equal(got_arg, want_arg)
        assert got_arg.dtype == np.int64
    else:
        got = edgewise.scatter_reduce(values, index, S, op=op)
    assert got.dtype == values.dtype and got.shape == want.shape
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


def test_ties_nan_and_unreached_outputs():
    nan = np.float32("nan")
    values = np.array([7, 9, 7, nan, 9, nan], dtype=np.float32)
    index = np.array([0, 2, 0, 3, 2, 3])
    out, arg = edgewise.scatter_reduce(values, index, 4, op="max", return_arg=True)
    np.testing.assert_array_equal(out[:3], [7, 0, 9])
    assert np.isnan(out[3])
    np.testing.assert_array_equal(arg, [0, -1, 1, 3])
    out, arg = edgewise.scatter_reduce(values, index, 4, op="min", return_arg=True)
    np.testing.assert_array_equal(arg, [0, -1, 1, 3])


def test_matches_segment_reduce_on_sorted_index(rng):
    index = np.sort(rng.integers(0, 30, size=500))
    values = rng.integers(-50, 50, size=(500, 4)).astype(np.int32)
    offsets = np.searchsorted(index, np.arange(31))
    for op in ("sum", "mean", "min", "max"):
        np.testing.assert_array_equal(edgewise.scatter_reduce(values, index, 30, op=op),
                                      edgewise.segment_reduce(values, offsets, op=op))


def test_other_integer_index_dtypes_and_strided_values_are_accepted(rng):
    values = rng.standard_normal((40, 8)).astype(np.float32)[:, ::2]  # strided view
    for dtype in (np.uint8, np.int16, np.uint32, np.uint64):
        index = (np.arange(40) % 5).astype(dtype)
        got = edgewise.scatter_reduce(values, index, 5)
        want, _ = reference(np.ascontiguousarray(values), index.astype(np.int64), 5, "sum")
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_empty_inputs():
    out = edgewise.scatter_reduce(np.zeros((0, 3), np.float32), np.zeros(0, np.int64), 2, op="mean")
    np.testing.assert_array_equal(out, np.zeros((2, 3)))
    out, arg = edgewise.scatter_reduce(np.zeros(0, np.int32), np.zeros(0, np.int32), 3, op="min", return_arg=True)
    np.testing.assert_array_equal(arg, [-1, -1, -1])
    assert edgewise.scatter_reduce(np.zeros(0, np.float32), np.zeros(0, np.int64), 0).shape == (0,)


@pytest.mark.parametrize(
    "index, num_segments, needle",
    [
        ([0, 1, 4, 2], 4, "scatter_reduce: index[2] (4) must lie in [0, 4)"),
        ([0, -3, 1, 2], 4, "scatter_reduce: index[1] (-3) must lie in [0, 4)"),
        ([0, 1, 2], 4, "index.size() (3) must equal values.rows() (4)"),
        ([0, 1, 2, 3], -1, "num_segments (-1) must be >= 0"),
    ],
)
def test_bad_index_raises_value_error(index, num_segments, needle):
    values = np.arange(4, dtype=np.float32)
    with pytest.raises(ValueError) as info:
        edgewise.scatter_reduce(values, np.array(index, dtype=np.int32), num_segments)
    assert needle in str(info.value)


def test_bad_dtype_and_op():
    with pytest.raises(ValueError, match="float32, float64, int32, uint32, int64, float16 or bfloat16"):
        edgewise.scatter_reduce(np.zeros(3, np.int8), np.zeros(3, np.int64), 1)
    with pytest.raises(ValueError, match="unknown reduction 'median'"):
        edgewise.scatter_reduce(np.zeros(3, np.float32), np.zeros(3, np.int64), 1, op="median")
    with pytest.raises(ValueError, match="return_arg is only defined for min and max"):
        edgewise.scatter_reduce(np.zeros(3, np.float32), np.zeros(3, np.int64), 1, op="sum", return_arg=True)
    with pytest.raises(ValueError, match="integer array"):
        edgewise.scatter_reduce(np.zeros(3, np.float32), np.zeros(3, np.float64), 1)
    with pytest.raises(ValueError, match="index must be 1-D"):
        edgewise.scatter_reduce(np.zeros(4, np.float32), np.zeros((2, 2), np.int64), 1)
