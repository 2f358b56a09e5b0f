"""Graph.find_edges against a NumPy scan of the CSR edges: random graphs with
duplicates and self loops, empty queries, an empty graph and bad arguments."""

import numpy as np
import pytest

import edgewise as ew


def naive_find(g, edge_index, src, dst):
    """The smallest CSR position k with (source, destination) == (src[i], dst[i]), or -1."""
    order = g.edge_ids()
    csr_src, csr_dst = edge_index[0][order], edge_index[1][order]
    out = np.full(len(src), -1, np.int64)
    for i, (u, v) in enumerate(zip(src, dst)):
        hits = np.flatnonzero((csr_src == u) & (csr_dst == v))
        if len(hits):
            out[i] = hits[0]
    return out


@pytest.mark.parametrize("n,e", [(1, 4), (6, 30), (80, 600)])
def test_find_edges_matches_a_numpy_scan(n, e):
    rng = np.random.default_rng(n)
    ei = rng.integers(0, n, (2, e))
    ei[1, : e // 5] = ei[0, : e // 5]  # self loops
    ei = np.concatenate([ei, ei[:, : e // 4]], axis=1)  # duplicates
    g = ew.Graph(ei, n)
    src = np.concatenate([ei[0], ei[1], rng.integers(0, n, 200)])
    dst = np.concatenate([ei[1], ei[0], rng.integers(0, n, 200)])
    perm = rng.permutation(len(src))
    src, dst = src[perm].astype(np.int32), dst[perm]  # any integer dtype
    got = g.find_edges(src, dst)
    assert got.dtype == np.int64 and got.shape == (len(src),)
    np.testing.assert_array_equal(got, naive_find(g, ei, src, dst))


def test_find_edges_empty_queries_and_empty_graph():
    g = ew.Graph(np.array([[0], [1]]), 3)
    assert g.find_edges(np.array([], np.int64), np.array([], np.int64)).shape == (0,)
    empty = ew.Graph(np.zeros((2, 0), np.int64), 4)
    np.testing.assert_array_equal(empty.find_edges([0, 3], [3, 3]), [-1, -1])


def test_find_edges_rejects_bad_arguments_naming_them():
    g = ew.Graph(np.array([[0, 1], [1, 2]]), 3)
    with pytest.raises(ValueError, match=r"src\[1\] \(3\) must lie in \[0, 3\)"):
        g.find_edges([0, 3], [1, 1])
    with pytest.raises(ValueError, match=r"dst\[0\] \(-1\)"):
        g.find_edges([0], [-1])
    with pytest.raises(ValueError, match="src has 2 ids but dst has 1"):
        g.find_edges([0, 1], [1])
    with pytest.raises(ValueError, match="dst must be an integer array"):
        g.find_edges([0], [0.5])
