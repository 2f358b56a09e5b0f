"""The pyg_accelerate section of compare_torch.py: PyG models built from PyG's own
layers, one training epoch (forward + backward + Adam) with and without
``edgewise.torch.pyg.accelerate()``, in one process on the same data.

- models: 2-layer GCN, GraphSAGE (mean, max), GIN, GraphConv, GAT, GATv2 on an
  R-MAT graph (default 1M nodes / 10M edges / 64 features, hidden 64), median epoch
  and peak resident memory of an epoch (VmHWM after a reset) each way;
- layers: one forward + backward of every homogeneous conv layer of the table below
  at Cora size (2708 nodes / 10556 edges / 64 features), and at the R-MAT size with
  ``--pyg-table-large`` (``--pyg-layers`` picks rows by name). The five layers with
  per-edge MLPs or several aggregations keep [E, 64..192] messages per step, over 20 GB
  at 10M edges with autograd: at the R-MAT size they run on its first quarter of edges.
"""

import time

import numpy as np

import edgewise

OPTIONS = {"nodes": 1_000_000, "edges": 10_000_000, "features": 64, "hidden": 64, "classes": 16, "epochs": 3,
           "models": "gcn,sage_mean,sage_max,gin,graphconv,gat,gatv2", "table_large": False, "layers": ""}
HEAVY_LAYERS = ("EdgeConv", "FeaStConv", "PNAConv", "GENConv softmax", "TransformerConv")


def _reset_peak_rss():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _model(kind, F, H, K):
    import torch
    import torch.nn.functional as fn
    import torch_geometric.nn as pyg

    def mlp(i, o):
        return torch.nn.Sequential(torch.nn.Linear(i, o), torch.nn.ReLU(), torch.nn.Linear(o, o))

    layers = {
        "gcn": lambda: (pyg.GCNConv(F, H), pyg.GCNConv(H, K)),
        "sage_mean": lambda: (pyg.SAGEConv(F, H), pyg.SAGEConv(H, K)),
        "sage_max": lambda: (pyg.SAGEConv(F, H, aggr="max"), pyg.SAGEConv(H, K, aggr="max")),
        "gin": lambda: (pyg.GINConv(mlp(F, H)), pyg.GINConv(mlp(H, K))),
        "graphconv": lambda: (pyg.GraphConv(F, H), pyg.GraphConv(H, K)),
        "gat": lambda: (pyg.GATConv(F, H // 8, heads=8), pyg.GATConv(H, K)),
        "gatv2": lambda: (pyg.GATv2Conv(F, H // 8, heads=8), pyg.GATv2Conv(H, K)),
    }[kind]()

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = layers

        def forward(self, x, edge_index):
            return self.conv2(fn.relu(self.conv1(x, edge_index)), edge_index)

    return Net()


def _epochs(model, x, ei, y, epochs):
    """(median epoch ms over epochs after one warm-up, peak RSS MB of the timed epochs)."""
    import torch
    import torch.nn.functional as fn

    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    times = []
    _reset_peak_rss()
    for k in range(epochs + 1):
        time.sleep(0.05)
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = fn.cross_entropy(model(x, ei), y)
        loss.backward()
        opt.step()
        if k > 0:
            times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times)), _peak_rss_mb()


def _rmat(nodes, edges, features, classes):
    import torch

    g = edgewise.rmat_graph(nodes, edges, seed=1, num_features=features, num_classes=classes)
    return (torch.from_numpy(g["features"]), torch.from_numpy(g["edge_index"]).to(torch.int64),
            torch.from_numpy(g["labels"]).to(torch.int64), g["num_nodes"], g["edge_index"].shape[1])


def _model_rows(records, ew_pyg):
    import torch

    o = OPTIONS
    if not [k for k in o["models"].split(",") if k]:
        return
    x, ei, y, n, e = _rmat(o["nodes"], o["edges"], o["features"], o["classes"])
    print(f"pyg_accelerate: R-MAT N={n} E={e} F={o['features']} hidden {o['hidden']}, {o['epochs']} timed epochs "
          f"(+1 warm-up) each way, {torch.get_num_threads()} threads")
    for kind in [k for k in o["models"].split(",") if k]:
        torch.manual_seed(0)
        model = _model(kind, o["features"], o["hidden"], o["classes"])
        plain_ms, plain_mb = _epochs(model, x, ei, y, o["epochs"])
        with ew_pyg.accelerated():
            fast_ms, fast_mb = _epochs(model, x, ei, y, o["epochs"])
        rec = {"name": f"pyg_accelerate/{kind}/rmat/N={n},E={e},F={o['features']},H={o['hidden']}",
               "edgewise_ms": fast_ms, "torch_ms": plain_ms, "torch_op": f"PyG {kind} model, no accelerate()",
               "speedup": plain_ms / fast_ms, "edgewise_peak_rss_mb": fast_mb, "torch_peak_rss_mb": plain_mb}
        records.append(rec)
        print(f"{rec['name']:<64} {fast_ms:9.1f} ms  PyG {plain_ms:9.1f} ms  {rec['speedup']:5.2f}x   "
              f"peak RSS {fast_mb:7.0f} vs {plain_mb:7.0f} MB")


def _layer_table():
    import torch
    import torch_geometric.nn as pyg

    C = OPTIONS["hidden"]

    def mlp(i, o):
        return torch.nn.Sequential(torch.nn.Linear(i, o), torch.nn.ReLU(), torch.nn.Linear(o, o))

    return [
        ("GCNConv", lambda: pyg.GCNConv(C, C), "w"), ("SAGEConv mean", lambda: pyg.SAGEConv(C, C), ""),
        ("SAGEConv max", lambda: pyg.SAGEConv(C, C, aggr="max"), ""), ("GINConv", lambda: pyg.GINConv(mlp(C, C)), ""),
        ("GraphConv", lambda: pyg.GraphConv(C, C), "w"),
        ("GATConv 8 heads", lambda: pyg.GATConv(C, C // 8, heads=8), ""),
        ("GATv2Conv 8 heads", lambda: pyg.GATv2Conv(C, C // 8, heads=8), ""),
        ("TransformerConv", lambda: pyg.TransformerConv(C, C // 4, heads=4), ""),
        ("ResGatedGraphConv", lambda: pyg.ResGatedGraphConv(C, C), ""), ("TAGConv", lambda: pyg.TAGConv(C, C), "w"),
        ("SGConv K=2", lambda: pyg.SGConv(C, C, K=2), "w"), ("APPNP K=5", lambda: pyg.APPNP(5, 0.1), "w"),
        ("ChebConv K=3", lambda: pyg.ChebConv(C, C, 3), "w"), ("ClusterGCNConv", lambda: pyg.ClusterGCNConv(C, C), ""),
        ("LEConv", lambda: pyg.LEConv(C, C), "w"), ("MFConv", lambda: pyg.MFConv(C, C), ""),
        ("GatedGraphConv", lambda: pyg.GatedGraphConv(C, 2), "w"), ("LGConv", lambda: pyg.LGConv(), "w"),
        ("SimpleConv mean", lambda: pyg.SimpleConv("mean"), ""), ("GENConv softmax", lambda: pyg.GENConv(C, C), ""),
        ("EdgeConv", lambda: pyg.EdgeConv(mlp(2 * C, C)), ""), ("AGNNConv", lambda: pyg.AGNNConv(), ""),
        ("FeaStConv", lambda: pyg.FeaStConv(C, C, heads=2), ""), ("MixHopConv", lambda: pyg.MixHopConv(C, C // 3), "w"),
        ("PNAConv", lambda: pyg.PNAConv(C, C, ["mean", "max", "std"], ["identity", "amplification"],
                                        torch.tensor([0, 10, 20, 10, 5])), ""),
    ]


def _layer_rows(records, ew_pyg, nodes, edges, label, quarter_heavy):
    import torch

    x, ei_all, _, n, e_all = _rmat(nodes, edges, OPTIONS["hidden"], 2)
    w_all = torch.rand(e_all) + 0.1
    wanted = [name.strip() for name in OPTIONS["layers"].split(",") if name.strip()]
    for name, build, weighted in _layer_table():
        if wanted and not any(want in name for want in wanted):
            continue
        quarter = quarter_heavy and name in HEAVY_LAYERS
        ei, w = (ei_all[:, :e_all // 4], w_all[:e_all // 4]) if quarter else (ei_all, w_all)
        e = ei.size(1)
        repeats = 3 if e > 1_000_000 else 15
        torch.manual_seed(0)
        layer = build()
        xs = x.clone().requires_grad_()
        _reset_peak_rss()

        def step():
            out = layer(xs, ei, w) if weighted else layer(xs, ei)
            out = out[0] if isinstance(out, tuple) else out
            out.sum().backward()

        # The two ways alternate, so drifting host load hits both alike.
        plain_times, fast_times = [], []
        step()
        with ew_pyg.accelerated():
            step()
        for _ in range(repeats):
            for accelerated, times in ((False, plain_times), (True, fast_times)):
                if accelerated:
                    ew_pyg.accelerate()
                if e <= 1_000_000:
                    # The first step after a switch re-specialises PyG's propagate (about
                    # 0.6 ms here): a cost a model pays once, not per step.
                    step()
                time.sleep(0.02)
                t0 = time.perf_counter()
                step()
                times.append((time.perf_counter() - t0) * 1e3)
                ew_pyg.deaccelerate()
        plain, fast = float(np.median(plain_times)), float(np.median(fast_times))
        size = f"{label}_quarter_edges(E={e})" if quarter else label
        rec = {"name": f"pyg_accelerate/layer/{size}/{name}", "edgewise_ms": fast, "torch_ms": plain,
               "torch_op": f"PyG {name} forward+backward", "speedup": plain / fast}
        if e > 1_000_000:
            rec["peak_rss_mb"] = _peak_rss_mb()
        records.append(rec)
        memory = f"   peak RSS (both ways) {rec['peak_rss_mb']:7.0f} MB" if "peak_rss_mb" in rec else ""
        print(f"{rec['name']:<56} {fast:9.2f} ms  PyG {plain:9.2f} ms  {rec['speedup']:5.2f}x{memory}", flush=True)


def pyg_accelerate_cases(rng, repeats, records, name_filter):
    if name_filter and name_filter not in "pyg_accelerate":
        return
    try:
        import torch_geometric  # noqa: F401

        import edgewise.torch.pyg as ew_pyg
    except ImportError:
        print("pyg_accelerate: torch_geometric is not importable; section skipped")
        return
    _layer_rows(records, ew_pyg, 2708, 10556, "cora_size", False)
    if OPTIONS["table_large"]:
        _layer_rows(records, ew_pyg, OPTIONS["nodes"], OPTIONS["edges"], "rmat", True)
    _model_rows(records, ew_pyg)
