#!/usr/bin/env python3
"""What the compile-time row widths buy: spmm, segment_reduce and scatter_reduce (sum, max)
at several row widths, timed through the Python module on PYTHONPATH.

Run it once with a normal build and once with one configured with
-DEDGEWISE_SPECIALISE_ROW_WIDTHS=OFF (the generic column loop alone), alternating:

    PYTHONPATH=build/cpu/python python3 benchmarks/row_widths.py 2 4 8 128
    PYTHONPATH=build/cpu-generic/python python3 benchmarks/row_widths.py 2 4 8 128

Power-law CSR, 100K rows, ~1M edges; prints the best of 7 calls in ms per (kernel, op).
"""

import sys
import time

import numpy as np

import edgewise as ew


def powerlaw_csr(rng, rows, edges):
    degree = np.minimum(rng.zipf(1.8, rows).astype(np.int64), rows)
    degree = (degree * (edges / degree.sum())).astype(np.int64) + 1
    offsets = np.zeros(rows + 1, np.int64)
    np.cumsum(degree, out=offsets[1:])
    return offsets, rng.integers(0, rows, offsets[-1]).astype(np.int32)


def best_ms(call, repeats=7):
    call()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def main():
    widths = [int(w) for w in sys.argv[1:]] or [2, 4, 8, 16, 32, 64, 128]
    rng = np.random.default_rng(0)
    rows = 100_000
    offsets, indices = powerlaw_csr(rng, rows, 1_000_000)
    edges = int(offsets[-1])
    segment_of_edge = np.repeat(np.arange(rows, dtype=np.int64), np.diff(offsets))
    for width in widths:
        x = rng.standard_normal((rows, width)).astype(np.float32)
        messages = rng.standard_normal((edges, width)).astype(np.float32)
        cells = []
        for op in ("sum", "max"):
            cells.append(("spmm", op, best_ms(lambda: ew.spmm(offsets, indices, x, op=op))))
            cells.append(("segment", op, best_ms(lambda: ew.segment_reduce(messages, offsets, op=op))))
            cells.append(("scatter", op, best_ms(lambda: ew.scatter_reduce(messages, segment_of_edge, rows, op=op))))
        print(f"C={width:4d} " + "  ".join(f"{kernel}/{op} {ms:7.2f}" for kernel, op, ms in cells), flush=True)


if __name__ == "__main__":
    main()
