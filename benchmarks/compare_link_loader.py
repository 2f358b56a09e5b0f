"""Link-prediction batch preparation: Edgewise's LinkNeighborLoader (native threads)
against PyG's own LinkNeighborLoader, in one run, on one R-MAT graph.

    PYTHONPATH=build/release/python python3 benchmarks/compare_link_loader.py [--nodes N] [--edges E]

On a plain ``pip install torch_geometric`` (no pyg-lib, no torch-sparse) PyG's loader
runs only with Edgewise's sampler (``edgewise.torch.pyg.NeighborSampler``), so both
sides sample with the same HopSampler: the difference is the rest of a batch —
negative sampling, endpoint deduplication, slicing features and building the batch —
done by PyG's Python code in the training thread (``num_workers=0``) against
Edgewise's native threads. Each side: ``--epochs`` epochs of ``--batches`` batches of
``--batch-size`` label edges with as many binary negatives, fan-outs ``--fanouts``, x
of ``--features`` floats gathered; the fastest epoch counts (``iter()`` included).
Prints seconds per batch, label edges per second, the ratio and peak resident memory.
"""

import argparse
import sys
import time

from compare_pyg_accelerate import _peak_rss_mb, _reset_peak_rss  # one VmHWM reader for the benchmarks


def _time_epochs(loader, epochs, label):
    """Seconds per batch of the fastest whole epoch (iter() included: the native loader
    finds every batch's endpoints when an epoch starts), and nodes per batch."""
    best, nodes = float("inf"), 0
    for e in range(epochs):
        start = time.perf_counter()
        nodes = 0
        for k, batch in enumerate(loader):
            nodes += batch.num_nodes
            elapsed = time.perf_counter() - start
            eta = elapsed / (k + 1) * (len(loader) - k - 1)
            print(f"\r  {label} epoch {e + 1}/{epochs}: {k + 1}/{len(loader)} batches, ETA {eta:5.1f} s", end="",
                  file=sys.stderr, flush=True)
        best = min(best, time.perf_counter() - start)
        print(file=sys.stderr)
    return best / len(loader), nodes / len(loader)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=1_000_000)
    p.add_argument("--edges", type=int, default=10_000_000)
    p.add_argument("--features", type=int, default=64)
    p.add_argument("--fanouts", default="10,5", help="neighbours per hop, from the endpoints")
    p.add_argument("--batch-size", type=int, default=1024, help="label edges per batch")
    p.add_argument("--batches", type=int, default=30, help="batches per epoch")
    p.add_argument("--epochs", type=int, default=2, help="epochs per side, the fastest reported")
    p.add_argument("--threads", type=int, default=2, help="torch's and Edgewise's threads")
    o = p.parse_args(argv)
    if o.nodes < 2 or o.edges < 1 or o.batches < 1 or o.epochs < 1 or o.threads < 1:
        p.error("--nodes >= 2, --edges >= 1, --batches >= 1, --epochs >= 1 and --threads >= 1")
    try:
        fanouts = [int(v) for v in o.fanouts.split(",")]
    except ValueError:
        p.error(f"--fanouts must be a comma-separated list of ints (got {o.fanouts!r})")
    try:
        import torch
        from torch_geometric.data import Data
        from torch_geometric.loader import LinkNeighborLoader as PygLinkNeighborLoader
    except ImportError as error:
        print(f"compare_link_loader: needs torch and torch_geometric ({error}); nothing measured")
        return 0
    import edgewise
    import edgewise.torch.pyg as ewpyg
    from edgewise.torch.loader import LinkNeighborLoader

    torch.set_num_threads(o.threads)
    t0 = time.perf_counter()
    g = edgewise.rmat_graph(o.nodes, o.edges, seed=1, num_features=o.features, num_classes=2)
    data = Data(x=torch.from_numpy(g["features"]), edge_index=torch.from_numpy(g["edge_index"].astype("int64")))
    print(f"graph: R-MAT N={data.num_nodes} E={data.num_edges} F={o.features} (made in "
          f"{time.perf_counter() - t0:.1f} s); batch {o.batch_size} label edges + as many negatives, fan-outs "
          f"{fanouts}, {o.threads} threads, torch {torch.__version__}")
    total = o.batches * o.batch_size
    label_index = data.edge_index[:, torch.randperm(data.num_edges, generator=torch.Generator().manual_seed(0))[:total]]

    rows = []
    _reset_peak_rss()
    ours = LinkNeighborLoader(data, num_neighbors=fanouts, edge_label_index=label_index, batch_size=o.batch_size,
                              neg_sampling="binary", num_threads=o.threads, seed=0)
    per_batch, nodes = _time_epochs(ours, o.epochs, "edgewise")
    rows.append(("Edgewise LinkNeighborLoader (native threads)", per_batch, nodes, _peak_rss_mb()))
    del ours
    _reset_peak_rss()
    sampler = ewpyg.NeighborSampler(data, num_neighbors=fanouts)
    theirs = PygLinkNeighborLoader(data, num_neighbors=fanouts, edge_label_index=label_index,
                                   batch_size=o.batch_size, neg_sampling="binary", neighbor_sampler=sampler)
    per_batch, nodes = _time_epochs(theirs, o.epochs, "pyg")
    rows.append(("PyG LinkNeighborLoader (Edgewise's sampler)", per_batch, nodes, _peak_rss_mb()))

    print(f"\n| loader | s per batch | label edges / s | nodes per batch | peak RSS (MB) |\n|---|---|---|---|---|")
    for name, seconds, nodes, rss in rows:
        print(f"| {name} | {seconds:.4f} | {o.batch_size / seconds:,.0f} | {nodes / 1e3:.1f}K | {rss:.0f} |")
    print(f"\nPyG / Edgewise per batch: {rows[1][1] / rows[0][1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
