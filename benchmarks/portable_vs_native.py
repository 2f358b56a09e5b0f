#!/usr/bin/env python3
"""Portable (runtime ISA dispatch) vs native (-march=native) edgewise-bench, same run.

Runs two edgewise-bench binaries alternately, case by case (case 1: portable, native,
portable, ... --reps times each; then case 2 ...), and prints per case the median over
the runs of each run's median time, their ratio, the same for the minimum times, the
geometric means of the ratios, and each build's ratio to the copy floor. Alternating
within a case puts both builds in the same seconds of a shared machine, whose speed
drifts by tens of percent within a minute; still, read the ratios with the load
printed alongside.

    python3 benchmarks/portable_vs_native.py --portable build/release/bin/edgewise-bench \\
        --native build/release-native/bin/edgewise-bench [--reps 5] [--filter REGEX]
"""

import argparse
import json
import math
import os
import re
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
    listed = subprocess.run([args.portable, "--device", "cpu", "--filter", args.filter, "--list"], check=True,
                            capture_output=True, text=True).stdout.split()
    if not listed:
        sys.exit(f"portable_vs_native: no case matches --filter {args.filter}")
    records = {"portable": {}, "native": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(listed):
            exact = "^" + re.escape(case) + "$"
            print(f"case {i + 1}/{len(listed)} {case} (load {os.getloadavg()[0]:.2f})", file=sys.stderr)
            for rep in range(args.reps):
                for build in ("portable", "native"):
                    for rec in run(getattr(args, build), exact, os.path.join(tmp, f"{build}.json")):
                        records[build].setdefault(rec["name"], []).append(rec)
    print(f"{'case':<64} {'port ms':>8} {'nat ms':>8} {'p/n':>6} {'port min':>8} {'nat min':>8} {'p/n':>6}"
          f" {'floor p':>7} {'floor n':>7}")
    ratios_med, ratios_min = [], []
    for name, port in records["portable"].items():
        nat = records["native"].get(name)
        if not nat:
            continue
        med = [statistics.median(r["median_ms"] for r in runs) for runs in (port, nat)]
        low = [min(r["min_ms"] for r in runs) for runs in (port, nat)]
        floor = [statistics.median(r.get("floor_ratio", 0.0) for r in runs) for runs in (port, nat)]
        ratios_med.append(med[0] / med[1])
        ratios_min.append(low[0] / low[1])
        print(f"{name:<64} {med[0]:8.2f} {med[1]:8.2f} {med[0] / med[1]:6.3f} {low[0]:8.2f} {low[1]:8.2f}"
              f" {low[0] / low[1]:6.3f} {floor[0]:7.2f} {floor[1]:7.2f}")
    if ratios_med:
        geomean = [math.exp(sum(math.log(r) for r in rs) / len(rs)) for rs in (ratios_med, ratios_min)]
        print(f"{len(ratios_med)} cases; portable / native geometric mean {geomean[0]:.3f} (medians), "
              f"{geomean[1]:.3f} (minima); worst {max(ratios_med):.3f} / {max(ratios_min):.3f}")


if __name__ == "__main__":
    main()
