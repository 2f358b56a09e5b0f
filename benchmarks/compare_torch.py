#!/usr/bin/env python3
"""Edgewise vs PyTorch on the same data, timed in one run (CPU).

Where torch is importable, times torch.segment_reduce (and index_add_ on the same
data) and torch.sparse.mm on a CSR tensor against edgewise through its Python
binding and prints the speed ratio;
where it is not, says so and exits 0. PyTorch is never a build or CI dependency.

    PYTHONPATH=build/release/python python3 benchmarks/compare_torch.py [--quick] [--json FILE]
"""

import argparse
import json
import sys
import time

import numpy as np

try:
    import torch
except ImportError:  # the baseline is optional
    torch = None

import edgewise

SHAPES = [(1_000_000, 16, 10_000), (1_000_000, 64, 10_000), (4_000_000, 16, 50_000), (1_000_000, 16, 100)]


def median_ms(fn, repeats):
    # torch and edgewise each bring an OpenMP runtime whose idle threads spin for a
    # while after a parallel region; let the other library's threads go to sleep
    # first so neither is timed against the other's spinning.
    time.sleep(0.05)
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def uniform_offsets(S, M):
    return (np.arange(S + 1, dtype=np.int64) * M) // S


def power_law_offsets(S, M, rng, alpha=1.0):
    w = 1.0 / np.arange(1, S + 1) ** alpha
    rng.shuffle(w)
    off = np.concatenate([[0], np.round(np.cumsum(w) / w.sum() * M)]).astype(np.int64)
    off[-1] = M
    return off


def segment_cases(rng, repeats, records, name_filter):
    if name_filter and name_filter not in "segment_reduce":
        return
    for M, C, S in SHAPES:
        values = rng.uniform(-1, 1, size=(M, C)).astype(np.float32)
        for dist in ("uniform", "powerlaw"):
            offsets = uniform_offsets(S, M) if dist == "uniform" else power_law_offsets(S, M, rng)
            lengths = torch.from_numpy(np.diff(offsets))
            tv = torch.from_numpy(values)
            index = torch.repeat_interleave(torch.arange(S), lengths)
            for op, top in (("sum", "sum"), ("max", "max")):
                ew = median_ms(lambda: edgewise.segment_reduce(values, offsets, op=op), repeats)
                th = median_ms(lambda: torch.segment_reduce(tv, top, lengths=lengths, axis=0), repeats)
                rec = {"name": f"segment_reduce/{op}/{dist}/M={M},C={C},S={S}", "edgewise_ms": ew,
                       "torch_ms": th, "torch_op": "segment_reduce", "speedup": th / ew}
                records.append(rec)
                print(f"{rec['name']:<50} edgewise {ew:8.3f} ms  torch.segment_reduce {th:8.3f} ms  {th / ew:6.2f}x")
                if op == "sum":
                    out = torch.zeros(S, C)
                    ia = median_ms(lambda: out.zero_().index_add_(0, index, tv), repeats)
                    rec2 = {"name": rec["name"], "edgewise_ms": ew, "torch_ms": ia, "torch_op": "index_add_",
                            "speedup": ia / ew}
                    records.append(rec2)
                    print(f"{'':<50} {'':<20} torch.index_add_      {ia:8.3f} ms  {ia / ew:6.2f}x")


SPMM_SHAPES = [(100_000, 2_000_000, 64), (1_000_000, 10_000_000, 32)]


def spmm_cases(rng, repeats, records, name_filter):
    """edgewise.spmm sum vs torch.sparse.mm(A_csr, X) on power-law graphs (same CSR, same X)."""
    if name_filter and name_filter not in "spmm":
        return
    import warnings

    warnings.filterwarnings("ignore", message=".*[Ss]parse.*")  # torch's beta-state notices
    for N, E, C in SPMM_SHAPES:
        offsets = power_law_offsets(N, E, rng)  # destination in-degrees Zipf-like
        indices = rng.integers(0, N, size=E).astype(np.int64)  # sources uniform
        indices32 = indices.astype(np.int32)
        x = rng.uniform(-1, 1, size=(N, C)).astype(np.float32)
        weights = rng.uniform(-1, 1, size=E).astype(np.float32)
        tx = torch.from_numpy(x)
        for weighted in (False, True):
            w = weights if weighted else None
            values = torch.from_numpy(weights) if weighted else torch.ones(E)
            A = torch.sparse_csr_tensor(torch.from_numpy(offsets), torch.from_numpy(indices), values, size=(N, N))
            # Same answer up to float summation order (tolerance relative to the sum of |terms|).
            want = torch.sparse.mm(A, tx).numpy()
            got = edgewise.spmm(offsets, indices, x, weights=w)
            scale = edgewise.spmm(offsets, indices, np.abs(x), weights=None if w is None else np.abs(w))
            assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-5), f"spmm and torch.sparse.mm disagree at {N},{E},{C}"
            kind = "weighted" if weighted else "unweighted"
            name = f"spmm/sum/{kind}/powerlaw/N={N},E={E},C={C}"
            th = median_ms(lambda: torch.sparse.mm(A, tx), repeats)
            for label, idx in (("i64", indices), ("i32", indices32)):
                ew = median_ms(lambda: edgewise.spmm(offsets, idx, x, weights=w), repeats)
                rec = {"name": f"{name}/{label}", "edgewise_ms": ew, "torch_ms": th, "torch_op": "sparse.mm(csr)",
                       "speedup": th / ew}
                records.append(rec)
                print(f"{rec['name']:<58} edgewise {ew:8.2f} ms  torch.sparse.mm {th:8.2f} ms  {th / ew:6.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--json", help="write one record per comparison")
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    args = parser.parse_args()
    if torch is None:
        print("compare_torch: PyTorch is not importable here; nothing to compare (install torch in your own "
              "environment to run the baseline).")
        return 0
    threads = torch.get_num_threads()
    print(f"compare_torch: torch {torch.__version__} ({threads} threads), edgewise {edgewise.__version__}")
    rng = np.random.default_rng(12345)
    repeats = 5 if args.quick else 20
    records = []
    for section in SECTIONS:
        section(rng, repeats, records, args.filter)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
        print(f"wrote {len(records)} records to {args.json}")
    return 0


# Each section: (rng, repeats, records, name_filter) -> appends records, prints rows.
SECTIONS = [segment_cases, spmm_cases]

if __name__ == "__main__":
    sys.exit(main())
