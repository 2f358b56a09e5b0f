#!/usr/bin/env python3
"""Portable (runtime ISA dispatch) vs native (-march=native) edgewise-bench, same run.

Runs two edgewise-bench binaries alternately (portable, native, portable, ...) on the
selected cases, --reps times each, and prints per case the median over the runs of
each run's median time, their ratio, the same for the minimum times, and each build's
ratio to the copy floor. Alternating spreads slow phases of a shared machine over
both builds; still, on a loaded host read the ratios with the load printed alongside.

    python3 benchmarks/portable_vs_native.py --portable build/release/benchmarks/edgewise-bench \\
        --native build/release-native/benchmarks/edgewise-bench [--reps 5] [--filter REGEX]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

DEFAULT_FILTER = r"^(segment_reduce/(sum|max)/(uniform|powerlaw)|scatter_reduce/(sum|max_arg)/random|spmm/(sum|max)/)"


def run(binary, case_filter, path):
    subprocess.run([binary, "--device", "cpu", "--filter", case_filter, "--json", path], check=True,
                   stdout=subprocess.DEVNULL)
    with open(path) as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--portable", required=True, help="edgewise-bench of the portable build")
    parser.add_argument("--native", required=True, help="edgewise-bench of the -march=native build")
    parser.add_argument("--reps", type=int, default=5, help="runs of each binary (alternated)")
    parser.add_argument("--filter", default=DEFAULT_FILTER, help="edgewise-bench --filter REGEX")
    args = parser.parse_args()
    for flag in ("portable", "native"):
        if not os.access(getattr(args, flag), os.X_OK):
            sys.exit(f"portable_vs_native: --{flag} {getattr(args, flag)} is not an executable")
    if args.reps < 1:
        sys.exit("portable_vs_native: --reps must be at least 1")
    records = {"portable": {}, "native": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            for build in ("portable", "native"):
                load = os.getloadavg()[0]
                print(f"rep {rep + 1} {build} (load {load:.2f})", file=sys.stderr)
                for rec in run(getattr(args, build), args.filter, os.path.join(tmp, f"{build}.json")):
                    records[build].setdefault(rec["name"], []).append(rec)
    print(f"{'case':<64} {'port ms':>8} {'nat ms':>8} {'p/n':>6} {'port min':>8} {'nat min':>8} {'p/n':>6}"
          f" {'floor p':>7} {'floor n':>7}")
    for name, port in records["portable"].items():
        nat = records["native"].get(name)
        if not nat:
            continue
        med = [statistics.median(r["median_ms"] for r in runs) for runs in (port, nat)]
        low = [min(r["min_ms"] for r in runs) for runs in (port, nat)]
        floor = [statistics.median(r.get("floor_ratio", 0.0) for r in runs) for runs in (port, nat)]
        print(f"{name:<64} {med[0]:8.2f} {med[1]:8.2f} {med[0] / med[1]:6.3f} {low[0]:8.2f} {low[1]:8.2f}"
              f" {low[0] / low[1]:6.3f} {floor[0]:7.2f} {floor[1]:7.2f}")


if __name__ == "__main__":
    main()
