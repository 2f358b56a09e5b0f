"""Tests of the engine's Python face: Graph (CSR from an edge list, aggregation)
against NumPy references, and train() on the built-in synthetic graph."""

import numpy as np
import pytest

import edgewise as ew


def random_graph(rng, n, e):
    src = rng.integers(0, n, e)
    dst = rng.integers(0, n, e)
    dst[: e // 4] = 3  # a hub with duplicate edges
    return np.stack([src, dst]).astype(np.int64)


def test_graph_csr_matches_a_stable_sort_by_destination():
    rng = np.random.default_rng(1)
    n, e = 50, 400
    ei = random_graph(rng, n, e)
    g = ew.Graph(ei, n)
    order = np.argsort(ei[1], kind="stable")
    assert g.num_nodes == n and g.num_edges == e
    np.testing.assert_array_equal(g.edge_ids(), order)
    np.testing.assert_array_equal(g.sources(), ei[0][order])
    counts = np.bincount(ei[1], minlength=n)
    np.testing.assert_array_equal(g.offsets(), np.concatenate([[0], np.cumsum(counts)]))
    np.testing.assert_array_equal(g.in_degree(), counts)


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("strategy", ["segment", "scatter"])
def test_aggregate_matches_numpy(op, strategy):
    rng = np.random.default_rng(2)
    n, e, c = 40, 300, 5
    ei = random_graph(rng, n, e)
    x = rng.standard_normal((n, c)).astype(np.float32)
    got = ew.Graph(ei, n).aggregate(x, op=op, strategy=strategy)
    want = np.zeros((n, c), np.float32)
    for v in range(n):
        msgs = x[ei[0][ei[1] == v]]
        if len(msgs):
            want[v] = {"sum": msgs.sum(0), "mean": msgs.mean(0), "max": msgs.max(0), "min": msgs.min(0)}[op]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_graph_rejects_out_of_range_ids():
    with pytest.raises(ValueError, match="num_nodes|range|\\[0, 5\\)"):
        ew.Graph(np.array([[0, 1], [1, 5]]), 5)


def test_train_learns_the_synthetic_graph_and_is_seeded():
    a = ew.train("synthetic", model="gcn", epochs=40, seed=3)
    b = ew.train("synthetic", model="gcn", epochs=40, seed=3)
    assert a["test_acc"] == b["test_acc"], "same seed, same result"
    assert [h["loss"] for h in a["history"]] == [h["loss"] for h in b["history"]]
    assert a["test_acc"] > 0.5  # 7 classes: chance is ~0.14
    assert len(a["history"]) == 40


def test_train_last_epoch_selection_and_bad_names():
    r = ew.train("synthetic", model="sage", epochs=15, select="last")
    assert r["best_epoch"] == 15
    assert r["test_acc"] == r["history"][-1]["test_acc"]
    with pytest.raises(ValueError, match="select"):
        ew.train("synthetic", epochs=2, select="best")
    with pytest.raises(ValueError):
        ew.train("synthetic", epochs=2, model="transformer")
