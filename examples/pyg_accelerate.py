#!/usr/bin/env python3
"""A PyG model, unchanged, trained with and without edgewise.torch.pyg.accelerate().

Trains PyG's own 2-layer GCN (Kipf & Welling's Cora recipe: hidden 16, dropout 0.5,
Adam lr 0.01, weight decay 5e-4, 200 epochs) on Cora when the dataset is found
(EDGEWISE_DATA_DIR or ../shared/datasets), else on a Cora-shaped synthetic graph,
once with PyG alone and once accelerated, and prints test accuracy and ms per epoch.

    PYTHONPATH=build/release/python python3 examples/pyg_accelerate.py [--epochs 200] [--model gcn|sage|gat]
"""

import argparse
import time

import torch
import torch.nn.functional as F
import torch_geometric.nn as pyg

import edgewise
import edgewise.torch.pyg


def load():
    try:
        data = edgewise.load_dataset("cora", features="dense")
        name = "Cora"
    except Exception:  # noqa: BLE001  (no dataset here: the built-in synthetic graph)
        data = edgewise.rmat_graph(2708, 10556, seed=1, num_features=1433, num_classes=7)
        name = "synthetic (Cora-shaped R-MAT)"
    x = torch.from_numpy(data["features"]).float()
    x = x / x.sum(1, keepdim=True).clamp(min=1)  # PyG's NormalizeFeatures
    tensors = {k: torch.from_numpy(data[k]).long() for k in ("edge_index", "labels", "train_idx", "test_idx")}
    return name, x, tensors, int(data["num_classes"])


def model(kind, features, classes):
    layers = {
        "gcn": lambda: (pyg.GCNConv(features, 16), pyg.GCNConv(16, classes)),
        "sage": lambda: (pyg.SAGEConv(features, 16), pyg.SAGEConv(16, classes)),
        "gat": lambda: (pyg.GATConv(features, 8, heads=8, dropout=0.6), pyg.GATConv(64, classes, dropout=0.6)),
    }[kind]()

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = layers

        def forward(self, x, edge_index):
            x = F.dropout(x, 0.5, self.training)
            x = F.relu(self.conv1(x, edge_index))
            x = F.dropout(x, 0.5, self.training)
            return self.conv2(x, edge_index)

    return Net()


def train(kind, x, t, classes, epochs):
    torch.manual_seed(0)
    net = model(kind, x.size(1), classes)
    opt = torch.optim.Adam(net.parameters(), lr=0.01, weight_decay=5e-4)
    start = time.perf_counter()
    for epoch in range(epochs):
        net.train()
        opt.zero_grad()
        loss = F.cross_entropy(net(x, t["edge_index"])[t["train_idx"]], t["labels"][t["train_idx"]])
        loss.backward()
        opt.step()
        if (epoch + 1) % 50 == 0:
            print(f"  epoch {epoch + 1:4d}/{epochs}  loss {loss.item():.4f}", flush=True)
    ms = (time.perf_counter() - start) * 1e3 / epochs
    net.eval()
    with torch.no_grad():
        predicted = net(x, t["edge_index"]).argmax(1)
    accuracy = (predicted[t["test_idx"]] == t["labels"][t["test_idx"]]).float().mean().item()
    return accuracy, ms


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=200, help="training epochs (positive)")
    parser.add_argument("--model", default="gcn", choices=("gcn", "sage", "gat"), help="PyG model")
    args = parser.parse_args()
    if args.epochs < 1:
        parser.error(f"--epochs must be positive (got {args.epochs})")
    name, x, t, classes = load()
    print(f"{name}: {x.size(0)} nodes, {t['edge_index'].size(1)} edges; PyG {args.model.upper()}")
    print("PyG alone:")
    plain_acc, plain_ms = train(args.model, x, t, classes, args.epochs)
    print("with edgewise.torch.pyg.accelerate():")
    with edgewise.torch.pyg.accelerated():
        fast_acc, fast_ms = train(args.model, x, t, classes, args.epochs)
    print(f"PyG alone:   test accuracy {100 * plain_acc:.1f}%, {plain_ms:.2f} ms per epoch")
    print(f"accelerated: test accuracy {100 * fast_acc:.1f}%, {fast_ms:.2f} ms per epoch "
          f"({plain_ms / fast_ms:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
