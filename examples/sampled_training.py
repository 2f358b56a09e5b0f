#!/usr/bin/env python3
"""GraphSAGE trained on sampled neighbourhoods (edgewise.torch.loader.NeighborLoader,
fan-outs 15/10) against the same model trained full-batch, over several seeds.

    EDGEWISE_DATA_DIR=../shared/datasets python3 examples/sampled_training.py \
        [--datasets amazon_photo,coauthor_cs] [--runs 10] [--epochs 100] [--json out.json]

Both modes train edgewise.torch.nn.SAGEConv (2 layers, 64 hidden, mean, dropout 0.5,
Adam lr 0.01, weight decay 5e-4) on the dataset's training nodes and are evaluated
full-batch on its test nodes after the last epoch. Prints mean ± std test accuracy
per mode and the difference; exits 1 when sampled training lands more than
--tolerance points (default 1) below full-batch. A dataset missing from the data
directory is replaced by a synthetic planted-partition graph (said so in the output).
"""

import argparse
import json
import sys
import time

import numpy as np
import torch

import edgewise
import edgewise.torch as ewt
from edgewise.torch import nn as ewnn
from edgewise.torch.loader import NeighborLoader


class Sage(torch.nn.Module):
    def __init__(self, in_channels, hidden, classes):
        super().__init__()
        self.conv1 = ewnn.SAGEConv(in_channels, hidden)
        self.conv2 = ewnn.SAGEConv(hidden, classes)

    def forward(self, x, edge_index):
        if x.is_sparse:
            # Wide, sparse features (Coauthor-CS: 6805 columns, 0.9 % filled): conv1's
            # linear maps commute with the mean, so apply them first, on the sparse rows
            # (the same layer and parameters, without a dense [N, 6805] input).
            x = x.coalesce()
            x = torch.sparse_coo_tensor(x.indices(), torch.nn.functional.dropout(x.values(), 0.5, self.training),
                                        x.shape)
            left = torch.sparse.mm(x, self.conv1.lin_l.weight.t())
            root = torch.sparse.mm(x, self.conv1.lin_r.weight.t())
            x = ewt.spmm(edge_index, left, reduce="mean", num_nodes=x.size(0)) + self.conv1.lin_l.bias + root
        else:
            x = torch.nn.functional.dropout(x, 0.5, self.training)
            x = self.conv1(x, edge_index)
        x = torch.nn.functional.dropout(x.relu(), 0.5, self.training)
        return self.conv2(x, edge_index)


def load(name):
    try:
        d = edgewise.load_dataset(name)  # sparse CSR features where they are mostly zeros
        origin = name
    except ValueError:
        d = edgewise.planted_partition(num_nodes=5000, num_classes=8, num_features=500, features="dense", seed=1)
        origin = f"synthetic planted partition (no {name}.npz in {edgewise.default_data_dir()})"
    if d["feature_format"] == "sparse":
        offsets, columns, values, shape = d["features"]
        x = torch.sparse_csr_tensor(torch.from_numpy(offsets), torch.from_numpy(columns).long(),
                                    torch.from_numpy(values), size=shape).to_sparse_coo().coalesce()
    else:
        x = torch.from_numpy(np.ascontiguousarray(d["features"]))
    data = {"x": x, "edge_index": torch.from_numpy(d["edge_index"]).long(), "y": torch.from_numpy(d["labels"]).long(),
            "num_nodes": d["num_nodes"]}
    return data, torch.from_numpy(d["train_idx"]).long(), torch.from_numpy(d["test_idx"]).long(), \
        d["num_classes"], origin


def accuracy(model, data, test_idx):
    model.eval()
    with torch.no_grad():
        pred = model(data["x"], data["edge_index"]).argmax(1)
    return float((pred[test_idx] == data["y"][test_idx]).float().mean())


def train(data, train_idx, test_idx, classes, seed, o, sampled):
    torch.manual_seed(seed)
    model = Sage(data["x"].size(1), o.hidden, classes)
    opt = torch.optim.Adam(model.parameters(), lr=o.lr, weight_decay=o.weight_decay)
    sparse = data["x"].is_sparse
    # Sparse features stay out of the loader (it gathers dense rows): each batch takes
    # its rows with index_select.
    graph = {k: v for k, v in data.items() if not (sparse and k == "x")}
    loader = NeighborLoader(graph, num_neighbors=o.fanouts, input_nodes=train_idx, batch_size=o.batch_size,
                            shuffle=True, seed=seed) if sampled else None
    for _ in range(o.epochs):
        model.train()
        if sampled:
            for batch in loader:
                x = data["x"].index_select(0, batch.n_id) if sparse else batch.x
                opt.zero_grad()
                out = model(x, batch.edge_index)[:batch.batch_size]
                torch.nn.functional.cross_entropy(out, batch.y[:batch.batch_size]).backward()
                opt.step()
        else:
            opt.zero_grad()
            out = model(data["x"], data["edge_index"])[train_idx]
            torch.nn.functional.cross_entropy(out, data["y"][train_idx]).backward()
            opt.step()
    return accuracy(model, data, test_idx)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", default="amazon_photo,coauthor_cs")
    p.add_argument("--runs", type=int, default=10, help="seeds per mode")
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--fanouts", default="15,10", help="neighbours per hop from the seeds")
    p.add_argument("--batch-size", type=int, default=1024,
                   help="seeds per batch (default: the whole training set of these datasets, so both modes take "
                        "the same optimizer steps and only the sampling differs)")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--tolerance", type=float, default=1.0, help="points sampled may trail full-batch")
    p.add_argument("--modes", default="full-batch,sampled", help="which trainings to run (the gap needs both)")
    p.add_argument("--json", help="write the per-seed accuracies here")
    o = p.parse_args(argv)
    try:
        o.fanouts = [int(f) for f in o.fanouts.split(",")]
    except ValueError:
        p.error(f"--fanouts must be comma-separated ints (got {o.fanouts!r})")
    for name in ("runs", "epochs", "batch_size", "hidden"):
        if getattr(o, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1 (got {getattr(o, name)})")
    o.modes = [m for m in o.modes.split(",") if m]
    if not o.modes or any(m not in ("full-batch", "sampled") for m in o.modes):
        p.error(f"--modes must list full-batch and/or sampled (got {','.join(o.modes)!r})")
    if not (o.lr > 0 and o.weight_decay >= 0 and o.tolerance >= 0):
        p.error("--lr must be > 0, --weight-decay and --tolerance >= 0")
    results, failed = {}, False
    for name in [n for n in o.datasets.split(",") if n]:
        data, train_idx, test_idx, classes, origin = load(name)
        print(f"{name}: {origin}; {data['num_nodes']} nodes, {data['edge_index'].size(1)} edges, "
              f"{data['x'].size(1)} {'sparse' if data['x'].is_sparse else 'dense'} features, "
              f"{train_idx.numel()} training nodes", flush=True)
        per_mode = {}
        for mode in o.modes:
            accs, start = [], time.perf_counter()
            for seed in range(o.runs):
                accs.append(train(data, train_idx, test_idx, classes, seed, o, mode == "sampled"))
                elapsed = time.perf_counter() - start
                print(f"\r  {mode}: seed {seed + 1}/{o.runs}, last {100 * accs[-1]:.1f} %, "
                      f"ETA {elapsed / (seed + 1) * (o.runs - seed - 1):.0f} s", end="", file=sys.stderr, flush=True)
            print(file=sys.stderr)
            per_mode[mode] = accs
            print(f"  {mode:<10} test accuracy {100 * np.mean(accs):.2f} ± {100 * np.std(accs):.2f} % "
                  f"({o.runs} seeds, {time.perf_counter() - start:.0f} s)", flush=True)
        results[name] = per_mode
        if len(per_mode) < 2:
            continue
        gap = 100 * (np.mean(per_mode["sampled"]) - np.mean(per_mode["full-batch"]))
        ok = gap >= -o.tolerance
        failed |= not ok
        print(f"  sampled - full-batch: {gap:+.2f} points ({'within' if ok else 'OUTSIDE'} {o.tolerance} point)")
    if o.json:
        with open(o.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
