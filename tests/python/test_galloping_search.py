"""edgewise.galloping_search against np.searchsorted (side='left' is lower_bound)."""

import numpy as np
import pytest

import edgewise


def reference(values, queries, segments, value_order=None, queries_per_tile=32, max_query_count=-1):
    """Per-segment np.searchsorted and the validation bits from their definitions."""
    view = values if value_order is None else values[value_order]
    V, Q = len(view), len(queries)
    positions = np.full(Q, -1, dtype=np.int64)
    word = 0
    for vo, vc, qo, qc in np.asarray(segments, dtype=np.int64).reshape(-1, 4):
        bad = False
        if vo < 0 or vc < 0 or vo + vc > V:
            word |= 1
            bad = True
        if qo < 0 or qc < 0 or qo + qc > Q or (max_query_count >= 0 and qc > max_query_count):
            word |= 2
            bad = True
        if bad:
            continue
        seq = view[vo:vo + vc]
        q = queries[qo:qo + qc]
        # np.searchsorted puts NaN after every number, as galloping_search does.
        positions[qo:qo + qc] = vo + np.searchsorted(seq, q, side="left")
        if q.dtype.kind == "f" and not np.all(np.isfinite(q)):
            word |= 8
        for start in range(0, qc, queries_per_tile):
            tile = q[start:start + queries_per_tile]
            tile = tile[~np.isnan(tile)] if tile.dtype.kind == "f" else tile
            if np.any(tile[1:] < tile[:-1]):
                word |= 4
    return positions, word


def random_segments(rng, S, V, mean_queries):
    counts = rng.integers(0, 2 * mean_queries + 1, size=S)
    qoff = np.concatenate([[0], np.cumsum(counts)[:-1]])
    vc = rng.integers(0, V + 1, size=S)
    vo = rng.integers(0, V - vc + 1)
    return np.stack([vo, vc, qoff, counts], axis=1).astype(np.int64), int(counts.sum())


@pytest.mark.parametrize("dtype", [np.float32, np.uint32])
@pytest.mark.parametrize("with_order", [False, True])
@pytest.mark.parametrize("queries_per_tile", [1, 5, 32])
@pytest.mark.parametrize("order_kind", ["sorted", "duplicates", "shuffled"])
def test_matches_searchsorted(rng, dtype, with_order, queries_per_tile, order_kind):
    N = 500
    if order_kind == "duplicates":
        raw = rng.integers(0, 8, size=N).astype(dtype)
    else:
        raw = rng.uniform(0, 1000, size=N).astype(dtype)
    if with_order:
        values = raw  # unsorted storage; the index sorts it
        value_order = np.argsort(raw, kind="stable")
        V = N
    else:
        values = np.sort(raw)
        value_order = None
        V = N
    segments, Q = random_segments(rng, 20, V, 30)
    queries = np.empty(Q, dtype=dtype)
    for vo, vc, qo, qc in segments:
        q = rng.uniform(0, 1100, size=qc).astype(dtype) if order_kind != "duplicates" else \
            rng.integers(0, 10, size=qc).astype(dtype)
        queries[qo:qo + qc] = q if order_kind == "shuffled" else np.sort(q)
    got, word = edgewise.galloping_search(values, queries, segments, value_order=value_order,
                                          queries_per_tile=queries_per_tile)
    want, want_word = reference(values, queries, segments, value_order, queries_per_tile)
    assert got.dtype == np.int64 and got.shape == (Q,)
    np.testing.assert_array_equal(got, want)
    assert word == want_word
    if order_kind != "shuffled":
        assert word == 0


def test_without_segments_is_a_batched_lower_bound(rng):
    values = np.sort(rng.integers(0, 10**6, size=100_000).astype(np.uint32))
    queries = np.sort(rng.integers(0, 10**6 + 10, size=50_000).astype(np.uint32))
    got, word = edgewise.galloping_search(values, queries)
    np.testing.assert_array_equal(got, np.searchsorted(values, queries, side="left"))
    assert word == 0
    _, word = edgewise.galloping_search(values, queries[::-1].copy())
    assert word == 4


def test_every_validation_bit():
    values = np.arange(1, 7, dtype=np.float32)
    queries = np.array([0, 2.5, 9, 3, np.nan, np.inf, 1, 4], dtype=np.float32)
    cases = [
        ([4, 3, 3, 2], 1),
        ([-1, 2, 3, 2], 1),
        ([0, 6, 7, 2], 2),
        ([0, 6, 3, -1], 2),
        ([9, 1, 9, 1], 3),
    ]
    for bad, bit in cases:
        segments = np.array([[0, 6, 0, 2], bad, [2, 4, 6, 2]], dtype=np.int64)
        got, word = edgewise.galloping_search(values, queries, segments)
        assert word == bit, bad
        np.testing.assert_array_equal(got, [0, 2, -1, -1, -1, -1, 2, 3])
    # max_query_count is an inclusive cap.
    _, word = edgewise.galloping_search(values, queries, np.array([[0, 6, 0, 3]]), max_query_count=2)
    assert word == 2
    # Non-finite queries (8): +inf is exact, NaN sorts last; decreasing (4).
    got, word = edgewise.galloping_search(values, queries, np.array([[0, 6, 3, 5]]), queries_per_tile=8)
    np.testing.assert_array_equal(got[3:], [2, 6, 6, 0, 3])
    assert word == 8 | 4


def test_packed_segments_and_empty_inputs():
    values = np.array([1, 2, 3], dtype=np.uint32)
    queries = np.array([2, 3], dtype=np.uint32)
    got, word = edgewise.galloping_search(values, queries, np.array([0, 3, 0, 2, 1, 0, 2, 0], dtype=np.int32))
    np.testing.assert_array_equal(got, [1, 2])
    assert word == 0
    got, word = edgewise.galloping_search(values, np.array([], np.uint32), np.zeros((0, 4), np.int64))
    assert got.shape == (0,) and word == 0
    got, word = edgewise.galloping_search(np.array([], np.float32), np.array([1.0], np.float32))
    np.testing.assert_array_equal(got, [0])


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        (dict(queries=np.array([1.0])), "queries must have the dtype of values"),
        (dict(values=np.array([1.0, 2.0]), queries=np.array([1.0])), "values must be float32 or uint32"),
        (dict(segments=np.array([[0, 2, 0]])), "segments must be [S, 4]"),
        (dict(segments=np.array([[0.0, 2, 0, 1]])), "integer array"),
        (dict(value_order=np.array([0, 5])), "value_order[1] (5) must lie in [0, 2)"),
        (dict(queries_per_tile=0), "queries_per_tile (0) must be >= 1"),
        (dict(max_query_count=-5), "max_query_count (-5)"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs, needle):
    args = dict(values=np.array([1, 2], np.float32), queries=np.array([1], np.float32),
                segments=np.array([[0, 2, 0, 1]]))
    args.update(kwargs)
    with pytest.raises(ValueError, match="galloping_search") as info:
        edgewise.galloping_search(**args)
    assert needle in str(info.value)
