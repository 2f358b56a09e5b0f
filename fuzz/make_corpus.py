#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (fuzz/corpus/<target>/): small valid
inputs in each layout plus a few edge cases. Deterministic (fixed ZIP
timestamps); rerun after changing it and commit the result.
Usage: python3 fuzz/make_corpus.py"""
import io
import pathlib
import shutil
import struct
import zipfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"


def npy(array, version=None):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asanyarray(array), version=version, allow_pickle=False)
    return buf.getvalue()


def npz(arrays, compressed=True, zip64=False):
    """An .npz like numpy.savez(_compressed), with a fixed timestamp."""
    buf = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    with zipfile.ZipFile(buf, "w") as z:
        for key, value in arrays.items():
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            data = value if isinstance(value, bytes) else npy(value)
            with z.open(info, "w", force_zip64=zip64) as f:
                f.write(data)
    return buf.getvalue()


def write(target, name, data):
    d = ROOT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


def npz_corpus():
    t = "fuzz_npz"
    mixed = {
        "f4": np.arange(6, dtype="<f4").reshape(2, 3),
        "i8": np.array([0, -1, 2**62], dtype="<i8"),
        "b1": np.array([True, False]),
        "u1": np.array([255, 0], dtype="u1"),
        "f8": np.float64(1.5),
        "i2": np.array([[-3]], dtype="<i2"),
    }
    write(t, "mixed_stored.npz", npz(mixed, compressed=False))
    write(t, "mixed_deflate.npz", npz(mixed, compressed=True))
    write(t, "zip64.npz", npz({"a": np.array([1, 2, 3], dtype="<i4")}, compressed=False, zip64=True))
    write(t, "fortran.npz", npz({"m": np.asfortranarray(np.arange(6, dtype="<f8").reshape(2, 3))}, False))
    write(t, "empty_arrays.npz", npz({"e": np.zeros((0, 4), "<f4"), "s": np.zeros((), "<i8")}, False))
    write(t, "npy_v2.npz", npz({"v2": npy(np.arange(4, dtype="<u2"), version=(2, 0))}, False))
    write(t, "empty_archive.npz", npz({}))
    write(t, "not_float.npz", npz({"x": np.array([np.nan, np.inf, 0.5, 1e300])}, False))
    write(t, "single.npy", npy(np.arange(3, dtype="<i4")))
    write(t, "big_endian.npz", npz({"x": np.arange(2, dtype=">i4")}, False))
    # A local header whose signature is broken (the central directory still points at
    # it): its reader used to leak the open file (tools/fuzz.sh 600 ran out of descriptors).
    bad_local = bytearray(npz({"a": np.arange(2, dtype="<i8")}, False))
    bad_local[0:1] = b"X"
    write(t, "bad_local_signature.npz", bytes(bad_local))


def dataset(n=4, feat=True, labels=True, splits=True, dtype="<f4", fortran=False):
    src = np.array([0, 1, 1, 2, 2, 3], dtype="<i8")
    dst = np.array([1, 0, 2, 1, 3, 2], dtype="<i8")
    keep = (src < n) & (dst < n)
    d = {"num_nodes": np.array(n, dtype="<i8"), "edge_index": np.stack([src[keep], dst[keep]])}
    if feat:
        x = np.zeros((n, 3), dtype=dtype)
        x[np.arange(n), np.arange(n) % 3] = 1
        d["node_feat"] = np.asfortranarray(x) if fortran else x
    if labels:
        d["node_label"] = (np.arange(n) % 2).astype("<i8")
    if splits:
        d["train_idx"] = np.array([0], dtype="<i8")
        d["valid_idx"] = np.array([1], dtype="<i8")
        d["test_idx"] = np.arange(2, n, dtype="<i8")
    return d


def dataset_corpus():
    t = "fuzz_dataset"
    write(t, "minimal_deflate.npz", npz(dataset()))
    write(t, "minimal_stored.npz", npz(dataset(), compressed=False))
    write(t, "no_features.npz", npz(dataset(feat=False, splits=False), compressed=False))
    write(t, "f8_fortran_features.npz", npz(dataset(dtype="<f8", fortran=True), compressed=False))
    write(t, "dense_features.npz", npz({**dataset(), "node_feat": np.ones((4, 2), "<f4")}, compressed=False))
    write(t, "num_classes.npz", npz({**dataset(), "num_classes": np.array(5, "<i8")}, compressed=False))
    write(t, "labels_n1.npz", npz({**dataset(), "node_label": np.zeros((4, 1), "<i4")}, compressed=False))
    write(t, "empty_graph.npz", npz(dataset(n=0, labels=False, splits=False), compressed=False))
    bad = dataset()
    bad["edge_index"] = np.array([[0, 7], [1, 0]], dtype="<i8")
    write(t, "edge_out_of_range.npz", npz(bad, compressed=False))
    write(t, "label_int64_max.npz",
          npz({**dataset(splits=False), "node_label": np.array([0, 1, 0, 2**63 - 1], "<i8")}, compressed=False))
    write(t, "huge_num_nodes.npz",
          npz({"num_nodes": np.array(2**40, "<i8"), "edge_index": np.zeros((2, 0), "<i8")}, compressed=False))
    # Edge lists (any file that is not a ZIP): a header, weights, and the inputs that
    # made the readers allocate gigabytes or mis-read lines.
    write(t, "edges.csv", b"src,dst,weight\n0,1,0.5\n1,2,1\n2,0,-1\n")
    write(t, "edges_ws.txt", b"# comment\n0 1\n1\t2\n\n2 2\n")
    write(t, "edge_node_777777777.csv", b"0,777777777\n")
    write(t, "edge_node_2p32.csv", b"0,4294967295\n")
    write(t, "edge_nul.csv", b"0,1\0junk\n5,6\n")
    write(t, "edge_bom.csv", b"\xef\xbb\xbf0,1\n")
    write(t, "gnn_benchmark.npz", npz({"adj_data": np.ones(3, "<f4"), "adj_indices": np.array([1, 2, 0], "<i8"),
                                       "adj_indptr": np.array([0, 1, 2, 3], "<i8"),
                                       "adj_shape": np.array([3, 3], "<i8"),
                                       "labels": np.array([0, 1, 0], "<i8")}, compressed=False))
    write(t, "gnn_benchmark_wide_attr.npz",
          npz({"adj_data": np.ones(1, "<f4"), "adj_indices": np.array([0], "<i8"),
               "adj_indptr": np.array([0, 1], "<i8"), "adj_shape": np.array([1, 1], "<i8"),
               "attr_data": np.ones(1, "<f4"), "attr_indices": np.array([0], "<i8"),
               "attr_indptr": np.array([0, 1], "<i8"), "attr_shape": np.array([1, 2**31 - 1], "<i8")},
              compressed=False))
    write(t, "scipy_coo_2p33.npz", npz({"row": np.zeros(0, "<i8"), "col": np.zeros(0, "<i8"),
                                        "data": np.zeros(0, "<f4"), "shape": np.array([2**33, 2**33], "<i8"),
                                        "format": np.array(b"coo")}, compressed=False))


def graph_corpus():
    t = "fuzz_graph"
    def rec(mode, n, edges, weights=None, wide=False):
        b = struct.pack("<Bq", mode, n)
        for i, (s, d) in enumerate(edges):
            b += struct.pack("<qq" if wide else "<bb", s, d)
            if weights is not None:
                b += struct.pack("<f", weights[i])
        return b
    ring = [(0, 1), (1, 2), (2, 3), (3, 0), (1, 1), (2, 0)]
    write(t, "ring.bin", rec(0, 4, ring))
    write(t, "ring_weighted.bin", rec(4, 4, ring, [1, 2, 0.5, -1, 3, 0]))
    write(t, "wide_ids.bin", rec(2 | 1, 5, [(4, 0), (0, 4)], wide=True))
    write(t, "nan_weight.bin", rec(4, 3, [(0, 1)], [float("nan")]))
    write(t, "out_of_range.bin", rec(2 | 1, 3, [(0, 3), (-1, 0)], wide=True))
    write(t, "negative_n.bin", rec(1, -5, []))
    write(t, "huge_n.bin", rec(1, 2**31, []))
    write(t, "mismatch.bin", rec(8, 3, [(0, 1), (1, 2)]))
    write(t, "empty.bin", rec(0, 0, []))


if __name__ == "__main__":
    # Only the corpora written here (fuzz_flags' is kept by hand).
    for target in ("fuzz_npz", "fuzz_dataset", "fuzz_graph"):
        shutil.rmtree(ROOT / target, ignore_errors=True)
    npz_corpus()
    dataset_corpus()
    graph_corpus()
    for d in sorted(ROOT.iterdir()):
        print(f"{d.name}: {len(list(d.iterdir()))} files, {sum(f.stat().st_size for f in d.iterdir())} bytes")
