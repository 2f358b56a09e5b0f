"""load_dataset on files written by NumPy (and scipy, when installed): gnn-benchmark
.npz with text and pickled object entries, scipy.sparse.save_npz adjacency matrices,
edge lists. The reference is computed here from the dense matrices."""

import numpy as np
import pytest

import edgewise as ew


def csr_parts(dense):
    """scipy's CSR arrays of a dense matrix, built by hand (no scipy needed)."""
    rows, cols = np.nonzero(dense)
    indptr = np.zeros(dense.shape[0] + 1, dtype=np.int64)
    np.add.at(indptr, rows + 1, 1)
    return dense[rows, cols], cols.astype(np.int32), np.cumsum(indptr), np.array(dense.shape, dtype=np.int64)


def random_graph(rng, n=120, p=0.05):
    adj = (rng.random((n, n)) < p).astype(np.float32)
    np.fill_diagonal(adj, 0)
    return adj


def expected_edge_index(adj):
    return np.stack(np.nonzero(adj)).astype(np.int64)  # row-major: sorted by (source, destination)


def csr_to_dense(features):
    offsets, indices, values, (n, f) = features
    out = np.zeros((n, f), dtype=np.float32)
    for r in range(n):
        out[r, indices[offsets[r]:offsets[r + 1]]] = values[offsets[r]:offsets[r + 1]]
    return out


@pytest.mark.parametrize("save", [np.savez, np.savez_compressed])
def test_gnn_benchmark_npz_written_by_numpy(tmp_path, rng, save):
    n, f = 150, 30
    adj = random_graph(rng, n)
    attr = np.where(rng.random((n, f)) < 0.1, rng.integers(1, 5, (n, f)), 0).astype(np.float32)
    labels = rng.integers(0, 3, n)
    a_data, a_idx, a_ptr, a_shape = csr_parts(adj)
    x_data, x_idx, x_ptr, x_shape = csr_parts(attr)
    path = tmp_path / "bench.npz"
    save(path, adj_data=a_data, adj_indices=a_idx, adj_indptr=a_ptr, adj_shape=a_shape,
         attr_data=x_data, attr_indices=x_idx, attr_indptr=x_ptr, attr_shape=x_shape, labels=labels,
         node_names=np.array([f"node{i}" for i in range(n)]),             # '<U7'
         attr_names=np.array([f"w{i}" for i in range(f)], dtype=object),  # pickled
         class_names=np.array([b"a", b"b", b"c"]))                         # '|S1'
    d = ew.load_dataset(str(path), features="sparse")
    # Undirected, as Shchur et al.'s loader and PyG's read_npz make it: A + A^T, no self loops.
    undirected = ((adj + adj.T) > 0).astype(np.float32)
    np.fill_diagonal(undirected, 0)
    np.testing.assert_array_equal(d["edge_index"], expected_edge_index(undirected))
    assert f"{int(adj.sum())} stored edges \u2192 {int(undirected.sum())} directed edges" in d["note"], d["note"]
    as_stored = ew.load_dataset(str(path), features="sparse", symmetrize=False)
    np.testing.assert_array_equal(as_stored["edge_index"], expected_edge_index(adj))
    np.testing.assert_array_equal(csr_to_dense(d["features"]), attr)
    np.testing.assert_array_equal(d["labels"], labels)
    assert d["num_classes"] == labels.max() + 1
    for key in ("node_names", "attr_names", "class_names", "random"):
        assert key in d["note"], d["note"]
    splits = [d["train_idx"], d["valid_idx"], d["test_idx"]]
    assert sum(map(len, splits)) == n and len(np.unique(np.concatenate(splits))) == n
    for c in range(3):
        assert np.sum(labels[d["train_idx"]] == c) == min(20, np.sum(labels == c))
        assert np.sum(labels[d["valid_idx"]] == c) == min(30, max(0, np.sum(labels == c) - 20))


def test_gnn_benchmark_error_names_file_and_key(tmp_path):
    path = tmp_path / "broken.npz"
    np.savez(path, adj_data=np.ones(2, np.float32), adj_indices=np.array([0, 7]), adj_indptr=np.array([0, 1, 2]),
             adj_shape=np.array([2, 2]))
    with pytest.raises(ew.DataFileError, match=r"broken\.npz.*key 'adj_indices' holds indices\[1\] \(7\)"):
        ew.load_dataset(str(path))


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_scipy_save_npz(tmp_path, rng, fmt):
    sparse = pytest.importorskip("scipy.sparse", reason="scipy is not installed: no real save_npz file to read")
    adj = random_graph(rng)
    path = tmp_path / f"adj_{fmt}.npz"
    sparse.save_npz(path, getattr(sparse, f"{fmt}_matrix")(adj))
    d = ew.load_dataset(str(path), features="dense")
    np.testing.assert_array_equal(d["edge_index"], expected_edge_index(adj))
    np.testing.assert_array_equal(d["features"][:, 0], adj.sum(axis=0))  # in-degree
    assert d["num_classes"] == 0 and "no labels" in d["note"]


def test_edge_list_with_header_and_comments(tmp_path, rng):
    adj = random_graph(rng)
    path = tmp_path / "graph.tsv"
    src, dst = np.nonzero(adj)
    order = rng.permutation(len(src))
    np.savetxt(path, np.stack([src[order], dst[order]], axis=1), fmt="%d", delimiter="\t",
               header="source\ttarget", comments="")
    d = ew.load_dataset(str(path))
    expected = expected_edge_index(adj)
    assert d["num_nodes"] == expected.max() + 1
    np.testing.assert_array_equal(d["edge_index"], expected)


def test_edge_list_weights_and_conventions(tmp_path, rng):
    adj = random_graph(rng, n=40, p=0.1)
    np.fill_diagonal(adj, 1)  # self loops too
    src, dst = np.nonzero(adj)
    weight = rng.standard_normal(len(src)).astype(np.float32)
    path = tmp_path / "w.csv"
    np.savetxt(path, np.stack([src, dst, weight], axis=1), fmt=["%d", "%d", "%.9g"], delimiter=",")
    d = ew.load_dataset(str(path))
    np.testing.assert_array_equal(d["edge_index"], expected_edge_index(adj))
    np.testing.assert_array_equal(d["edge_weight"], weight)
    no_loops = ew.load_dataset(str(path), remove_self_loops=True)
    keep = src != dst
    np.testing.assert_array_equal(no_loops["edge_index"], np.stack([src[keep], dst[keep]]))
    np.testing.assert_array_equal(no_loops["edge_weight"], weight[keep])
    with pytest.raises(ew.DataFileError, match=r"w\.csv.*cannot symmetrise.*weights"):
        ew.load_dataset(str(path), symmetrize=True)
    with pytest.raises(ew.DataFileError, match=r"w\.csv' line \d+: node id \d+ makes more nodes than the 3 allowed"):
        ew.load_dataset(str(path), max_nodes=3)
