#!/usr/bin/env python3
"""Accuracy floors of issue 4, measured with edgewise-train (mean ± std over N seeds).

    EDGEWISE_DATA_DIR=../shared/datasets python3 benchmarks/accuracy_floors.py \
        [--train build/release/bin/edgewise-train] [--runs 10] [--json out.json] [--only cora]

Prints one row per configuration (dataset, model, test accuracy, floor, pass/fail,
median epoch time) and exits 1 if a floor is missed. Datasets missing from the data
directory are reported as skipped.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

# (name, dataset, floor %, edgewise-train flags). Hyper-parameters follow the
# published setups: Kipf & Welling for Planetoid GCN (16 hidden, dropout 0.5,
# lr 0.01, weight decay 5e-4 on the first layer, 200 epochs); Shchur et al. for
# Amazon/Coauthor (64 hidden).
CONFIGS = [
    ("gcn/cora", "cora", 81.0, []),
    ("gcn/citeseer", "citeseer", 70.0, []),
    ("sage-mean/cora", "cora", 80.0, ["--model", "sage", "--sage-aggr", "mean"]),
    # Amazon-Photo: binary features on a dense co-purchase graph. Row-normalising
    # them (as for the citation graphs) costs ~11 points; with its 240-node
    # validation set, selecting the best-validation epoch is noisier than taking the
    # final model. PyG's GCNConv model on this split, same settings, final epoch,
    # seeds 0-9: 89.8 %.
    ("gcn/amazon_photo", "amazon_photo", 90.0, ["--hidden", "64", "--normalize-features", "0", "--select", "last"]),
    ("gcn/coauthor_cs", "coauthor_cs", 90.0, ["--hidden", "64"]),
    # Link prediction, PyG link_pred.py's recipe (edgewise-train's --task link
    # defaults): the floor is on test AUC (%). PyG itself (benchmarks/link_pred_pyg.py), seeds 0-9: 90.6 ± 1.3.
    ("gcn-link/cora", "cora", 90.0, ["--task", "link"]),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--train", default=os.path.join(here, "..", "build", "release", "examples", "edgewise-train"))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--only", default="", help="only configurations whose name contains this")
    args = parser.parse_args()
    if not os.path.exists(args.train):
        print(f"accuracy_floors: {args.train} not found (build the release preset first)")
        return 2
    rows, failed = [], False
    print(f"{'configuration':<20} {'test accuracy':>18} {'floor':>7} {'result':>7} {'ms/epoch':>9} {'s/run':>7}")
    for name, dataset, floor, flags in CONFIGS:
        if args.only and args.only not in name:
            continue
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            cmd = [args.train, "--dataset", dataset, "--runs", str(args.runs), "--log-every", "0", "--json",
                   out.name] + flags
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                reason = (proc.stderr.strip().splitlines() or ["?"])[-1]
                print(f"{name:<20} skipped: {reason}")
                rows.append({"name": name, "skipped": reason})
                continue
            result = json.load(open(out.name))
        metric = "test_auc" if "link" in flags else "test_acc"
        mean, std = 100 * result[metric + "_mean"], 100 * result[metric + "_std"]
        ok = mean >= floor
        failed |= not ok
        print(f"{name:<20} {mean:9.2f} ± {std:5.2f} % {floor:6.1f}% {'pass' if ok else 'FAIL':>7} "
              f"{result['epoch_ms_median']:9.3f} {result['seconds_per_run']:7.2f}")
        rows.append({"name": name, "dataset": dataset, "floor": floor, "pass": ok, **result})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
