"""edgewise.sort_by_key, run_length_encode, unique and offsets_from_keys against NumPy."""

import numpy as np
import pytest

import edgewise

KEY_DTYPES = [np.int32, np.int64, np.uint32]


def random_keys(rng, n, dtype, lo=0, hi=1000):
    return rng.integers(lo, hi, size=n).astype(dtype)


@pytest.mark.parametrize("dtype", KEY_DTYPES)
@pytest.mark.parametrize("n", [0, 1, 9, 65, 20000])
def test_sort_by_key_matches_stable_argsort(rng, dtype, n):
    keys = random_keys(rng, n, dtype, 0, 50)
    sorted_keys, perm = edgewise.sort_by_key(keys)
    want = np.argsort(keys, kind="stable")
    assert perm.dtype == np.int64 and sorted_keys.dtype == keys.dtype
    np.testing.assert_array_equal(perm, want)
    np.testing.assert_array_equal(sorted_keys, keys[want])


def test_sort_by_key_signed_and_extreme_keys(rng):
    keys = np.array([5, -3, np.iinfo(np.int64).min, np.iinfo(np.int64).max, -3, 0], dtype=np.int64)
    sorted_keys, perm = edgewise.sort_by_key(keys)
    np.testing.assert_array_equal(perm, np.argsort(keys, kind="stable"))
    wide = rng.integers(-(2**62), 2**62, size=5000, dtype=np.int64)
    np.testing.assert_array_equal(edgewise.sort_by_key(wide)[1], np.argsort(wide, kind="stable"))


@pytest.mark.parametrize("vdtype", [np.int32, np.uint32, np.int64, np.float32, np.float64])
def test_sort_by_key_carries_values(rng, vdtype):
    keys = random_keys(rng, 3000, np.int64, 0, 40)
    values = rng.integers(0, 10**6, size=3000).astype(vdtype)
    sorted_keys, sorted_values = edgewise.sort_by_key(keys, values)
    order = np.argsort(keys, kind="stable")
    assert sorted_values.dtype == values.dtype
    np.testing.assert_array_equal(sorted_keys, keys[order])
    np.testing.assert_array_equal(sorted_values, values[order])


def test_sort_by_key_bad_input():
    with pytest.raises(ValueError, match="sort_by_key: keys must be int32, int64 or uint32"):
        edgewise.sort_by_key(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match=r"values.size\(\) \(2\) must equal keys.size\(\) \(3\)"):
        edgewise.sort_by_key(np.zeros(3, np.int64), np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="values must be int32, uint32, int64, float32 or float64"):
        edgewise.sort_by_key(np.zeros(3, np.int64), np.zeros(3, np.int16))
    with pytest.raises(ValueError, match="must be 1-D"):
        edgewise.sort_by_key(np.zeros((2, 2), np.int64))


def numpy_rle(keys):
    if len(keys) == 0:
        return keys[:0], np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    lengths = np.diff(np.concatenate([starts, [len(keys)]]))
    return keys[starts], lengths


@pytest.mark.parametrize("dtype", KEY_DTYPES)
@pytest.mark.parametrize("n", [0, 1, 8, 257, 50000])
def test_run_length_encode_matches_numpy_and_round_trips(rng, dtype, n):
    keys = np.sort(random_keys(rng, n, dtype, 0, max(1, n // 5)))
    values, lengths = edgewise.run_length_encode(keys)
    want_values, want_lengths = numpy_rle(keys)
    assert values.dtype == keys.dtype and lengths.dtype == np.int64
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(lengths, want_lengths)
    np.testing.assert_array_equal(np.repeat(values, lengths), keys)  # decode(RLE(x)) == x
    np.testing.assert_array_equal(edgewise.unique(keys), values)
    np.testing.assert_array_equal(edgewise.unique(keys), np.unique(keys))  # sorted: the global unique too


def test_runs_are_adjacent_not_global():
    values, lengths = edgewise.run_length_encode(np.array([2, 2, 5, 2], dtype=np.int32))
    np.testing.assert_array_equal(values, [2, 5, 2])
    np.testing.assert_array_equal(lengths, [2, 1, 1])
    np.testing.assert_array_equal(edgewise.unique([2, 2, 5, 2]), [2, 5, 2])  # a plain list is one array


def test_chunks_continue_runs_across_seams_and_empty_chunks(rng):
    empty = np.zeros(0, np.int64)
    chunks = [empty, np.array([1, 7]), empty, np.array([7]), empty, np.array([7, 7]), np.array([8]), empty]
    values, lengths = edgewise.run_length_encode(chunks)
    np.testing.assert_array_equal(values, [1, 7, 8])
    np.testing.assert_array_equal(lengths, [1, 4, 1])
    keys = np.sort(random_keys(rng, 10000, np.int64, 0, 300))
    cuts = np.sort(rng.integers(0, len(keys), size=40))
    pieces = np.split(keys, cuts)  # includes empty pieces where cuts repeat
    got = edgewise.run_length_encode(pieces)
    want = edgewise.run_length_encode(keys)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(edgewise.unique(tuple(pieces)), want[0])


def test_rle_empty_and_bad_input():
    values, lengths = edgewise.run_length_encode(np.zeros(0, np.uint32))
    assert len(values) == 0 and len(lengths) == 0 and values.dtype == np.uint32
    assert len(edgewise.unique([])) == 0
    with pytest.raises(ValueError, match="run_length_encode: keys must be int32, int64 or uint32"):
        edgewise.run_length_encode(np.zeros(3, np.float64))
    with pytest.raises(ValueError, match="every chunk must have the dtype of the first"):
        edgewise.run_length_encode([np.zeros(2, np.int64), np.zeros(2, np.int32)])
    with pytest.raises(ValueError, match="unique: keys must be 1-D"):
        edgewise.unique(np.zeros((2, 2), np.int64))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.int16])
def test_offsets_from_keys_matches_counting(rng, dtype):
    S = 500
    keys = np.sort(rng.integers(0, S, size=20000) % rng.integers(1, S, size=20000)).astype(dtype)
    offsets = edgewise.offsets_from_keys(keys, S)
    want = np.concatenate([[0], np.cumsum(np.bincount(keys.astype(np.int64), minlength=S))])
    assert offsets.dtype == np.int64
    np.testing.assert_array_equal(offsets, want)
    np.testing.assert_array_equal(offsets, np.searchsorted(keys, np.arange(S + 1), side="left"))


def test_offsets_from_keys_empty_segments_and_graph_path(rng):
    np.testing.assert_array_equal(edgewise.offsets_from_keys(np.array([1, 1, 3]), 5), [0, 0, 2, 2, 3, 3])
    np.testing.assert_array_equal(edgewise.offsets_from_keys(np.zeros(0, np.int64), 3), [0, 0, 0, 0])
    # COO destinations -> stable sort -> offsets -> segment_reduce over the permuted sources.
    dst = rng.integers(0, 50, size=1000)
    src_feature = rng.standard_normal(1000).astype(np.float32)
    sorted_dst, perm = edgewise.sort_by_key(dst)
    offsets = edgewise.offsets_from_keys(sorted_dst, 50)
    summed = edgewise.segment_reduce(src_feature[perm], offsets, op="sum")
    want = np.zeros(50, np.float64)
    np.add.at(want, dst, src_feature)
    np.testing.assert_allclose(summed, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "keys, S, needle",
    [
        ([0, 1, 7, 3], 10, "keys[3] (3) is less than keys[2] (7): keys must be sorted (nondecreasing)"),
        ([0, 10], 10, "keys[1] (10) must lie in [0, 10)"),
        ([-1, 2], 10, "keys[0] (-1) must lie in [0, 10)"),
        ([0], -1, "num_segments (-1) must be >= 0"),
    ],
)
def test_offsets_from_keys_bad_keys(keys, S, needle):
    with pytest.raises(ValueError, match="offsets_from_keys") as info:
        edgewise.offsets_from_keys(np.array(keys, dtype=np.int64), S)
    assert needle in str(info.value)
    with pytest.raises(ValueError, match="integer array"):
        edgewise.offsets_from_keys(np.array([0.0, 1.0]), 3)
