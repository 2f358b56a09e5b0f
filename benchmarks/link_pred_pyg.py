#!/usr/bin/env python3
"""PyG's examples/link_pred.py recipe on cora.npz, seeds 0..N-1: the reference for
`edgewise-train --dataset cora --task link --runs N` (same RandomLinkSplit fractions,
2-layer GCN 128 -> 64, dot-product decoder, Adam lr 0.01, 100 epochs, fresh training
negatives each epoch, test AUC at the best validation AUC).

    EDGEWISE_DATA_DIR=../shared/datasets python3 benchmarks/link_pred_pyg.py [--runs 10]

Needs torch and torch_geometric; runs on one CPU thread. AUC is exact (ties count one half).
"""

import argparse
import os
import random
import time

import numpy as np
import torch
import torch_geometric.transforms as T
from torch_geometric.data import Data
from torch_geometric.nn import GCNConv
from torch_geometric.utils import negative_sampling


def roc_auc(labels, scores):
    pos, neg = scores[labels == 1][:, None], scores[labels == 0][None, :]
    return float((pos > neg).mean() + 0.5 * (pos == neg).mean())


class Net(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.conv1 = GCNConv(in_channels, hidden_channels)
        self.conv2 = GCNConv(hidden_channels, out_channels)

    def encode(self, x, edge_index):
        return self.conv2(self.conv1(x, edge_index).relu(), edge_index)

    def decode(self, z, edge_label_index):
        return (z[edge_label_index[0]] * z[edge_label_index[1]]).sum(dim=-1)


def one_run(arrays, seed):
    # negative_sampling draws from Python's and NumPy's generators as well as torch's.
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    data = Data(x=torch.tensor(arrays["node_feat"]), edge_index=torch.tensor(arrays["edge_index"]),
                num_nodes=int(arrays["num_nodes"]))
    transform = T.Compose([T.NormalizeFeatures(),
                           T.RandomLinkSplit(num_val=0.05, num_test=0.1, is_undirected=True,
                                             add_negative_train_samples=False)])
    train_data, val_data, test_data = transform(data)
    model = Net(data.num_features, 128, 64)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    criterion = torch.nn.BCEWithLogitsLoss()

    @torch.no_grad()
    def evaluate(split):
        model.eval()
        z = model.encode(split.x, split.edge_index)
        scores = model.decode(z, split.edge_label_index).view(-1).sigmoid()
        return roc_auc(split.edge_label.numpy(), scores.numpy())

    best_val = final_test = 0.0
    for _ in range(100):
        model.train()
        optimizer.zero_grad()
        z = model.encode(train_data.x, train_data.edge_index)
        neg = negative_sampling(train_data.edge_index, num_nodes=train_data.num_nodes,
                                num_neg_samples=train_data.edge_label_index.size(1), method="sparse")
        edge_label_index = torch.cat([train_data.edge_label_index, neg], dim=-1)
        edge_label = torch.cat([train_data.edge_label, train_data.edge_label.new_zeros(neg.size(1))])
        loss = criterion(model.decode(z, edge_label_index).view(-1), edge_label)
        loss.backward()
        optimizer.step()
        val_auc, test_auc = evaluate(val_data), evaluate(test_data)
        if val_auc > best_val:
            best_val, final_test = val_auc, test_auc
    return final_test


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(1)
    data_dir = os.environ.get("EDGEWISE_DATA_DIR") or os.path.expanduser("~/.cache/edgewise/datasets")
    arrays = np.load(os.path.join(data_dir, "cora.npz"))
    start, results = time.time(), []
    for seed in range(args.runs):
        results.append(one_run(arrays, seed))
        print(f"seed {seed}: test auc {results[-1]:.4f}", flush=True)
    std = np.std(results, ddof=1) if len(results) > 1 else 0.0
    print(f"PyG link_pred: test AUC {np.mean(results):.4f} ± {std:.4f} over {args.runs} run(s), "
          f"{time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
