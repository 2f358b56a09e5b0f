#!/usr/bin/env python3
"""GIN graph classification: edgewise-train --task graph vs PyTorch Geometric, same folds, one run.

Runs `edgewise-train --task graph` on a graph collection (reddit_threads.npz by
default) with --save-folds, reads that fold assignment back, and trains PyG's GIN
with the same recipe on the identical folds: test = fold k, valid = fold k + 1,
train = the rest; one-hot in-degree features (capped at 127, as edgewise); GINConv
layers with MLP Linear -> [BatchNorm] -> ReLU -> Linear, ReLU after each layer; sum
pooling of the last layer; head Linear -> ReLU -> Dropout(0.5) -> Linear; Adam;
shuffled minibatches; the test accuracy of the epoch with the best validation
accuracy. Prints both accuracies per fold and the training time per epoch side by
side. Exits 0 without PyG (says so), 1 when edgewise-train fails.

    python3 benchmarks/compare_graph_classification.py [--data PATH] [--folds 0,1,2] [--epochs 50]
        [--edgewise-train build/cpu/bin/edgewise-train] [--threads 1] [--json FILE]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def default_data():
    for folder in (os.environ.get("EDGEWISE_DATA_DIR", ""), os.path.join(os.path.dirname(__file__), "..", "..",
                                                                            "shared", "datasets")):
        path = os.path.join(folder, "reddit_threads.npz")
        if folder and os.path.isfile(path):
            return path
    return None


def run_edgewise(args, folds_file, json_file):
    cmd = [args.edgewise_train, "--task", "graph", "--model", "gin", "--dataset", args.data, "--folds", args.folds,
           "--epochs", str(args.epochs), "--batch-size", str(args.batch_size), "--hidden", str(args.hidden),
           "--layers", str(args.layers), "--lr", str(args.lr), "--seed", str(args.seed),
           "--batch-norm", "1" if args.batch_norm else "0", "--threads", str(args.threads), "--save-folds",
           folds_file, "--json", json_file,
           "--log-every", "10"]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    print("$ " + " ".join(cmd), flush=True)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env)
    if done.returncode != 0:
        sys.exit(f"edgewise-train failed with exit code {done.returncode}")
    with open(json_file) as f:
        result = json.load(f)
    result["wall_seconds"] = time.perf_counter() - t0
    return result


def load_graphs(path):
    """The npz graph collection as (edge_index per graph, label per graph, one-hot degree x per graph)."""
    d = np.load(path)
    ei, nodes, edges, labels = d["edge_index"], d["num_nodes_list"], d["num_edges_list"], d["graph_label"]
    edge_starts = np.concatenate([[0], np.cumsum(edges)])
    degrees = []
    for g in range(len(nodes)):
        dst = ei[1, edge_starts[g]:edge_starts[g + 1]]
        degrees.append(np.bincount(dst, minlength=nodes[g]))
    cap = min(int(max(deg.max(initial=0) for deg in degrees)), 127)
    return ei, edge_starts, nodes, labels.reshape(-1), degrees, cap


def run_pyg(args, folds):
    import torch
    from torch import nn
    from torch_geometric.data import Data
    from torch_geometric.loader import DataLoader
    from torch_geometric.nn import GINConv, global_add_pool

    torch.set_num_threads(args.threads)
    ei, edge_starts, nodes, labels, degrees, cap = load_graphs(args.data)
    data = []
    for g in range(len(nodes)):
        x = torch.zeros(int(nodes[g]), cap + 1)
        x[torch.arange(int(nodes[g])), torch.from_numpy(np.minimum(degrees[g], cap))] = 1.0
        edge_index = torch.from_numpy(ei[:, edge_starts[g]:edge_starts[g + 1]].astype(np.int64))
        data.append(Data(x=x, edge_index=edge_index, y=torch.tensor([int(labels[g])])))
    num_classes = int(labels.max()) + 1

    class GIN(nn.Module):
        def __init__(self, in_channels):
            super().__init__()
            self.convs = nn.ModuleList()
            for layer in range(args.layers):
                c_in = in_channels if layer == 0 else args.hidden
                mlp = [nn.Linear(c_in, args.hidden)]
                if args.batch_norm:
                    mlp.append(nn.BatchNorm1d(args.hidden))
                mlp += [nn.ReLU(), nn.Linear(args.hidden, args.hidden)]
                self.convs.append(GINConv(nn.Sequential(*mlp), train_eps=False))
            self.head = nn.Sequential(nn.Linear(args.hidden, args.hidden), nn.ReLU(), nn.Dropout(0.5),
                                      nn.Linear(args.hidden, num_classes))

        def forward(self, x, edge_index, batch):
            for conv in self.convs:
                x = conv(x, edge_index).relu()
            return self.head(global_add_pool(x, batch))

    @torch.no_grad()
    def accuracy(model, loader):
        model.eval()
        correct = total = 0
        for b in loader:
            correct += int((model(b.x, b.edge_index, b.batch).argmax(-1) == b.y).sum())
            total += b.num_graphs
        return correct / total

    k = int(max(folds)) + 1
    results = []
    for fold in [int(f) for f in args.folds.split(",")] if args.folds != "all" else range(k):
        torch.manual_seed(args.seed)
        test = [g for g in range(len(data)) if folds[g] == fold]
        valid = [g for g in range(len(data)) if folds[g] == (fold + 1) % k]
        train = [g for g in range(len(data)) if folds[g] not in (fold, (fold + 1) % k)]
        train_loader = DataLoader([data[g] for g in train], batch_size=args.batch_size, shuffle=True)
        valid_loader = DataLoader([data[g] for g in valid], batch_size=1024)
        test_loader = DataLoader([data[g] for g in test], batch_size=1024)
        model = GIN(cap + 1)
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
        best_valid, best_test, best_epoch, epoch_ms = -1.0, 0.0, 0, []
        t_fold = time.perf_counter()
        for epoch in range(1, args.epochs + 1):
            model.train()
            t0 = time.perf_counter()
            for b in train_loader:
                optimizer.zero_grad()
                loss = nn.functional.cross_entropy(model(b.x, b.edge_index, b.batch), b.y)
                loss.backward()
                optimizer.step()
            epoch_ms.append((time.perf_counter() - t0) * 1e3)
            valid_acc, test_acc = accuracy(model, valid_loader), accuracy(model, test_loader)
            if valid_acc > best_valid:
                best_valid, best_test, best_epoch = valid_acc, test_acc, epoch
            if epoch % 10 == 0 or epoch == 1:
                print(f"pyg fold {fold} epoch {epoch:3d}: valid {100 * valid_acc:.2f} %  test {100 * test_acc:.2f} %  "
                      f"{epoch_ms[-1]:.0f} ms", flush=True)
        results.append({"fold": fold, "test_acc": best_test, "valid_acc": best_valid, "best_epoch": best_epoch,
                        "epoch_ms_median": statistics.median(epoch_ms), "seconds": time.perf_counter() - t_fold})
    return results


def summary(accs):
    mean = statistics.mean(accs)
    std = statistics.stdev(accs) if len(accs) > 1 else 0.0
    return mean, std


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=default_data(), help="graph collection .npz (default: reddit_threads.npz)")
    p.add_argument("--folds", default="0,1,2", help="test folds, comma-separated, or 'all'")
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--batch-norm", type=int, choices=[0, 1], default=0, help="BatchNorm inside the GIN MLPs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="threads for both (--threads / torch.set_num_threads)")
    p.add_argument("--edgewise-train", default=os.path.join("build", "cpu", "examples", "edgewise-train"))
    p.add_argument("--json", help="write both results here")
    args = p.parse_args()
    if not args.data or not os.path.isfile(args.data):
        sys.exit("no graph collection: pass --data PATH (reddit_threads.npz) or set EDGEWISE_DATA_DIR")
    try:
        import torch_geometric  # noqa: F401
    except ImportError:
        print("torch_geometric is not importable: nothing to compare against")
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        ew = run_edgewise(args, os.path.join(tmp, "folds.txt"), os.path.join(tmp, "edgewise.json"))
        folds = np.loadtxt(os.path.join(tmp, "folds.txt"), dtype=np.int64)
    pyg = run_pyg(args, folds)

    ew_folds = {f["fold"]: f for f in ew["folds"]}
    print(f"\nGIN on {os.path.basename(args.data)} ({args.layers} layers, hidden {args.hidden}, "
          f"batch norm {'on' if args.batch_norm else 'off'}, {args.epochs} epochs, batch {args.batch_size}, "
          f"{args.threads} thread(s)), identical folds ({ew['folds_source']})")
    print(f"{'fold':>4}  {'edgewise test %':>15}  {'PyG test %':>10}  {'edgewise ms/epoch':>17}  {'PyG ms/epoch':>12}")
    for r in pyg:
        e = ew_folds[r["fold"]]
        print(f"{r['fold']:>4}  {100 * e['test_acc']:>15.2f}  {100 * r['test_acc']:>10.2f}  "
              f"{e['epoch_ms_median']:>17.1f}  {r['epoch_ms_median']:>12.1f}")
    ew_mean, ew_std = summary([f["test_acc"] for f in ew["folds"]])
    pyg_mean, pyg_std = summary([r["test_acc"] for r in pyg])
    ew_ms = statistics.median(f["epoch_ms_median"] for f in ew["folds"])
    pyg_ms = statistics.median(r["epoch_ms_median"] for r in pyg)
    print(f"mean  {100 * ew_mean:>8.2f} ± {100 * ew_std:.2f}  {100 * pyg_mean:>6.2f} ± {100 * pyg_std:.2f}  "
          f"{ew_ms:>11.1f}  {pyg_ms:>12.1f}   (epoch time: edgewise {pyg_ms / ew_ms:.2f}x PyG's speed)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"edgewise": ew, "pyg": {"folds": pyg, "test_acc_mean": pyg_mean, "test_acc_std": pyg_std,
                                               "epoch_ms_median": pyg_ms}}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
