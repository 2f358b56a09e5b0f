"""Minibatch preparation and sampled training: Edgewise's NeighborLoader against DGL's
NeighborSampler + DataLoader, on one R-MAT graph, in one run.

    python benchmarks/compare_sampling.py --dgl-python V/bin/python [--scale 1.0] [--model-batches 20]

DGL runs in its own venv (``python3 -m venv V && V/bin/pip install dgl==2.1.0
torch==2.2.1 torchdata==0.7.1 pandas pyyaml pydantic "numpy<2"``), as a child process
of this script reading the same graph from a temporary directory; without
``--dgl-python`` only Edgewise's side runs.

Cases (default shape: ogbn-products, 2.45M nodes, 59.7M edges, 100 float features,
47 classes, 204K training seeds, batch 1024, fan-outs 15/10/5 from the seeds;
``--scale 0.1`` for the 1/10 graph):

- prepare: one epoch of sample + gather (x rows of every sampled node, y of the
  seeds), split into sampling and gathering where the library allows;
- model: a 3-layer GraphSAGE (mean, 256 hidden) trained on ``--model-batches``
  batches (forward, backward, Adam) after ``--model-warmup`` untimed ones (first-call
  set-up of either stack), seconds per batch and the epoch it implies,
  split into waiting for batches and the model. Edgewise's layers get the per-layer
  bipartite graphs PyG's trim_to_layer gives, DGL's its blocks. Both sample only
  while the training loop waits for a batch: DGL's DataLoader in the training thread
  (num_workers=0), Edgewise's loader with overlap=False and --threads threads. With
  --model-overlap Edgewise's loader samples beside the model instead, with
  --model-threads threads (on a host whose cores torch's threads already fill, that
  stalls torch's parallel regions).

Every case prints its time, throughput and peak resident memory (VmHWM after a
reset); --json writes the records. Threads: --threads for both (default 2).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from compare_pyg_accelerate import _peak_rss_mb, _reset_peak_rss  # one VmHWM reader for the benchmarks


def _progress(label, done, total, start):
    elapsed = time.perf_counter() - start
    rate = done / elapsed if elapsed > 0 else 0.0
    eta = (total - done) / rate if rate > 0 else float("nan")
    print(f"\r  {label}: {done}/{total} batches, {rate:6.1f} batches/s, ETA {eta:5.1f} s", end="", file=sys.stderr,
          flush=True)
    if done == total:
        print(file=sys.stderr)


def make_graph(o, directory):
    """The R-MAT graph, its features, labels and seeds, saved as .npy for the peer."""
    import edgewise

    nodes, edges = int(o.nodes * o.scale), int(o.edges * o.scale)
    seeds = int(o.seeds * o.scale)
    t0 = time.perf_counter()
    g = edgewise.rmat_graph(nodes, edges, seed=1, num_features=o.features, num_classes=o.classes)
    rng = np.random.default_rng(0)
    arrays = {"edge_index": g["edge_index"].astype(np.int64), "x": g["features"],
              "y": g["labels"].astype(np.int64), "seeds": np.sort(rng.choice(g["num_nodes"], seeds, replace=False))}
    for key, value in arrays.items():
        np.save(os.path.join(directory, key + ".npy"), value)
    print(f"graph: R-MAT N={g['num_nodes']} E={arrays['edge_index'].shape[1]} F={o.features} seeds={seeds} "
          f"(made in {time.perf_counter() - t0:.1f} s)")
    return g["num_nodes"]


def _load(directory):
    return {k: np.load(os.path.join(directory, k + ".npy")) for k in ("edge_index", "x", "y", "seeds")}


def _sage(torch, F, H, K, conv):
    class Sage(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = torch.nn.ModuleList([conv(F, H), conv(H, H), conv(H, K)])

        def forward(self, x, graphs):
            for i, (conv, g) in enumerate(zip(self.convs, graphs)):
                x = conv(g, x)
                if i < 2:
                    x = x.relu()
            return x

    return Sage()


def edgewise_side(o, directory, num_nodes):
    import torch
    from edgewise.torch import nn as ewnn
    from edgewise.torch.loader import NeighborLoader

    torch.set_num_threads(o.threads)
    a = _load(directory)
    data = {"edge_index": torch.from_numpy(a["edge_index"]), "x": torch.from_numpy(a["x"]),
            "y": torch.from_numpy(a["y"]), "num_nodes": num_nodes}
    seeds = torch.from_numpy(a["seeds"])
    fanouts = [int(f) for f in o.fanouts.split(",")]
    records = []
    t0 = time.perf_counter()
    loader = NeighborLoader(data, num_neighbors=fanouts, input_nodes=seeds, batch_size=o.batch_size, shuffle=True,
                            num_threads=o.threads, prefetch=o.prefetch, seed=0)
    build = time.perf_counter() - t0
    print(f"edgewise: loader built in {build:.2f} s (CSC of the graph), {len(loader)} batches, {o.threads} threads")
    for epoch in range(o.epochs):
        _reset_peak_rss()
        nodes = edges = 0
        t0 = time.perf_counter()
        for i, batch in enumerate(loader):
            nodes += batch.n_id.numel()
            edges += batch.e_id.numel()
            if i % 20 == 0 or i + 1 == len(loader):
                _progress("edgewise prepare", i + 1, len(loader), t0)
        seconds = time.perf_counter() - t0
        rec = {"library": "edgewise", "case": "prepare", "seconds": seconds, "batches": len(loader),
               "nodes_per_batch": nodes / len(loader), "edges_per_batch": edges / len(loader),
               "peak_rss_mb": _peak_rss_mb(), "threads": o.threads}
        print(f"edgewise prepare epoch {epoch}: {seconds:.2f} s ({len(loader) / seconds:.1f} batches/s, "
              f"{nodes / len(loader):.0f} nodes and {edges / len(loader):.0f} edges per batch, "
              f"peak RSS {rec['peak_rss_mb']:.0f} MB)")
        records.append(rec)
    # Split: sampling alone (no tables gathered), same seeds and order.
    bare = NeighborLoader({"edge_index": data["edge_index"], "num_nodes": num_nodes}, num_neighbors=fanouts,
                          input_nodes=seeds, batch_size=o.batch_size, shuffle=True, num_threads=o.threads,
                          prefetch=o.prefetch, seed=0)
    t0 = time.perf_counter()
    for _ in bare:
        pass
    sampling = time.perf_counter() - t0
    print(f"edgewise sampling only: {sampling:.2f} s; gathering x, y therefore ~{records[-1]['seconds'] - sampling:.2f} s")
    records.append({"library": "edgewise", "case": "sample_only", "seconds": sampling, "threads": o.threads})

    if o.model_batches:
        torch.manual_seed(0)
        model = _sage(torch, a["x"].shape[1], o.hidden, o.classes, lambda i, j: _EwSage(ewnn, i, j))
        opt = torch.optim.Adam(model.parameters(), lr=0.003)
        train_loader = NeighborLoader(data, num_neighbors=fanouts, input_nodes=seeds, batch_size=o.batch_size,
                                      shuffle=True, num_threads=o.model_threads if o.model_overlap else o.threads,
                                      prefetch=o.prefetch, seed=0, overlap=o.model_overlap)
        def step(batch):
            graphs = _trimmed_graphs(torch, batch)
            opt.zero_grad()
            out = model(batch.x, graphs)[:batch.batch_size]
            loss = torch.nn.functional.cross_entropy(out, batch.y[:batch.batch_size])
            loss.backward()
            opt.step()

        _reset_peak_rss()
        wait = compute = 0.0
        done = 0
        it = iter(train_loader)
        for _ in range(o.model_warmup):  # untimed, as on DGL's side: first-call set-up of both stacks
            step(next(it))
        total = min(o.model_batches, len(loader) - o.model_warmup)
        t_all = time.perf_counter()
        while done < total:
            t0 = time.perf_counter()
            batch = next(it)
            t1 = time.perf_counter()
            step(batch)
            t2 = time.perf_counter()
            wait += t1 - t0
            compute += t2 - t1
            done += 1
            _progress("edgewise model", done, total, t_all)
        per = (wait + compute) / done
        rec = {"library": "edgewise", "case": "model", "seconds_per_batch": per, "epoch_seconds": per * len(loader),
               "wait_per_batch": wait / done, "model_per_batch": compute / done, "peak_rss_mb": _peak_rss_mb()}
        print(f"edgewise model: {per:.3f} s/batch (waiting {wait / done:.3f}, model {compute / done:.3f}), "
              f"epoch ~{per * len(loader):.1f} s, peak RSS {rec['peak_rss_mb']:.0f} MB")
        records.append(rec)
    return records


class _EwSage:
    """edgewise.torch.nn.SAGEConv called as conv(graph, x) with graph = (edge_index, (n_src, n_dst))."""

    def __new__(cls, ewnn, i, j):
        import torch

        class Layer(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = ewnn.SAGEConv(i, j)

            def forward(self, g, x):
                edge_index, (n_src, n_dst) = g
                return self.conv((x, x[:n_dst]), edge_index, size=(n_src, n_dst))

        return Layer()


def _trimmed_graphs(torch, batch):
    """Per layer, the bipartite graph PyG's trim_to_layer gives: layer l reads the nodes
    of hops 0..L-l and writes those of hops 0..L-l-1, over the edges of hops 0..L-l-1."""
    ns_nodes, ns_edges = batch.num_sampled_nodes, batch.num_sampled_edges
    L = len(ns_edges)
    graphs = []
    for layer in range(L):
        keep_hops = L - layer
        n_src = sum(ns_nodes[:keep_hops + 1])
        n_dst = sum(ns_nodes[:keep_hops])
        e = sum(ns_edges[:keep_hops])
        graphs.append((batch.edge_index[:, :e], (n_src, n_dst)))
    return graphs


DGL_SIDE = r'''
import json, os, sys, time
import numpy as np
import torch, dgl
from dgl.nn import SAGEConv
o = json.loads(sys.argv[1]); directory = sys.argv[2]
torch.set_num_threads(o["threads"])
def peak():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"): return int(line.split()[1]) / 1024
def reset():
    try:
        open("/proc/self/clear_refs", "w").write("5")
    except OSError: pass
a = {k: np.load(os.path.join(directory, k + ".npy")) for k in ("edge_index", "x", "y", "seeds")}
t0 = time.perf_counter()
ei = torch.from_numpy(a["edge_index"])
g = dgl.graph((ei[0], ei[1]), num_nodes=int(a["x"].shape[0]))
g.create_formats_()
x, y, seeds = torch.from_numpy(a["x"]), torch.from_numpy(a["y"]), torch.from_numpy(a["seeds"])
fanouts = [int(f) for f in o["fanouts"].split(",")][::-1]   # DGL lists layers outermost first
print(f"dgl {dgl.__version__} (torch {torch.__version__}): graph built in {time.perf_counter() - t0:.2f} s", flush=True)
records = []
sampler = dgl.dataloading.NeighborSampler(fanouts)
loader = dgl.dataloading.DataLoader(g, seeds, sampler, batch_size=o["batch_size"], shuffle=True, drop_last=False,
                                    num_workers=0)
for epoch in range(o["epochs"]):
    reset(); nodes = 0; t0 = time.perf_counter()
    for input_nodes, output_nodes, blocks in loader:
        xb = x[input_nodes]; yb = y[output_nodes]; nodes += input_nodes.numel()
    s = time.perf_counter() - t0
    records.append({"library": "dgl", "case": "prepare", "seconds": s, "batches": len(loader),
                    "nodes_per_batch": nodes / len(loader), "peak_rss_mb": peak(), "threads": o["threads"]})
    print(f"dgl prepare epoch {epoch}: {s:.2f} s ({len(loader) / s:.1f} batches/s, {nodes / len(loader):.0f} nodes "
          f"per batch, peak RSS {peak():.0f} MB)", flush=True)
t0 = time.perf_counter()
for _ in loader: pass
s = time.perf_counter() - t0
records.append({"library": "dgl", "case": "sample_only", "seconds": s, "threads": o["threads"]})
print(f"dgl sampling only: {s:.2f} s", flush=True)
if o["model_batches"]:
    torch.manual_seed(0)
    class Sage(torch.nn.Module):
        def __init__(self, F, H, K):
            super().__init__()
            self.convs = torch.nn.ModuleList([SAGEConv(F, H, "mean"), SAGEConv(H, H, "mean"), SAGEConv(H, K, "mean")])
        def forward(self, blocks, x):
            for i, (conv, b) in enumerate(zip(self.convs, blocks)):
                x = conv(b, x)
                if i < 2: x = x.relu()
            return x
    model = Sage(x.shape[1], o["hidden"], o["classes"]); opt = torch.optim.Adam(model.parameters(), lr=0.003)
    def step(blocks, xb, yb):
        opt.zero_grad(); out = model(blocks, xb); loss = torch.nn.functional.cross_entropy(out, yb); loss.backward(); opt.step()
    reset(); wait = compute = 0.0; done = 0; it = iter(loader)
    for _ in range(o["model_warmup"]):
        input_nodes, output_nodes, blocks = next(it); step(blocks, x[input_nodes], y[output_nodes])
    total = min(o["model_batches"], len(loader) - o["model_warmup"])
    while done < total:
        t0 = time.perf_counter(); input_nodes, output_nodes, blocks = next(it)
        xb = x[input_nodes]; yb = y[output_nodes]; t1 = time.perf_counter()
        step(blocks, xb, yb)
        t2 = time.perf_counter(); wait += t1 - t0; compute += t2 - t1; done += 1
    per = (wait + compute) / done
    records.append({"library": "dgl", "case": "model", "seconds_per_batch": per, "epoch_seconds": per * len(loader),
                    "wait_per_batch": wait / done, "model_per_batch": compute / done, "peak_rss_mb": peak()})
    print(f"dgl model: {per:.3f} s/batch (waiting {wait / done:.3f}, model {compute / done:.3f}), epoch ~{per * len(loader):.1f} s, "
          f"peak RSS {peak():.0f} MB", flush=True)
print("RECORDS " + json.dumps(records))
'''


def dgl_side(o, directory):
    if not o.dgl_python:
        print("dgl: skipped (pass --dgl-python with a venv that has dgl)")
        return []
    options = {k: getattr(o, k) for k in ("threads", "fanouts", "batch_size", "epochs", "model_batches",
                                          "model_warmup", "hidden", "classes")}
    env = dict(os.environ, OMP_NUM_THREADS=str(o.threads))
    done = subprocess.run([o.dgl_python, "-c", DGL_SIDE, json.dumps(options), directory], env=env,
                          capture_output=True, text=True)
    records = []
    for line in done.stdout.splitlines():
        if line.startswith("RECORDS "):
            records = json.loads(line[len("RECORDS "):])
        else:
            print(line)
    if done.returncode != 0:
        print(f"dgl: failed (exit {done.returncode}): {done.stderr.strip().splitlines()[-1] if done.stderr else ''}")
    return records


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dgl-python", default=os.environ.get("EDGEWISE_DGL_PYTHON"),
                   help="python of a venv with dgl (default: $EDGEWISE_DGL_PYTHON; none: Edgewise only)")
    p.add_argument("--scale", type=float, default=1.0, help="graph and seed count relative to ogbn-products")
    p.add_argument("--nodes", type=int, default=2_449_029)
    p.add_argument("--edges", type=int, default=59_700_000)
    p.add_argument("--seeds", type=int, default=196_615)
    p.add_argument("--features", type=int, default=100)
    p.add_argument("--classes", type=int, default=47)
    p.add_argument("--fanouts", default="15,10,5", help="neighbours per hop, from the seeds")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--epochs", type=int, default=2, help="timed preparation epochs (the first warms caches)")
    p.add_argument("--model-batches", type=int, default=20, help="batches of timed training (0: none)")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--prefetch", type=int, default=4, help="Edgewise: batches prepared ahead")
    p.add_argument("--model-warmup", type=int, default=1,
                   help="untimed training batches before the timed ones, on both sides (default 1)")
    p.add_argument("--model-overlap", action="store_true",
                   help="Edgewise: sample beside the model (overlap=True) rather than while the loop waits")
    p.add_argument("--model-threads", type=int, default=None,
                   help="Edgewise, with --model-overlap: sampling threads beside the model (default: the loader's)")
    p.add_argument("--json", help="write the records here")
    o = p.parse_args(argv)
    if o.model_threads is None:
        from edgewise.torch.loader import default_num_threads
        o.model_threads = default_num_threads()
    for name in ("nodes", "edges", "seeds", "features", "classes", "batch_size", "epochs", "hidden", "threads",
                 "prefetch", "model_threads"):
        if getattr(o, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1 (got {getattr(o, name)})")
    if o.model_batches < 0:
        p.error(f"--model-batches must be >= 0 (got {o.model_batches})")
    batches = -(-int(o.seeds * o.scale) // o.batch_size)
    if o.model_batches and not 0 <= o.model_warmup < batches:
        p.error(f"--model-warmup must lie in [0, {batches}) (the epoch's batches; got {o.model_warmup})")
    if not 0 < o.scale <= 10:
        p.error(f"--scale must lie in (0, 10] (got {o.scale})")
    if o.dgl_python and not os.path.exists(o.dgl_python):
        p.error(f"--dgl-python: no such file: {o.dgl_python}")
    with tempfile.TemporaryDirectory(prefix="edgewise_sampling_") as directory:
        num_nodes = make_graph(o, directory)
        records = edgewise_side(o, directory, num_nodes)
        records += dgl_side(o, directory)
    best = {}
    for r in records:
        if r["case"] in ("prepare", "sample_only"):
            key = (r["library"], r["case"])
            best[key] = min(best.get(key, float("inf")), r["seconds"])
        elif r["case"] == "model":
            best[(r["library"], "model")] = r["epoch_seconds"]
    print("\nsummary (best epoch of each; ratios = DGL time / Edgewise time, same run):")
    for case in ("prepare", "sample_only", "model"):
        ew, dg = best.get(("edgewise", case)), best.get(("dgl", case))
        if ew is None:
            continue
        line = f"  {case:<12} edgewise {ew:8.2f} s"
        if dg is not None:
            line += f"   dgl {dg:8.2f} s   {dg / ew:5.2f}x"
        print(line)
    if o.json:
        with open(o.json, "w") as f:
            json.dump(records, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
