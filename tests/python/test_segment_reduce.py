"""edgewise.segment_reduce against a NumPy reference."""

import numpy as np
import pytest

import edgewise


def reference(values, offsets, op):
    """Straightforward per-segment loop; returns (out, arg)."""
    values2d = values.reshape(len(values), -1)
    S, C = len(offsets) - 1, values2d.shape[1]
    out = np.zeros((S, C), dtype=values.dtype)
    arg = np.full((S, C), -1, dtype=np.int64)
    for s in range(S):
        seg = values2d[offsets[s]:offsets[s + 1]]
        if len(seg) == 0:
            continue
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
            arg[s] = offsets[s] + idx
            out[s] = seg[idx, np.arange(C)]
    return out.reshape((S,) + values.shape[1:]), arg.reshape((S,) + values.shape[1:])


def random_offsets(rng, S, mean):
    lengths = rng.integers(0, 2 * mean + 1, size=S)
    lengths[rng.random(S) < 0.2] = 0  # empty segments
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
@pytest.mark.parametrize("op", ["sum", "mean", "min", "max"])
@pytest.mark.parametrize("shape_c", [None, 1, 7, 16])
def test_matches_numpy_reference(rng, dtype, op, shape_c):
    offsets = random_offsets(rng, 50, 5)
    M = int(offsets[-1])
    shape = (M,) if shape_c is None else (M, shape_c)
    if np.dtype(dtype).kind == "f":
        values = rng.uniform(-10, 10, size=shape).astype(dtype)
    else:
        values = rng.integers(0, 20, size=shape).astype(dtype)
    want, want_arg = reference(values, offsets, op)
    if op in ("min", "max"):
        got, got_arg = edgewise.segment_reduce(values, offsets, op=op, return_arg=True)
        np.testing.assert_array_equal(got_arg, want_arg)
    else:
        got = edgewise.segment_reduce(values, offsets, op=op)
    assert got.dtype == values.dtype and got.shape == want.shape
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


def test_empty_segments_and_ties():
    values = np.array([7, 7, 1, 9, 9], dtype=np.float32)
    offsets = np.array([0, 2, 2, 5])
    out, arg = edgewise.segment_reduce(values, offsets, op="max", return_arg=True)
    np.testing.assert_array_equal(out, [7, 0, 9])
    np.testing.assert_array_equal(arg, [0, -1, 3])


def test_non_contiguous_and_other_integer_offsets_are_accepted(rng):
    values = rng.standard_normal((40, 8)).astype(np.float32)[:, ::2]  # strided view
    offsets = np.array([0, 10, 10, 40], dtype=np.int32)
    got = edgewise.segment_reduce(values, offsets, op="sum")
    want, _ = reference(np.ascontiguousarray(values), offsets.astype(np.int64), "sum")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "offsets, needle",
    [
        ([1, 2, 4], "offsets[0] (1) must be 0"),
        ([0, 2, 3], "must equal the number of rows (4)"),
        ([0, 3, 2, 4], "offsets[2] (2)"),
        ([], "at least one element"),
    ],
)
def test_bad_offsets_raise_value_error(offsets, needle):
    values = np.arange(4, dtype=np.float32)
    with pytest.raises(ValueError, match="segment_reduce") as info:
        edgewise.segment_reduce(values, np.array(offsets, dtype=np.int64))
    assert needle in str(info.value)


def test_bad_dtype_and_op():
    with pytest.raises(ValueError, match="float32, float64, int32, uint32, int64, float16 or bfloat16"):
        edgewise.segment_reduce(np.zeros(3, np.int8), np.array([0, 3]))
    with pytest.raises(ValueError, match="unknown reduction 'median'"):
        edgewise.segment_reduce(np.zeros(3, np.float32), np.array([0, 3]), op="median")
    with pytest.raises(ValueError, match="return_arg is only defined for min and max"):
        edgewise.segment_reduce(np.zeros(3, np.float32), np.array([0, 3]), op="sum", return_arg=True)
    with pytest.raises(ValueError, match="integer array"):
        edgewise.segment_reduce(np.zeros(3, np.float32), np.array([0.0, 3.0]))
