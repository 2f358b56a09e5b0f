"""The hetero section of compare_torch.py: typed products and PyG's heterogeneous models
with and without ``edgewise.torch.pyg.accelerate()``, in one process on the same data.

- segment_matmul: ``edgewise.torch.segment_matmul`` against PyG's own fallback (a
  Python loop of ``torch.matmul`` over types: HeteroLinear.forward_naive) at T = 8 /
  64 / 512 types over N rows (default 100 000, K = M = 64), forward and forward +
  backward; grouped_matmul against a list of matmuls at the same T; each in float32
  and bfloat16 (``--hetero-dtypes``);
- rgcn: a 2-layer PyG RGCNConv model (8 relation types, mean aggregation) on an
  R-MAT graph (default 1M nodes / 10M edges / 64 features) — one training epoch
  (forward + backward + Adam), median over epochs, each way;
- to_hetero: ``to_hetero(GraphSAGE)`` (2 layers, sum across edge types) on the
  ogbn-mag-shaped synthetic graph (``edgewise.hetero.mag_like_graph``; default 1M
  papers), epoch each way;
- accuracy (``--hetero-accuracy-runs R``): R-GCN (the graph as one typed graph) and
  to_hetero(SAGE) on a smaller mag-shaped graph, R seeds each, test accuracy with and
  without accelerate().
"""

import time

import numpy as np

import edgewise

OPTIONS = {"rows": 100_000, "channels": 64, "types": "8,64,512", "nodes": 1_000_000, "edges": 10_000_000,
           "features": 64, "hidden": 64, "relations": 8, "papers": 1_000_000, "epochs": 3, "accuracy_runs": 0,
           "accuracy_papers": 20_000, "accuracy_epochs": 60, "parts": "matmul,rgcn,to_hetero",
           "dtypes": "float32,bfloat16"}
MATMUL_DTYPES = ("float32", "bfloat16")


def _median_ms(fn, repeats):
    time.sleep(0.05)
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def _record(records, name, fast, plain, peer):
    rec = {"name": name, "edgewise_ms": fast, "torch_ms": plain, "torch_op": peer, "speedup": plain / fast}
    records.append(rec)
    print(f"{name:<58} {fast:10.2f} ms  {peer:<34} {plain:10.2f} ms  {rec['speedup']:6.2f}x", flush=True)


def _matmul_rows(records, repeats):
    import torch

    import edgewise.torch as ew

    o = OPTIONS
    n, c = o["rows"], o["channels"]
    print(f"hetero/segment_matmul: N={n} K=M={c}, {torch.get_num_threads()} threads")
    for dtype_name in o["dtypes"].split(","):
        dtype = getattr(torch, dtype_name)
        suffix = "" if dtype == torch.float32 else f"/{dtype_name}"
        gen = torch.Generator().manual_seed(0)
        for types in [int(t) for t in o["types"].split(",") if t]:
            _matmul_case(records, repeats, gen, n, c, types, dtype, suffix)


def _matmul_case(records, repeats, gen, n, c, types, dtype, suffix):
    import torch

    import edgewise.torch as ew

    cuts = torch.sort(torch.randint(0, n + 1, (types - 1,), generator=gen)).values
    ptr = torch.cat([torch.zeros(1, dtype=torch.int64), cuts, torch.full((1,), n, dtype=torch.int64)])
    bounds = ptr.tolist()
    x = torch.randn(n, c, generator=gen).to(dtype).requires_grad_()
    w = torch.randn(types, c, c, generator=gen).to(dtype).requires_grad_()
    g = torch.randn(n, c, generator=gen).to(dtype)

    def loop():  # PyG's HeteroLinear.forward_naive
        out = x.new_empty(n, c)
        for i in range(types):
            out[bounds[i]:bounds[i + 1]] = x[bounds[i]:bounds[i + 1]] @ w[i]
        return out

    with torch.no_grad():
        fast = _median_ms(lambda: ew.segment_matmul(x, ptr, w), repeats)
        plain = _median_ms(loop, repeats)
    _record(records, f"hetero/segment_matmul/fwd/T={types}{suffix}", fast, plain, "loop of torch.matmul")
    fast = _median_ms(lambda: ew.segment_matmul(x, ptr, w).backward(g), repeats)
    plain = _median_ms(lambda: loop().backward(g), repeats)
    _record(records, f"hetero/segment_matmul/fwd+bwd/T={types}{suffix}", fast, plain, "loop of torch.matmul")
    xs = [x.detach()[bounds[i]:bounds[i + 1]] for i in range(types)]
    ws = [w.detach()[i] for i in range(types)]
    fast = _median_ms(lambda: ew.grouped_matmul(xs, ws), repeats)
    plain = _median_ms(lambda: [a @ b for a, b in zip(xs, ws)], repeats)
    _record(records, f"hetero/grouped_matmul/fwd/T={types}{suffix}", fast, plain, "list of torch.matmul")


def _epochs(model, step, epochs):
    import torch

    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    times = []
    for k in range(epochs + 1):
        time.sleep(0.05)
        t0 = time.perf_counter()
        opt.zero_grad()
        step().backward()
        opt.step()
        if k > 0:
            times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def _both_ways(ew_pyg, model, step, epochs):
    plain = _epochs(model, step, epochs)
    with ew_pyg.accelerated():
        fast = _epochs(model, step, epochs)
    return fast, plain


def _rgcn_model(in_channels, hidden, classes, relations):
    import torch
    import torch_geometric.nn as pyg

    class RGCN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = pyg.RGCNConv(in_channels, hidden, relations)
            self.conv2 = pyg.RGCNConv(hidden, classes, relations)

        def forward(self, x, edge_index, edge_type):
            return self.conv2(self.conv1(x, edge_index, edge_type).relu(), edge_index, edge_type)

    return RGCN()


def _rgcn_rows(records, ew_pyg):
    import torch
    import torch.nn.functional as fn

    o = OPTIONS
    g = edgewise.rmat_graph(o["nodes"], o["edges"], seed=1, num_features=o["features"], num_classes=16)
    x = torch.from_numpy(g["features"])
    ei = torch.from_numpy(g["edge_index"]).to(torch.int64)
    y = torch.from_numpy(g["labels"]).to(torch.int64)
    edge_type = torch.randint(0, o["relations"], (ei.size(1),), generator=torch.Generator().manual_seed(2))
    print(f"hetero/rgcn: R-MAT N={g['num_nodes']} E={ei.size(1)} F={o['features']} hidden {o['hidden']}, "
          f"{o['relations']} relations, {o['epochs']} timed epochs (+1 warm-up) each way", flush=True)
    torch.manual_seed(0)
    model = _rgcn_model(o["features"], o["hidden"], 16, o["relations"])
    fast, plain = _both_ways(ew_pyg, model, lambda: fn.cross_entropy(model(x, ei, edge_type), y), o["epochs"])
    _record(records, f"hetero/rgcn_epoch/rmat/N={g['num_nodes']},E={ei.size(1)},R={o['relations']}", fast, plain,
            "PyG RGCNConv, no accelerate()")


def _sage_to_hetero(metadata, hidden, classes):
    import torch
    import torch_geometric.nn as pyg

    class SAGE(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = pyg.SAGEConv((-1, -1), hidden)
            self.conv2 = pyg.SAGEConv((-1, -1), classes)

        def forward(self, x, edge_index):
            return self.conv2(self.conv1(x, edge_index).relu(), edge_index)

    return pyg.to_hetero(SAGE(), metadata, aggr="sum")


def _mag_data(papers, seed=0):
    import edgewise.hetero
    import edgewise.torch.hetero as H

    graph = edgewise.hetero.mag_like_graph(papers, seed=seed)
    return H.to_hetero_data(graph, add_reverse=True), graph["num_classes"]


def _to_hetero_rows(records, ew_pyg):
    import torch
    import torch.nn.functional as fn

    o = OPTIONS
    t0 = time.perf_counter()
    data, classes = _mag_data(o["papers"])
    edges = sum(data[et].edge_index.size(1) for et in data.edge_types)
    print(f"hetero/to_hetero: mag-shaped graph, {o['papers']} papers, {sum(data[t].num_nodes for t in data.node_types)} "
          f"nodes, {edges} edges (with reverses), built in {time.perf_counter() - t0:.1f} s", flush=True)
    torch.manual_seed(0)
    model = _sage_to_hetero(data.metadata(), o["hidden"], classes)
    x_dict, ei_dict = data.x_dict, data.edge_index_dict
    mask, y = data["paper"].train_mask, data["paper"].y
    model(x_dict, ei_dict)  # lazy initialisation

    def step():
        return fn.cross_entropy(model(x_dict, ei_dict)["paper"][mask], y[mask])

    fast, plain = _both_ways(ew_pyg, model, step, o["epochs"])
    _record(records, f"hetero/to_hetero_sage_epoch/mag/papers={o['papers']}", fast, plain,
            "PyG to_hetero(SAGE), no accelerate()")


def _train_eval(model, step_logits, y, masks, epochs):
    import torch
    import torch.nn.functional as fn

    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    best_val, test_at_best = 0.0, 0.0
    for _ in range(epochs):
        model.train()
        opt.zero_grad()
        logits = step_logits()
        fn.cross_entropy(logits[masks["train"]], y[masks["train"]]).backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            pred = step_logits().argmax(-1)
        val = float((pred[masks["val"]] == y[masks["val"]]).float().mean())
        if val >= best_val:
            best_val = val
            test_at_best = float((pred[masks["test"]] == y[masks["test"]]).float().mean())
    return test_at_best


def _accuracy_rows(records, ew_pyg):
    import torch

    o = OPTIONS
    data, classes = _mag_data(o["accuracy_papers"], seed=7)
    masks = {k: data["paper"][f"{k}_mask"] for k in ("train", "val", "test")}
    y = data["paper"].y
    homo = data.to_homogeneous()
    paper_type = data.node_types.index("paper")
    paper_rows = (homo.node_type == paper_type).nonzero().view(-1)
    relations = len(data.edge_types)
    print(f"hetero/accuracy: mag-shaped graph, {o['accuracy_papers']} papers, {classes} classes, "
          f"{o['accuracy_runs']} seeds x {o['accuracy_epochs']} epochs each way (test accuracy at best val)", flush=True)
    for kind in ("rgcn", "to_hetero_sage"):
        results = {}
        for accelerated in (False, True):
            accs = []
            for seed in range(o["accuracy_runs"]):
                torch.manual_seed(seed)
                if kind == "rgcn":
                    model = _rgcn_model(homo.x.size(1), o["hidden"], classes, relations)

                    def logits(model=model):
                        return model(homo.x, homo.edge_index, homo.edge_type)[paper_rows]
                else:
                    model = _sage_to_hetero(data.metadata(), o["hidden"], classes)
                    model(data.x_dict, data.edge_index_dict)

                    def logits(model=model):
                        return model(data.x_dict, data.edge_index_dict)["paper"]

                if accelerated:
                    with ew_pyg.accelerated():
                        accs.append(_train_eval(model, logits, y, masks, o["accuracy_epochs"]))
                else:
                    accs.append(_train_eval(model, logits, y, masks, o["accuracy_epochs"]))
            results[accelerated] = (100 * float(np.mean(accs)), 100 * float(np.std(accs)))
        rec = {"name": f"hetero/accuracy/{kind}/mag/papers={o['accuracy_papers']}",
               "edgewise_accuracy": results[True], "pyg_accuracy": results[False],
               "difference_points": results[True][0] - results[False][0]}
        records.append(rec)
        print(f"{rec['name']:<58} accelerated {results[True][0]:6.2f} +- {results[True][1]:4.2f}   "
              f"PyG {results[False][0]:6.2f} +- {results[False][1]:4.2f}   "
              f"difference {rec['difference_points']:+.2f} points", flush=True)


def hetero_cases(rng, repeats, records, name_filter):
    if name_filter and name_filter not in "hetero":
        return
    try:
        import torch_geometric  # noqa: F401

        import edgewise.torch.pyg as ew_pyg
    except ImportError:
        print("hetero: torch_geometric is not importable; section skipped")
        return
    parts = OPTIONS["parts"].split(",")
    if "matmul" in parts:
        _matmul_rows(records, repeats)
    if "rgcn" in parts:
        _rgcn_rows(records, ew_pyg)
    if "to_hetero" in parts:
        _to_hetero_rows(records, ew_pyg)
    if OPTIONS["accuracy_runs"] > 0:
        _accuracy_rows(records, ew_pyg)
