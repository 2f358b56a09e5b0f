"""Tests of the dataset functions: read_npz against numpy.load (files written here
and, when present, the real datasets), load_dataset, and the generators."""

import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

import edgewise as ew


def real_data_dir():
    """EDGEWISE_DATA_DIR, else ../shared/datasets next to the checkout, else /work/shared/datasets."""
    candidates = [os.environ.get("EDGEWISE_DATA_DIR"),
                  Path(__file__).resolve().parents[2].parent / "shared" / "datasets",
                  "/work/shared/datasets"]
    for c in candidates:
        if c and (Path(c) / "cora.npz").is_file():
            return Path(c)
    return None


REAL = real_data_dir()
needs_real = pytest.mark.skipif(REAL is None, reason="real datasets not found: set EDGEWISE_DATA_DIR "
                                                     "to the folder holding cora.npz etc.")

README = {  # nodes, directed edges, features, classes, train, valid, test, density
    "cora": (2708, 10556, 1433, 7, 140, 500, 1000, 0.012683),
    "citeseer": (3327, 9104, 3703, 6, 120, 500, 1000, 0.008536),
    "amazon_photo": (7650, 238162, 745, 8, 160, 240, 7250, 0.347398),
    "coauthor_cs": (18333, 163788, 6805, 15, 300, 450, 17583, 0.008754),
}
# Of node_feat's nonzeros (row r, column c, value v), computed once with numpy from
# the files whose sha256 the README lists: count, sum v, sum (r + 1) c, sum v (c + 1).
FEATURE_CHECKSUMS = {
    "cora": (49216, 49216.0, 52471258658, 39066059.0),
    "citeseer": (105165, 105165.0, 317642994161, 191467265.0),
    "amazon_photo": (1979909, 1979909.0, 2812629705283, 738924949.0),
    "coauthor_cs": (1092079, 1741991.0, 33757480384973, 5928714283.0),
}


def sample_arrays(rng):
    return {
        "f32": rng.standard_normal((3, 4)).astype(np.float32),
        "f64": rng.standard_normal((2, 3, 1)),
        "i8": rng.integers(-128, 128, size=7, dtype=np.int8),
        "i16": rng.integers(-2**15, 2**15, size=5, dtype=np.int16),
        "i32": rng.integers(-2**31, 2**31, size=(2, 2), dtype=np.int32),
        "i64": np.array([np.iinfo(np.int64).min, -1, 0, np.iinfo(np.int64).max]),
        "u8": rng.integers(0, 256, size=9, dtype=np.uint8),
        "u16": rng.integers(0, 2**16, size=3, dtype=np.uint16),
        "u32": rng.integers(0, 2**32, size=3, dtype=np.uint32),
        "u64": np.array([0, 2**64 - 1], dtype=np.uint64),
        "flags": rng.random((2, 5)) < 0.5,
        "scalar": np.array(2708),
        "empty": np.zeros((0, 3), np.float32),
        "fortran": np.asfortranarray(rng.standard_normal((4, 5)).astype(np.float32)),
        "fortran3": np.asfortranarray(np.arange(24, dtype=np.int32).reshape(2, 3, 4)),
        "special": np.array([np.nan, -0.0, np.inf, -np.inf], np.float32),
    }


@pytest.mark.parametrize("compressed", [False, True], ids=["savez", "savez_compressed"])
def test_read_npz_matches_numpy_load(tmp_path, rng, compressed):
    arrays = sample_arrays(rng)
    path = tmp_path / "a.npz"
    (np.savez_compressed if compressed else np.savez)(path, **arrays)
    got = ew.read_npz(str(path))
    with np.load(path) as ref:
        assert list(got) == ref.files
        for key in ref.files:
            assert got[key].dtype == ref[key].dtype, key
            assert got[key].shape == ref[key].shape, key
            assert got[key].flags.c_contiguous, key
            np.testing.assert_array_equal(got[key], ref[key], err_msg=key)
    assert np.signbit(got["special"][1])


def test_read_npz_large_entry_is_exact(tmp_path, rng):
    # Several MB: the pipelined (two-thread) inflate path.
    x = np.zeros((1500, 1000), np.float32)
    x[rng.integers(0, 1500, 20000), rng.integers(0, 1000, 20000)] = rng.standard_normal(20000)
    np.savez_compressed(tmp_path / "big.npz", x=x)
    np.testing.assert_array_equal(ew.read_npz(str(tmp_path / "big.npz"))["x"], x)


def test_corrupt_and_unsupported_files_raise_data_file_error(tmp_path):
    assert issubclass(ew.DataFileError, ValueError)
    np.savez(tmp_path / "good.npz", x=np.arange(100, dtype=np.float32))
    data = (tmp_path / "good.npz").read_bytes()

    with pytest.raises(ew.DataFileError, match="cannot open"):
        ew.read_npz(str(tmp_path / "missing.npz"))
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        (tmp_path / "cut.npz").write_bytes(data[:cut])
        with pytest.raises(ew.DataFileError, match="cut.npz"):
            ew.read_npz(str(tmp_path / "cut.npz"))

    # A payload byte flipped in a stored entry: the CRC catches it.
    info = zipfile.ZipFile(tmp_path / "good.npz").infolist()[0]
    flipped = bytearray(data)
    flipped[info.header_offset + 30 + len(info.filename) + len(info.extra) + 200] ^= 1
    (tmp_path / "flip.npz").write_bytes(bytes(flipped))
    with pytest.raises(ew.DataFileError, match="CRC-32 mismatch"):
        ew.read_npz(str(tmp_path / "flip.npz"))

    np.savez(tmp_path / "be.npz", x=np.arange(3, dtype=">f4"))
    with pytest.raises(ValueError, match="big-endian"):
        ew.read_npz(str(tmp_path / "be.npz"))
    np.savez(tmp_path / "c.npz", x=np.ones(3, np.complex64))
    with pytest.raises(ew.DataFileError, match="unsupported dtype '<c8'"):
        ew.read_npz(str(tmp_path / "c.npz"))
    np.save(tmp_path / "plain.npy", np.ones(3))
    with pytest.raises(ew.DataFileError, match="single .npy array"):
        ew.read_npz(str(tmp_path / "plain.npy"))


def to_dense(features):
    if isinstance(features, tuple):
        offsets, indices, values, shape = features
        dense = np.zeros(shape, np.float32)
        dense[np.repeat(np.arange(shape[0]), np.diff(offsets)), indices] = values
        return dense
    return features


def save_ogb(path, d):
    np.savez_compressed(path, num_nodes=np.array(d["num_nodes"]), edge_index=d["edge_index"],
                        node_feat=to_dense(d["features"]), node_label=d["labels"], train_idx=d["train_idx"],
                        valid_idx=d["valid_idx"], test_idx=d["test_idx"])


def test_planted_partition_round_trips_through_an_npz(tmp_path):
    d = ew.planted_partition(num_nodes=500, num_classes=4, num_features=300, train_per_class=10, num_valid=100,
                             num_test=200, seed=3)
    save_ogb(tmp_path / "pp.npz", d)
    for features in ("sparse", "dense", "auto"):
        g = ew.load_dataset(str(tmp_path / "pp.npz"), features=features)
        assert g["name"] == "pp"
        assert g["num_nodes"] == 500 and g["num_classes"] == 4
        for key in ("edge_index", "labels", "train_idx", "valid_idx", "test_idx"):
            np.testing.assert_array_equal(g[key], d[key], err_msg=key)
            assert g[key].dtype == np.int64
        expect_sparse = features != "dense"  # density ~1.3 % < 10 %
        assert g["feature_format"] == ("sparse" if expect_sparse else "dense")
        assert isinstance(g["features"], tuple) == expect_sparse
        np.testing.assert_array_equal(to_dense(g["features"]), to_dense(d["features"]))
    offsets, indices, values, shape = ew.load_dataset(str(tmp_path / "pp.npz"), features="sparse")["features"]
    assert offsets.dtype == np.int64 and indices.dtype == np.int32 and values.dtype == np.float32
    assert shape == (500, 300) and offsets[0] == 0 and offsets[-1] == len(indices) == len(values)
    assert not isinstance(ew.load_dataset(str(tmp_path / "pp.npz"), sparse_threshold=0.001)["features"], tuple)


def test_names_are_looked_up_in_the_data_dir(tmp_path, monkeypatch):
    d = ew.planted_partition(num_nodes=100, num_classes=2, num_features=20, train_per_class=5, num_valid=10,
                             num_test=10)
    save_ogb(tmp_path / "tiny_graph.npz", d)
    monkeypatch.setenv("EDGEWISE_DATA_DIR", str(tmp_path))
    assert ew.default_data_dir() == str(tmp_path)
    assert ew.load_dataset("Tiny-Graph")["num_nodes"] == 100
    with pytest.raises(ew.DataFileError, match="EDGEWISE_DATA_DIR") as err:
        ew.load_dataset("cora_not_here")
    assert str(tmp_path / "cora_not_here.npz") in str(err.value)
    monkeypatch.delenv("EDGEWISE_DATA_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert ew.default_data_dir() == "/xdg/edgewise/datasets"
    with pytest.raises(ValueError, match="feature format 'csv'"):
        ew.load_dataset(str(tmp_path / "tiny_graph.npz"), features="csv")


def test_invalid_dataset_contents_are_named(tmp_path):
    d = ew.planted_partition(num_nodes=50, num_classes=2, num_features=10, train_per_class=2, num_valid=5,
                             num_test=5)
    bad = dict(d)
    bad["edge_index"] = d["edge_index"].copy()
    bad["edge_index"][1, 3] = 50
    save_ogb(tmp_path / "bad.npz", bad)
    with pytest.raises(ew.DataFileError, match=r"edge_index\[1, 3\] \(50\) must lie in \[0, 50\)"):
        ew.load_dataset(str(tmp_path / "bad.npz"))
    bad = dict(d)
    bad["test_idx"] = np.concatenate([d["test_idx"], d["train_idx"][:1]])
    bad["test_idx"].sort()
    save_ogb(tmp_path / "overlap.npz", bad)
    with pytest.raises(ew.DataFileError, match="is in both train_idx and test_idx"):
        ew.load_dataset(str(tmp_path / "overlap.npz"))


@needs_real
@pytest.mark.parametrize("name", ["cora", "citeseer", "amazon_photo"])
def test_real_dataset_read_npz_equals_numpy_load(name):
    got = ew.read_npz(str(REAL / f"{name}.npz"))
    with np.load(REAL / f"{name}.npz") as ref:
        assert list(got) == ref.files
        for key in ref.files:
            assert got[key].dtype == ref[key].dtype
            np.testing.assert_array_equal(got[key], ref[key], err_msg=key)


@needs_real
@pytest.mark.parametrize("name", list(README))
def test_real_dataset_loads_match_the_readme_and_numpy(name):
    nodes, edges, feats, classes, train, valid, test, density = README[name]
    d = ew.load_dataset(str(REAL / f"{name}.npz"), features="sparse")
    offsets, indices, values, shape = d["features"]
    assert (d["num_nodes"], d["edge_index"].shape[1], shape[1], d["num_classes"]) == (nodes, edges, feats, classes)
    assert (len(d["train_idx"]), len(d["valid_idx"]), len(d["test_idx"])) == (train, valid, test)
    assert abs(len(values) / (nodes * feats) - density) <= 1e-6
    rows = np.repeat(np.arange(nodes, dtype=np.int64), np.diff(offsets))
    cols = indices.astype(np.int64)
    v = values.astype(np.float64)
    assert (len(v), v.sum(), int(((rows + 1) * cols).sum()), (v * (cols + 1)).sum()) == FEATURE_CHECKSUMS[name]
    with np.load(REAL / f"{name}.npz") as ref:
        np.testing.assert_array_equal(d["edge_index"], ref["edge_index"])
        np.testing.assert_array_equal(d["labels"], ref["node_label"])
        if nodes * feats * 4 < 100 << 20:  # Coauthor-CS's dense matrix (499 MB) is covered by the checksums
            x = ref["node_feat"]
            r, c = np.nonzero(x)
            np.testing.assert_array_equal(rows, r)
            np.testing.assert_array_equal(indices, c)
            np.testing.assert_array_equal(values, x[r, c])
    if nodes * feats * 4 < 100 << 20:
        auto = ew.load_dataset(str(REAL / f"{name}.npz"), features="auto")
        assert auto["feature_format"] == ("sparse" if density <= 0.1 else "dense")


def test_planted_partition_defaults_and_determinism():
    d = ew.planted_partition(seed=1)
    n = d["num_nodes"]
    assert n == 2708 and d["num_classes"] == 7 and d["name"] == "planted_partition"
    src, dst = d["edge_index"]
    assert np.all(src != dst)
    keys = src * n + dst
    assert np.all(np.diff(keys) > 0)  # sorted, no duplicates
    np.testing.assert_array_equal(np.sort(dst * n + src), keys)  # symmetric
    labels = d["labels"]
    assert abs(np.mean(labels[src] == labels[dst]) - 0.7) < 0.03
    assert len(d["train_idx"]) == 140 and len(d["valid_idx"]) == 500 and len(d["test_idx"]) == 1000
    again = ew.planted_partition(seed=1)
    np.testing.assert_array_equal(again["edge_index"], d["edge_index"])
    np.testing.assert_array_equal(to_dense(again["features"]), to_dense(d["features"]))
    assert not np.array_equal(ew.planted_partition(seed=2)["labels"], labels)
    dense = ew.planted_partition(seed=1, features="dense")["features"]
    np.testing.assert_array_equal(dense, to_dense(d["features"]))
    with pytest.raises(ValueError, match="planted_partition: homophily"):
        ew.planted_partition(homophily=2.0)


def test_rmat_graph_shapes_options_and_determinism():
    g = ew.rmat_graph(1000, 20000, seed=4, symmetrize=True, num_features=8, num_classes=3)
    src, dst = g["edge_index"]
    keys = src * 1000 + dst
    assert np.all(np.diff(keys) > 0) and np.all(src != dst) and src.max() < 1000
    np.testing.assert_array_equal(np.sort(dst * 1000 + src), keys)
    assert g["features"].shape == (1000, 8) and g["features"].dtype == np.float32
    assert g["features"].min() >= -1 and g["features"].max() < 1
    assert set(np.unique(g["labels"])) <= {0, 1, 2}
    assert len(g["train_idx"]) + len(g["valid_idx"]) + len(g["test_idx"]) == 1000
    np.testing.assert_array_equal(ew.rmat_graph(1000, 20000, seed=4, symmetrize=True)["edge_index"],
                                  g["edge_index"])
    raw = ew.rmat_graph(4096, 30000, remove_self_loops=False, deduplicate=False, seed=4)
    assert raw["edge_index"].shape == (2, 30000)
    degree = np.bincount(raw["edge_index"][0], minlength=4096)
    assert degree.max() > 20 * degree.mean()
    with pytest.raises(ValueError, match="rmat_graph: a, b, c"):
        ew.rmat_graph(10, 10, a=0.9, b=0.2, c=0.1)
