"""Edge features: the OGB npz key edge_feat (loaded in edge_index order, checked) and
Graph.with_edge_attr / Graph.edge_attr (kept in CSR order, each row with its edge)."""

import numpy as np
import pytest

import edgewise as ew


def write(path, E=7, edge_feat=None):
    rng = np.random.default_rng(0)
    arrays = dict(num_nodes=np.array(5), edge_index=rng.integers(0, 5, (2, E)), node_label=np.arange(5) % 2,
                  train_idx=np.array([0, 1]), valid_idx=np.array([2]), test_idx=np.array([3, 4]))
    if edge_feat is not None:
        arrays["edge_feat"] = edge_feat
    np.savez(path, **arrays)
    return arrays


def test_edge_features_load_in_edge_index_order(tmp_path):
    feat = np.arange(21, dtype=np.float64).reshape(7, 3) / 4
    arrays = write(tmp_path / "g.npz", edge_feat=feat)
    d = ew.load_dataset(str(tmp_path / "g.npz"))
    np.testing.assert_array_equal(d["edge_index"], arrays["edge_index"])
    assert d["edge_feat"].dtype == np.float32 and d["edge_feat"].shape == (7, 3)
    np.testing.assert_array_equal(d["edge_feat"], feat.astype(np.float32))
    write(tmp_path / "h.npz", edge_feat=np.arange(7))  # [E] integers: one float32 column
    one_d = ew.load_dataset(str(tmp_path / "h.npz"))
    np.testing.assert_array_equal(one_d["edge_feat"], np.arange(7, dtype=np.float32).reshape(7, 1))
    write(tmp_path / "none.npz")
    assert "edge_feat" not in ew.load_dataset(str(tmp_path / "none.npz"))


@pytest.mark.parametrize("feat,message", [
    (np.zeros((6, 2)), r"edge_feat.*shape \(E, D\) or \(E,\) with E = 7, got \(6, 2\)"),
    (np.zeros((7, 0)), r"edge_feat.*got \(7, 0\)"),
    (np.array([[0.0], [1], [2], [np.inf], [4], [5], [6]]), r"edge_feat.*non-finite value \(inf\) at \[3, 0\]"),
])
def test_bad_edge_features_are_rejected_naming_the_key(tmp_path, feat, message):
    write(tmp_path / "bad.npz", edge_feat=feat)
    with pytest.raises(ew.DataFileError, match=message):
        ew.load_dataset(str(tmp_path / "bad.npz"))


def test_graph_keeps_each_edges_features_with_it_in_csr_order():
    rng = np.random.default_rng(1)
    ei = rng.integers(0, 6, (2, 25))
    ei[:, :2] = [[3, 3], [1, 1]]  # a duplicate pair with different features
    attr = rng.standard_normal((25, 3)).astype(np.float32)
    g = ew.Graph(ei, 6)
    assert g.edge_attr() is None
    csr = g.with_edge_attr(attr).edge_attr()
    np.testing.assert_array_equal(csr, attr[g.edge_ids()])
    offsets = g.offsets()
    dst = np.repeat(np.arange(6), np.diff(offsets))
    got = sorted(zip(g.sources().tolist(), dst.tolist(), map(tuple, csr.tolist())))
    want = sorted(zip(ei[0].tolist(), ei[1].tolist(), map(tuple, attr.tolist())))
    assert got == want
    one_col = g.with_edge_attr(attr[:, 0]).edge_attr()
    assert one_col.shape == (25, 1)
    with pytest.raises(ValueError, match=r"edge_attr \[24, 3\] has 24 rows for 25 edges"):
        g.with_edge_attr(attr[:24])
    bad = attr.copy()
    bad[4, 2] = np.nan
    with pytest.raises(ValueError, match=r"edge_attr\[4, 2\]"):
        g.with_edge_attr(bad)
