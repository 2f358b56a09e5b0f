#!/usr/bin/env python3
"""Edgewise vs PyTorch on the same data, timed in one run (CPU).

Where torch is importable, times torch.segment_reduce (and index_add_ on the same
data) and torch.sparse.mm on a CSR tensor against edgewise through its Python
binding and prints the speed ratio;
where it is not, says so and exits 0. PyTorch is never a build or CI dependency.

    PYTHONPATH=build/release/python python3 benchmarks/compare_torch.py [--quick] [--json FILE]
    ... --filter torch_nn [--nn-nodes N --nn-edges E ...]   (PyG layers vs edgewise.torch.nn layers)
    ... --filter gat_epoch [--gat-epochs N --gat-dataset cora]   (2-layer GAT: PyG vs edgewise.torch vs engine)
    ... --filter scatter_api   (every torch_scatter function of edgewise.torch vs torch's native op;
                                compare_torch_scatter_api.py)
    ... --filter pyg_accelerate [--pyg-nodes N --pyg-edges E --pyg-epochs K --pyg-models gcn,... --pyg-table-large
                                 --pyg-layers GCNConv,...]
                               (PyG's own layers / models with and without edgewise.torch.pyg.accelerate();
                                compare_pyg_accelerate.py)
    ... --filter hetero [--hetero-rows N --hetero-types 8,64,512 --hetero-nodes N --hetero-edges E
                         --hetero-papers P --hetero-parts matmul,rgcn,to_hetero --hetero-accuracy-runs R
                         --hetero-dtypes float32,bfloat16]
                        (segment_matmul / grouped_matmul vs torch.matmul loops; PyG RGCNConv and
                         to_hetero(SAGE) with and without accelerate(); compare_hetero.py)
    ... --filter dgl   (DGL's copy_u_sum / copy_u_max and GraphConv GCN; needs dgl, e.g. in its own venv:
                        python3 -m venv V && V/bin/pip install dgl==2.1.0 torch==2.2.1 torchdata==0.7.1 pandas "numpy<2")
"""

import argparse
import json
import sys
import time

import numpy as np

try:
    import torch
except ImportError:  # the baseline is optional
    torch = None

import edgewise

SHAPES = [(1_000_000, 16, 10_000), (1_000_000, 64, 10_000), (4_000_000, 16, 50_000), (1_000_000, 16, 100)]


def median_ms(fn, repeats):
    # torch and edgewise each bring an OpenMP runtime whose idle threads spin for a
    # while after a parallel region; let the other library's threads go to sleep
    # first so neither is timed against the other's spinning.
    time.sleep(0.05)
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def torch_memory(a):
    """`a` copied into memory torch allocated (64-byte aligned, as every torch CPU
    tensor is), viewed as NumPy. NumPy's own arrays are only 16-byte aligned: every
    gathered 128-byte row then straddles three cache lines instead of two (edgewise's
    spmm measured 1.2-1.4x slower on such features). Both libraries get this memory."""
    return torch.from_numpy(a).clone().numpy()


def uniform_offsets(S, M):
    return (np.arange(S + 1, dtype=np.int64) * M) // S


def power_law_offsets(S, M, rng, alpha=1.0):
    w = 1.0 / np.arange(1, S + 1) ** alpha
    rng.shuffle(w)
    off = np.concatenate([[0], np.round(np.cumsum(w) / w.sum() * M)]).astype(np.int64)
    off[-1] = M
    return off


def segment_cases(rng, repeats, records, name_filter):
    if name_filter and name_filter not in "segment_reduce":
        return
    for M, C, S in SHAPES:
        values = rng.uniform(-1, 1, size=(M, C)).astype(np.float32)
        for dist in ("uniform", "powerlaw"):
            offsets = uniform_offsets(S, M) if dist == "uniform" else power_law_offsets(S, M, rng)
            lengths = torch.from_numpy(np.diff(offsets))
            tv = torch.from_numpy(values)
            index = torch.repeat_interleave(torch.arange(S), lengths)
            for op, top in (("sum", "sum"), ("max", "max")):
                ew = median_ms(lambda: edgewise.segment_reduce(values, offsets, op=op), repeats)
                th = median_ms(lambda: torch.segment_reduce(tv, top, lengths=lengths, axis=0), repeats)
                rec = {"name": f"segment_reduce/{op}/{dist}/M={M},C={C},S={S}", "edgewise_ms": ew,
                       "torch_ms": th, "torch_op": "segment_reduce", "speedup": th / ew}
                records.append(rec)
                print(f"{rec['name']:<50} edgewise {ew:8.3f} ms  torch.segment_reduce {th:8.3f} ms  {th / ew:6.2f}x")
                if op == "sum":
                    out = torch.zeros(S, C)
                    ia = median_ms(lambda: out.zero_().index_add_(0, index, tv), repeats)
                    rec2 = {"name": rec["name"], "edgewise_ms": ew, "torch_ms": ia, "torch_op": "index_add_",
                            "speedup": ia / ew}
                    records.append(rec2)
                    print(f"{'':<50} {'':<20} torch.index_add_      {ia:8.3f} ms  {ia / ew:6.2f}x")


def galloping_cases(rng, repeats, records, name_filter):
    """Sorted float32 queries over 10M sorted values: edgewise.galloping_search (one
    segment, a batched lower_bound) vs torch.searchsorted (a binary search per query)."""
    if name_filter and name_filter not in "galloping_search":
        return
    N = 10_000_000
    values = (np.arange(N) + rng.uniform(0, 0.9, size=N)).astype(np.float32)
    tv = torch.from_numpy(values)
    for Q in (10_000_000, 1_000_000, 100_000, 10_000):
        queries = np.sort(rng.uniform(0, N, size=Q)).astype(np.float32)
        tq = torch.from_numpy(queries)
        got, word = edgewise.galloping_search(values, queries)
        assert word == 0 and np.array_equal(got, torch.searchsorted(tv, tq).numpy())
        ew = median_ms(lambda: edgewise.galloping_search(values, queries), repeats)
        th = median_ms(lambda: torch.searchsorted(tv, tq), repeats)
        rec = {"name": f"galloping_search/direct/N={N},Q={Q},T=32", "edgewise_ms": ew, "torch_ms": th,
               "torch_op": "searchsorted", "speedup": th / ew}
        records.append(rec)
        print(f"{rec['name']:<50} edgewise {ew:8.3f} ms  torch.searchsorted    {th:8.3f} ms  {th / ew:6.2f}x")
SPMM_SHAPES = [(100_000, 2_000_000, 64), (1_000_000, 10_000_000, 32)]


def spmm_cases(rng, repeats, records, name_filter):
    """edgewise.spmm sum vs torch.sparse.mm(A_csr, X) on power-law graphs (same CSR, same X)."""
    if name_filter and name_filter not in "spmm":
        return
    import warnings

    warnings.filterwarnings("ignore", message=".*[Ss]parse.*")  # torch's beta-state notices
    for N, E, C in SPMM_SHAPES:
        offsets = power_law_offsets(N, E, rng)  # destination in-degrees Zipf-like
        indices = rng.integers(0, N, size=E).astype(np.int64)  # sources uniform
        indices32 = indices.astype(np.int32)
        x = torch_memory(rng.uniform(-1, 1, size=(N, C)).astype(np.float32))
        weights = rng.uniform(-1, 1, size=E).astype(np.float32)
        tx = torch.from_numpy(x)
        for weighted in (False, True):
            w = weights if weighted else None
            values = torch.from_numpy(weights) if weighted else torch.ones(E)
            A = torch.sparse_csr_tensor(torch.from_numpy(offsets), torch.from_numpy(indices), values, size=(N, N))
            # Same answer up to float summation order (tolerance relative to the sum of |terms|).
            want = torch.sparse.mm(A, tx).numpy()
            got = edgewise.spmm(offsets, indices, x, weights=w)
            scale = edgewise.spmm(offsets, indices, np.abs(x), weights=None if w is None else np.abs(w))
            assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-5), f"spmm and torch.sparse.mm disagree at {N},{E},{C}"
            kind = "weighted" if weighted else "unweighted"
            name = f"spmm/sum/{kind}/powerlaw/N={N},E={E},C={C}"
            th = median_ms(lambda: torch.sparse.mm(A, tx), repeats)
            for label, idx in (("i64", indices), ("i32", indices32)):
                ew = median_ms(lambda: edgewise.spmm(offsets, idx, x, weights=w), repeats)
                rec = {"name": f"{name}/{label}", "edgewise_ms": ew, "torch_ms": th, "torch_op": "sparse.mm(csr)",
                       "speedup": th / ew}
                records.append(rec)
                print(f"{rec['name']:<58} edgewise {ew:8.2f} ms  torch.sparse.mm {th:8.2f} ms  {th / ew:6.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--json", help="write one record per comparison")
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    nn = parser.add_argument_group("torch_nn section (PyG layers vs edgewise.torch.nn layers)")
    nn.add_argument("--nn-nodes", type=int, default=NN_OPTIONS["nodes"], help="power-law graph nodes")
    nn.add_argument("--nn-edges", type=int, default=NN_OPTIONS["edges"], help="power-law graph edges")
    nn.add_argument("--nn-features", type=int, default=NN_OPTIONS["features"], help="input features")
    nn.add_argument("--nn-hidden", type=int, default=NN_OPTIONS["hidden"], help="hidden channels")
    nn.add_argument("--nn-epochs", type=int, default=NN_OPTIONS["epochs"], help="timed epochs per model")
    nn.add_argument("--nn-cora-seeds", type=int, default=NN_OPTIONS["cora_seeds"], help="Cora seeds (0: skip)")
    nn.add_argument("--nn-cora-epochs", type=int, default=NN_OPTIONS["cora_epochs"], help="Cora epochs per run")
    nn.add_argument("--nn-models", default=NN_OPTIONS["models"], help="comma list of gcn, sage")
    gat = parser.add_argument_group("gat_epoch section (2-layer GAT: PyG GATConv vs edgewise.torch.nn vs the engine)")
    gat.add_argument("--gat-epochs", type=int, default=GAT_OPTIONS["epochs"], help="timed epochs per model")
    gat.add_argument("--gat-dataset", default=GAT_OPTIONS["dataset"],
                     help="dataset name, path or rmat:N:E:F:K spec (default cora; a Cora-shaped R-MAT without it)")
    pyg = parser.add_argument_group("pyg_accelerate section (PyG models with and without accelerate())")
    pyg.add_argument("--pyg-nodes", type=int, default=PYG_OPTIONS["nodes"], help="R-MAT nodes")
    pyg.add_argument("--pyg-edges", type=int, default=PYG_OPTIONS["edges"], help="R-MAT edges")
    pyg.add_argument("--pyg-epochs", type=int, default=PYG_OPTIONS["epochs"], help="timed epochs per model and way")
    pyg.add_argument("--pyg-models", default=PYG_OPTIONS["models"], help="comma list of models")
    pyg.add_argument("--pyg-table-large", action="store_true", help="the layer table at the R-MAT size too")
    pyg.add_argument("--pyg-layers", default="", help="comma list of layer-table names (substrings) to time")
    het = parser.add_argument_group("hetero section (typed matmuls; PyG RGCNConv / to_hetero with and without "
                                    "accelerate())")
    het.add_argument("--hetero-rows", type=int, default=HETERO_OPTIONS["rows"], help="segment_matmul rows")
    het.add_argument("--hetero-types", default=HETERO_OPTIONS["types"], help="comma list of type counts")
    het.add_argument("--hetero-nodes", type=int, default=HETERO_OPTIONS["nodes"], help="RGCN R-MAT nodes")
    het.add_argument("--hetero-edges", type=int, default=HETERO_OPTIONS["edges"], help="RGCN R-MAT edges")
    het.add_argument("--hetero-papers", type=int, default=HETERO_OPTIONS["papers"],
                     help="papers of the mag-shaped graph (to_hetero)")
    het.add_argument("--hetero-epochs", type=int, default=HETERO_OPTIONS["epochs"], help="timed epochs each way")
    het.add_argument("--hetero-parts", default=HETERO_OPTIONS["parts"], help="comma list of matmul, rgcn, to_hetero")
    het.add_argument("--hetero-dtypes", default=HETERO_OPTIONS["dtypes"],
                     help="comma list of float32, bfloat16 (the typed-matmul rows)")
    het.add_argument("--hetero-accuracy-runs", type=int, default=HETERO_OPTIONS["accuracy_runs"],
                     help="seeds per model for the accuracy comparison (0: skip)")
    het.add_argument("--hetero-accuracy-papers", type=int, default=HETERO_OPTIONS["accuracy_papers"],
                     help="papers of the accuracy graph")
    het.add_argument("--hetero-accuracy-epochs", type=int, default=HETERO_OPTIONS["accuracy_epochs"],
                     help="training epochs per accuracy run")
    args = parser.parse_args()
    for key in ("rows", "nodes", "edges", "papers", "epochs", "accuracy_papers", "accuracy_epochs"):
        if getattr(args, "hetero_" + key) < 1:
            parser.error(f"--hetero-{key.replace('_', '-')} must be positive (got {getattr(args, 'hetero_' + key)})")
    if args.hetero_accuracy_runs < 0:
        parser.error(f"--hetero-accuracy-runs must be >= 0 (got {args.hetero_accuracy_runs})")
    try:
        if any(int(t) < 1 for t in args.hetero_types.split(",")):
            raise ValueError
    except ValueError:
        parser.error(f"--hetero-types takes a comma list of positive type counts (got {args.hetero_types!r})")
    if any(p not in ("matmul", "rgcn", "to_hetero") for p in args.hetero_parts.split(",")):
        parser.error(f"--hetero-parts takes a comma list of matmul, rgcn, to_hetero (got {args.hetero_parts!r})")
    if not args.hetero_dtypes or any(d not in MATMUL_DTYPES for d in args.hetero_dtypes.split(",")):
        parser.error(f"--hetero-dtypes takes a comma list of {', '.join(MATMUL_DTYPES)} (got {args.hetero_dtypes!r})")
    HETERO_OPTIONS.update({key: getattr(args, "hetero_" + key) for key in (
        "rows", "types", "nodes", "edges", "papers", "epochs", "parts", "accuracy_runs", "accuracy_papers",
        "accuracy_epochs", "dtypes")})
    for key in ("nodes", "edges", "epochs"):
        if getattr(args, "pyg_" + key) < 1:
            parser.error(f"--pyg-{key} must be positive (got {getattr(args, 'pyg_' + key)})")
    PYG_OPTIONS.update(nodes=args.pyg_nodes, edges=args.pyg_edges, epochs=args.pyg_epochs, models=args.pyg_models,
                       table_large=args.pyg_table_large, layers=args.pyg_layers)
    for key in ("nodes", "edges", "features", "hidden", "epochs", "cora_seeds", "cora_epochs"):
        value = getattr(args, "nn_" + key)
        if value < (0 if key == "cora_seeds" else 1):
            parser.error(f"--nn-{key.replace('_', '-')} must be positive (got {value})")
        NN_OPTIONS[key] = value
    if any(k not in ("gcn", "sage") for k in args.nn_models.split(",")):
        parser.error(f"--nn-models takes a comma list of gcn and sage (got {args.nn_models!r})")
    NN_OPTIONS["models"] = args.nn_models
    if args.gat_epochs < 1:
        parser.error(f"--gat-epochs must be positive (got {args.gat_epochs})")
    GAT_OPTIONS.update(epochs=args.gat_epochs, dataset=args.gat_dataset)
    if torch is None:
        print("compare_torch: PyTorch is not importable here; nothing to compare (install torch in your own "
              "environment to run the baseline).")
        return 0
    threads = torch.get_num_threads()
    print(f"compare_torch: torch {torch.__version__} ({threads} threads), edgewise {edgewise.__version__}")
    rng = np.random.default_rng(12345)
    repeats = 5 if args.quick else 20
    records = []
    for section in SECTIONS:
        section(rng, repeats, records, args.filter)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
        print(f"wrote {len(records)} records to {args.json}")
    return 0


def segment_tree_cases(rng, repeats, records, name_filter):
    """One prioritised-replay step: update 1024 priorities, draw 1024 indices.

    edgewise.SegmentTree (O((B + n) log N)) against what a PyTorch user writes:
    index assignment into a probability vector and torch.multinomial (O(N)).
    """
    if name_filter and name_filter not in "segment_tree":
        return
    batch = draws = 1024
    for capacity in (131_072, 500_000, 4_194_304):
        initial = rng.uniform(1e-3, 1.0, size=capacity).astype(np.float32)
        batches = [(rng.integers(0, capacity, size=batch), rng.uniform(1e-3, 1.0, size=batch).astype(np.float32))
                   for _ in range(16)]
        tree = edgewise.SegmentTree(capacity)
        tree.update(np.arange(capacity), initial)
        probs = torch.from_numpy(initial.copy())
        tbatches = [(torch.from_numpy(i), torch.from_numpy(p)) for i, p in batches]
        step = {"ew": 0, "th": 0}

        def ew_step():
            idx, pri = batches[step["ew"] % 16]
            tree.update(idx, pri)
            tree.sample(draws, step["ew"])
            step["ew"] += 1

        def th_step():
            idx, pri = tbatches[step["th"] % 16]
            probs[idx] = pri
            torch.multinomial(probs, draws, replacement=True)
            step["th"] += 1

        ew = median_ms(ew_step, repeats)
        th = median_ms(th_step, repeats)
        rec = {"name": f"segment_tree/update1024+sample1024/capacity={capacity}", "edgewise_ms": ew, "torch_ms": th,
               "torch_op": "index_put_+multinomial", "speedup": th / ew}
        records.append(rec)
        print(f"{rec['name']:<50} edgewise {ew:8.3f} ms  torch.multinomial     {th:8.3f} ms  {th / ew:6.2f}x")


def sort_rle_offsets_cases(rng, repeats, records, name_filter):
    """sort_by_key vs torch.sort(stable=True); run_length_encode / unique vs
    torch.unique_consecutive; offsets_from_keys vs torch.searchsorted and bincount+cumsum."""

    def wanted(op):
        return not name_filter or name_filter in op

    def report(name, ew, th, torch_op):
        rec = {"name": name, "edgewise_ms": ew, "torch_ms": th, "torch_op": torch_op, "speedup": th / ew}
        records.append(rec)
        print(f"{name:<50} edgewise {ew:8.3f} ms  {torch_op:<24} {th:8.3f} ms  {th / ew:6.2f}x")

    E = 10_000_000
    if wanted("sort_by_key"):
        for bits in (20, 40):
            keys = rng.integers(0, 2**bits, size=E, dtype=np.int64)
            tk = torch.from_numpy(keys)
            ew = median_ms(lambda: edgewise.sort_by_key(keys), repeats)
            th = median_ms(lambda: torch.sort(tk, stable=True), repeats)
            report(f"sort_by_key/permutation/int64,E=10M,keys<2^{bits}", ew, th, "sort(stable=True)")
    sorted_keys = np.sort(rng.integers(0, 1_000_000, size=E, dtype=np.int64))
    ts = torch.from_numpy(sorted_keys)
    if wanted("run_length_encode"):
        ew = median_ms(lambda: edgewise.run_length_encode(sorted_keys), repeats)
        th = median_ms(lambda: torch.unique_consecutive(ts, return_counts=True), repeats)
        report("run_length_encode/encode/int64,E=10M,runs~1M", ew, th, "unique_consecutive+counts")
    if wanted("unique"):
        ew = median_ms(lambda: edgewise.unique(sorted_keys), repeats)
        th = median_ms(lambda: torch.unique_consecutive(ts), repeats)
        report("run_length_encode/unique/int64,E=10M,runs~1M", ew, th, "unique_consecutive")
    if wanted("offsets_from_keys"):
        S = 1_000_000
        bounds = torch.arange(S + 1)
        ew = median_ms(lambda: edgewise.offsets_from_keys(sorted_keys, S), repeats)
        th = median_ms(lambda: torch.searchsorted(ts, bounds), repeats)
        report("offsets_from_keys/validated/int64,E=10M,S=1M", ew, th, "searchsorted")
        th2 = median_ms(lambda: torch.cumsum(torch.bincount(ts, minlength=S), 0), repeats)
        report("offsets_from_keys/validated/int64,E=10M,S=1M", ew, th2, "bincount+cumsum")


def scatter_cases(rng, repeats, records, name_filter):
    """scatter_reduce, uniformly random int64 index: sum vs index_add_, max + arg vs scatter_reduce(amax) (no arg)."""
    if name_filter and name_filter not in "scatter_reduce":
        return
    for M, C, S in SHAPES:
        values = rng.uniform(-1, 1, size=(M, C)).astype(np.float32)
        index = rng.integers(0, S, size=M, dtype=np.int64)
        tv, ti = torch.from_numpy(values), torch.from_numpy(index)
        ti_expanded = ti.view(-1, 1).expand(M, C)  # scatter_reduce wants an index shaped like src
        out = torch.zeros(S, C)
        rows = [
            ("sum", lambda: edgewise.scatter_reduce(values, index, S, op="sum"), "index_add_",
             lambda: out.zero_().index_add_(0, ti, tv)),
            ("max_arg", lambda: edgewise.scatter_reduce(values, index, S, op="max", return_arg=True),
             "scatter_reduce(amax)",
             lambda: torch.zeros(S, C).scatter_reduce(0, ti_expanded, tv, reduce="amax", include_self=False)),
        ]
        for variant, ew_fn, torch_op, torch_fn in rows:
            ew = median_ms(ew_fn, repeats)
            th = median_ms(torch_fn, repeats)
            rec = {"name": f"scatter_reduce/{variant}/random/M={M},C={C},S={S}", "edgewise_ms": ew, "torch_ms": th,
                   "torch_op": torch_op, "speedup": th / ew}
            records.append(rec)
            print(f"{rec['name']:<50} edgewise {ew:8.3f} ms  torch.{torch_op:<21} {th:8.3f} ms  {th / ew:6.2f}x")


def _train_step_ms(step, epochs):
    """Median wall time of `step` (forward + backward + optimizer) over `epochs` calls."""
    step()
    times = []
    for _ in range(epochs):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def gcn_epoch_cases(rng, repeats, records, name_filter):
    """A full GCN training epoch (forward + backward + Adam): edgewise vs PyG's GCNConv
    model on Cora (when the data directory has it), and vs a pure-PyTorch GCN
    (torch.sparse CSR products) on an R-MAT graph with 1M nodes, 10M edges, 64 features."""
    if name_filter and name_filter not in "gcn_epoch":
        return
    import torch.nn.functional as F

    quick = repeats < 20
    # --- Cora: PyG's GCN example model, dense features as PyG loads them.
    try:
        cora = edgewise.load_dataset("cora", features="dense")
    except Exception as error:  # no data directory: say so and go on
        print(f"gcn_epoch/cora: skipped ({str(error).splitlines()[0]})")
        cora = None
    try:
        from torch_geometric.nn import GCNConv
    except ImportError:
        GCNConv = None
        print("gcn_epoch/cora: torch_geometric is not importable; PyG baseline skipped")
    if cora is not None and GCNConv is not None:
        x = torch.from_numpy(cora["features"])
        x = x / x.sum(1, keepdim=True).clamp(min=1)  # NormalizeFeatures
        edge_index = torch.from_numpy(cora["edge_index"])
        y = torch.from_numpy(cora["labels"])
        train = torch.from_numpy(cora["train_idx"])

        class PygGCN(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = GCNConv(x.shape[1], 16, cached=True)
                self.conv2 = GCNConv(16, int(cora["num_classes"]), cached=True)

            def forward(self):
                h = F.dropout(x, 0.5, self.training)
                h = F.relu(self.conv1(h, edge_index))
                h = F.dropout(h, 0.5, self.training)
                return self.conv2(h, edge_index)

        torch.manual_seed(0)
        model = PygGCN()
        opt = torch.optim.Adam([dict(params=model.conv1.parameters(), weight_decay=5e-4),
                                dict(params=model.conv2.parameters(), weight_decay=0)], lr=0.01)

        def pyg_step():
            model.train()
            opt.zero_grad()
            loss = F.cross_entropy(model()[train], y[train])
            loss.backward()
            opt.step()

        epochs = 50 if quick else 200
        time.sleep(0.05)
        pyg_ms = _train_step_ms(pyg_step, epochs)
        time.sleep(0.05)
        ours = edgewise.train("cora", model="gcn", epochs=epochs)
        rec = {"name": "gcn_epoch/cora", "edgewise_ms": ours["epoch_ms_median"], "torch_ms": pyg_ms,
               "torch_op": "PyG GCNConv (dense x)", "speedup": pyg_ms / ours["epoch_ms_median"],
               "edgewise_test_acc": ours["test_acc"]}
        records.append(rec)
        print(f"{rec['name']:<50} edgewise {rec['edgewise_ms']:8.3f} ms  PyG GCNConv           {pyg_ms:8.3f} ms  "
              f"{rec['speedup']:6.2f}x")

    # --- R-MAT: a pure-PyTorch GCN (normalised adjacency as a sparse CSR tensor).
    n, e, f, k, hidden = (200_000, 2_000_000, 64, 16, 64) if quick else (1_000_000, 10_000_000, 64, 16, 64)
    g = edgewise.rmat_graph(n, e, seed=1, num_features=f, num_classes=k)
    ei = torch.from_numpy(g["edge_index"])
    loops = torch.arange(n)
    row = torch.cat([ei[1], loops])  # destination: rows of A (aggregation into dst)
    col = torch.cat([ei[0], loops])
    deg = torch.zeros(n).index_add_(0, row, torch.ones(row.numel()))
    w = deg[row].rsqrt() * deg[col].rsqrt()
    a = torch.sparse_coo_tensor(torch.stack([row, col]), w, (n, n)).coalesce().to_sparse_csr()
    x = torch.from_numpy(g["features"])
    y = torch.from_numpy(g["labels"])
    train = torch.from_numpy(g["train_idx"])
    torch.manual_seed(0)
    w1 = torch.nn.Parameter(torch.empty(f, hidden))
    w2 = torch.nn.Parameter(torch.empty(hidden, k))
    b1 = torch.nn.Parameter(torch.zeros(hidden))
    b2 = torch.nn.Parameter(torch.zeros(k))
    torch.nn.init.xavier_uniform_(w1)
    torch.nn.init.xavier_uniform_(w2)
    opt = torch.optim.Adam([w1, b1, w2, b2], lr=0.01)

    def torch_step():
        opt.zero_grad()
        h = F.dropout(x, 0.5)
        h = F.relu(torch.sparse.mm(a, h @ w1) + b1)
        h = F.dropout(h, 0.5)
        out = torch.sparse.mm(a, h @ w2) + b2
        F.cross_entropy(out[train], y[train]).backward()
        opt.step()

    epochs = 3 if quick else 10
    time.sleep(0.05)
    torch_ms = _train_step_ms(torch_step, epochs)
    time.sleep(0.05)
    spec = f"rmat:{n}:{e}:{f}:{k}"
    ours = edgewise.train(spec, model="gcn", epochs=epochs + 1, hidden=hidden, weight_decay=0.0)
    rec = {"name": f"gcn_epoch/rmat/N={n},E={e},F={f}", "edgewise_ms": ours["epoch_ms_median"], "torch_ms": torch_ms,
           "torch_op": "pure PyTorch GCN (torch.sparse.mm CSR)", "speedup": torch_ms / ours["epoch_ms_median"]}
    records.append(rec)
    print(f"{rec['name']:<50} edgewise {rec['edgewise_ms']:8.3f} ms  pure PyTorch GCN      {torch_ms:8.3f} ms  "
          f"{rec['speedup']:6.2f}x")


# Sizes of the torch_nn section (set from the command line in main()).
NN_OPTIONS = {"nodes": 1_000_000, "edges": 10_000_000, "features": 64, "hidden": 64, "classes": 16, "epochs": 5,
              "cora_seeds": 10, "cora_epochs": 200, "models": "gcn,sage"}


def _nn_model(kind, layers, in_dim, hidden, out_dim, dropout, input_dropout):
    """The same 2-layer PyTorch model over either layer library (PyG or edgewise.torch.nn)."""
    import torch.nn.functional as F

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            if kind == "gcn":
                self.conv1 = layers.GCNConv(in_dim, hidden, cached=True)
                self.conv2 = layers.GCNConv(hidden, out_dim, cached=True)
            else:
                self.conv1 = layers.SAGEConv(in_dim, hidden, aggr="mean")
                self.conv2 = layers.SAGEConv(hidden, out_dim, aggr="mean")

        def forward(self, x, edge_index):
            if input_dropout:
                x = dropout(x, 0.5, self.training)
            h = F.relu(self.conv1(x, edge_index))
            h = dropout(h, 0.5, self.training)
            return self.conv2(h, edge_index)

    return Net()


def _nn_train(model, data, epochs, weight_decay, lr=0.01):
    """Adam full-batch training; returns (median epoch ms, final test accuracy, losses)."""
    import torch.nn.functional as F

    x, ei, y, train, test = data
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    times, losses = [], []
    for _ in range(epochs):
        t0 = time.perf_counter()
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(model(x, ei)[train], y[train])
        loss.backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        acc = (model(x, ei).argmax(1)[test] == y[test]).float().mean().item()
    return float(np.median(times[1:] if len(times) > 1 else times)), acc, losses


def torch_nn_cases(rng, repeats, records, name_filter):
    """The same PyTorch model (2-layer GCN / GraphSAGE, Adam) built once from PyG layers
    and once from edgewise.torch.nn layers, in this process: epoch time (forward +
    backward + Adam) on a power-law (R-MAT) graph, and Cora test accuracy over seeds,
    with torch's dropout and with edgewise's Philox dropout."""
    if name_filter and name_filter not in "torch_nn":
        return
    try:
        import torch_geometric.nn as pyg_layers
    except ImportError:
        print("torch_nn: torch_geometric is not importable; section skipped")
        return
    import torch.nn.functional as F

    import edgewise.torch.nn as ew_layers

    o = NN_OPTIONS
    kinds = [k for k in o["models"].split(",") if k]
    ew_dropout = ew_layers.functional.dropout
    # --- epoch time on a power-law graph (no input dropout, as the floor is stated).
    g = edgewise.rmat_graph(o["nodes"], o["edges"], seed=1, num_features=o["features"], num_classes=o["classes"])
    data = tuple(torch.from_numpy(g[k]) for k in ("features", "edge_index", "labels", "train_idx", "test_idx"))
    n, e = g["num_nodes"], g["edge_index"].shape[1]
    for kind in kinds:
        row = {}
        variants = (("pyg", pyg_layers, F.dropout), ("edgewise+ew_dropout", ew_layers, ew_dropout),
                    ("edgewise", ew_layers, F.dropout))
        for label, layers, drop in variants:
            torch.manual_seed(0)
            model = _nn_model(kind, layers, o["features"], o["hidden"], o["classes"], drop, False)
            time.sleep(0.05)
            row[label], _, _ = _nn_train(model, data, o["epochs"] + 1, 0.0)
        for label in ("edgewise+ew_dropout", "edgewise"):
            rec = {"name": f"torch_nn/{kind}/rmat/N={n},E={e},F={o['features']},H={o['hidden']}/{label}",
                   "edgewise_ms": row[label], "torch_ms": row["pyg"], "torch_op": f"PyG {kind} model",
                   "speedup": row["pyg"] / row[label]}
            records.append(rec)
            print(f"{rec['name']:<72} {row[label]:9.1f} ms  PyG {row['pyg']:9.1f} ms  {rec['speedup']:6.2f}x per epoch")
    # --- Cora accuracy over seeds (PyG's GCN recipe: dropout 0.5 also on the input).
    if o["cora_seeds"] == 0:
        return
    try:
        cora = edgewise.load_dataset("cora", features="dense")
    except Exception as error:
        print(f"torch_nn/cora: skipped ({str(error).splitlines()[0]})")
        return
    x = torch.from_numpy(cora["features"])
    x = x / x.sum(1, keepdim=True).clamp(min=1)  # NormalizeFeatures
    data = (x,) + tuple(torch.from_numpy(cora[k]) for k in ("edge_index", "labels", "train_idx", "test_idx"))
    variants = (("pyg", pyg_layers, F.dropout), ("edgewise", ew_layers, F.dropout),
                ("edgewise+ew_dropout", ew_layers, ew_dropout))
    for kind in kinds:
        accs = {v[0]: [] for v in variants}
        ms = {v[0]: [] for v in variants}
        for seed in range(o["cora_seeds"]):
            for label, layers, drop in variants:
                torch.manual_seed(seed)
                model = _nn_model(kind, layers, x.shape[1], 16, int(cora["num_classes"]), drop, True)
                t, acc, _ = _nn_train(model, data, o["cora_epochs"], 5e-4)
                accs[label].append(acc)
                ms[label].append(t)
        for label in ("edgewise", "edgewise+ew_dropout"):
            pyg_ms, ew_ms = float(np.median(ms["pyg"])), float(np.median(ms[label]))
            rec = {"name": f"torch_nn/{kind}/cora/{label}", "edgewise_ms": ew_ms, "torch_ms": pyg_ms,
                   "torch_op": f"PyG {kind} model", "speedup": pyg_ms / ew_ms,
                   "edgewise_test_acc_mean": float(np.mean(accs[label])),
                   "pyg_test_acc_mean": float(np.mean(accs["pyg"])), "seeds": o["cora_seeds"]}
            records.append(rec)
            print(f"{rec['name']:<58} acc {100 * rec['edgewise_test_acc_mean']:5.1f}% (PyG "
                  f"{100 * rec['pyg_test_acc_mean']:5.1f}%, {o['cora_seeds']} seeds)  epoch {ew_ms:7.2f} ms vs "
                  f"{pyg_ms:7.2f} ms  {rec['speedup']:5.2f}x")

# Sizes of the gat_epoch section (set from the command line in main()).
GAT_OPTIONS = {"epochs": 100, "dataset": "cora"}


def gat_epoch_cases(rng, repeats, records, name_filter):
    """A 2-layer GAT training epoch (Velickovic et al.'s Cora model: 8 heads x 8 hidden,
    ELU, 1 output head, dropout 0.6 on inputs and attention, Adam lr 0.005, wd 5e-4)
    built once from PyG's GATConv and once from edgewise.torch.nn.GATConv, in this
    process on the same torch; plus the C++ engine's own GAT (edgewise.train) on the
    same data. Cora when the data directory has it, else a Cora-shaped R-MAT graph."""
    if name_filter and name_filter not in "gat_epoch":
        return
    try:
        import torch_geometric.nn as pyg_layers
    except ImportError:
        pyg_layers = None
        print("gat_epoch: torch_geometric is not importable; PyG baseline skipped")
    import torch.nn.functional as F

    import edgewise.torch.nn as ew_layers
    import edgewise.torch.nn.functional as ew_functional

    def load(spec):
        """(name, dataset dict with dense features) for a dataset name / path or rmat:N:E:F:K."""
        if spec.startswith("rmat:"):
            n, e, f, k = (int(v) for v in spec.split(":")[1:5])
            return f"rmat/N={n},E={e},F={f}", edgewise.rmat_graph(n, e, seed=1, num_features=f, num_classes=k)
        ds = edgewise.load_dataset(spec, features="dense")
        return ds["name"], ds

    spec = GAT_OPTIONS["dataset"]
    try:
        name, ds = load(spec)
    except Exception as error:
        print(f"gat_epoch/{spec}: not loadable ({str(error).splitlines()[0]}); using a Cora-shaped R-MAT graph")
        spec = "rmat:2708:10556:1433:7"
        name, ds = load(spec)
    x = torch.from_numpy(ds["features"])
    x = x / x.sum(1, keepdim=True).clamp(min=1)  # NormalizeFeatures
    data = (x,) + tuple(torch.from_numpy(ds[k]) for k in ("edge_index", "labels", "train_idx", "test_idx"))
    classes = int(ds["num_classes"])
    epochs = GAT_OPTIONS["epochs"]

    def gat(layers, dropout):
        class Gat(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = layers.GATConv(x.shape[1], 8, heads=8, dropout=0.6)
                self.conv2 = layers.GATConv(64, classes, heads=1, concat=False, dropout=0.6)

            def forward(self, h, edge_index):
                h = F.elu(self.conv1(dropout(h, 0.6, self.training), edge_index))
                return self.conv2(dropout(h, 0.6, self.training), edge_index)

        return Gat()

    # The model's own dropout on the [N, F] inputs is torch's (as in PyG's example) in the
    # first two rows; torch's CPU bernoulli_ then takes most of the epoch, so the third row
    # swaps in edgewise.torch.nn.functional.dropout, the engine's Philox mask.
    row = {}
    variants = [("edgewise.torch", ew_layers, F.dropout)]
    variants += [("pyg", pyg_layers, F.dropout)] if pyg_layers is not None else []
    variants += [("edgewise.torch+ew_dropout", ew_layers, ew_functional.dropout)]
    for label, layers, dropout in variants:
        torch.manual_seed(0)
        time.sleep(0.05)
        row[label] = _nn_train(gat(layers, dropout), data, epochs + 1, 5e-4, lr=0.005)[:2]
    time.sleep(0.05)
    engine = edgewise.train(spec, model="gat", epochs=epochs + 1, hidden=8, dropout=0.6, lr=0.005,
                            weight_decay=5e-4, select="last")
    row["engine"] = (engine["epoch_ms_median"], engine["test_acc"])
    name = f"gat_epoch/{name}"
    pyg_ms = row["pyg"][0] if "pyg" in row else float("nan")
    for label in ("edgewise.torch", "edgewise.torch+ew_dropout", "engine"):
        ms, acc = row[label]
        rec = {"name": f"{name}/{label}", "edgewise_ms": ms, "torch_ms": pyg_ms, "torch_op": "PyG GATConv model",
               "speedup": pyg_ms / ms, "edgewise_test_acc": acc, "epochs": epochs,
               "pyg_test_acc": row["pyg"][1] if "pyg" in row else None}
        records.append(rec)
        pyg_acc = "n/a" if rec["pyg_test_acc"] is None else f"{100 * rec['pyg_test_acc']:4.1f}%"
        print(f"{rec['name']:<40} {ms:8.2f} ms/epoch (test acc {100 * acc:4.1f}%)  PyG GATConv {pyg_ms:8.2f} "
              f"ms/epoch ({pyg_acc})  {rec['speedup']:5.2f}x")


# Each section: (rng, repeats, records, name_filter) -> appends records, prints rows.

def _relabel_csr(offsets, indices, x, new_to_old):
    """The CSR (by destination) and features of the graph with nodes relabelled:
    new node i is old node new_to_old[i]. Edges into one node keep their order."""
    n = offsets.size - 1
    old_to_new = np.empty(n, dtype=np.int64)
    old_to_new[new_to_old] = np.arange(n, dtype=np.int64)
    dst = old_to_new[np.repeat(np.arange(n), np.diff(offsets))]
    src = old_to_new[indices]
    order = np.argsort(dst, kind="stable")
    new_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=new_offsets[1:])
    return new_offsets, src[order], np.ascontiguousarray(x[new_to_old])


def dgl_cases(rng, repeats, records, name_filter):
    """A second peer: DGL's CPU SpMM (dgl.ops.copy_u_sum / copy_u_max) against
    edgewise.spmm on the same power-law graphs and features, in the original node
    order and after each locality ordering (both libraries get the relabelled graph),
    and DGL's GraphConv GCN epoch against edgewise.train on R-MAT. DGL is never a
    build or CI dependency: the section says so and is skipped when dgl is not
    importable (it runs in its own virtual environment with torch 2.2)."""
    if name_filter and name_filter not in "dgl":
        return
    try:
        import dgl
        import dgl.ops
    except Exception as error:  # ImportError, or a torch / dgl version mismatch
        print(f"dgl: skipped (dgl is not importable here: {str(error).splitlines()[0] if str(error) else error!r}); "
              "the module docstring says how to make a venv for it)")
        return
    print(f"dgl: DGL {dgl.__version__} on torch {torch.__version__}")
    quick = repeats < 20
    shapes = [(20_000, 400_000, 64), (100_000, 1_000_000, 32)] if quick else SPMM_SHAPES
    for N, E, C in shapes:
        offsets = power_law_offsets(N, E, rng)
        indices = rng.integers(0, N, size=E).astype(np.int64)
        x = torch_memory(rng.uniform(-1, 1, size=(N, C)).astype(np.float32))
        dst_old = np.repeat(np.arange(N), np.diff(offsets))
        for ordering in ("none", "degree", "rcm"):
            if ordering == "none":
                off, idx, xo = offsets, indices, x
            else:
                t0 = time.perf_counter()
                new_to_old = edgewise.node_ordering(N, indices, dst_old, ordering)
                off, idx, xo = _relabel_csr(offsets, indices, x, new_to_old)
                print(f"  (ordering {ordering}: {time.perf_counter() - t0:.2f} s)")
            idx32 = idx.astype(np.int32)
            dst = np.repeat(np.arange(N), np.diff(off))
            g = dgl.graph((torch.from_numpy(idx), torch.from_numpy(dst)), num_nodes=N)
            g.create_formats_()
            tx = torch.from_numpy(xo)
            for op in ("sum", "max"):
                dgl_op = dgl.ops.copy_u_sum if op == "sum" else dgl.ops.copy_u_max
                want = dgl_op(g, tx).numpy()
                got = edgewise.spmm(off, idx32, xo, op=op)
                if op == "max":  # rows without in-edges: we write 0; DGL's fill differs between versions
                    has_edges = np.diff(off) > 0
                    assert np.array_equal(got[has_edges], want[has_edges]), \
                        f"spmm max and dgl copy_u_max disagree at {N},{E},{C}"
                else:
                    scale = edgewise.spmm(off, idx32, np.abs(xo))
                    assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-5), \
                        f"spmm and dgl copy_u_sum disagree at {N},{E},{C}"
                th = median_ms(lambda: dgl_op(g, tx), repeats)
                ew = median_ms(lambda: edgewise.spmm(off, idx32, xo, op=op), repeats)
                rec = {"name": f"dgl/spmm/{op}/powerlaw/N={N},E={E},C={C}/order={ordering}", "edgewise_ms": ew,
                       "dgl_ms": th, "dgl_op": f"copy_u_{op}", "speedup": th / ew}
                records.append(rec)
                print(f"{rec['name']:<62} edgewise {ew:8.2f} ms  dgl copy_u_{op} {th:8.2f} ms  {th / ew:6.2f}x")

    # --- GCN epoch: DGL GraphConv (norm="both", self loops) vs edgewise.train on R-MAT.
    import torch.nn.functional as F
    from dgl.nn import GraphConv

    n, e, f, k, hidden = (200_000, 2_000_000, 64, 16, 64) if quick else (1_000_000, 10_000_000, 64, 16, 64)
    data = edgewise.rmat_graph(n, e, seed=1, num_features=f, num_classes=k)
    ei = torch.from_numpy(data["edge_index"])
    g = dgl.add_self_loop(dgl.graph((ei[0], ei[1]), num_nodes=n))
    g.create_formats_()
    x = torch.from_numpy(data["features"])
    y = torch.from_numpy(data["labels"])
    train = torch.from_numpy(data["train_idx"])
    torch.manual_seed(0)
    conv1, conv2 = GraphConv(f, hidden, norm="both"), GraphConv(hidden, k, norm="both")
    opt = torch.optim.Adam(list(conv1.parameters()) + list(conv2.parameters()), lr=0.01)

    def dgl_step():
        opt.zero_grad()
        h = F.relu(conv1(g, F.dropout(x, 0.5)))
        out = conv2(g, F.dropout(h, 0.5))
        F.cross_entropy(out[train], y[train]).backward()
        opt.step()

    epochs = 3 if quick else 5
    time.sleep(0.05)
    dgl_ms = _train_step_ms(dgl_step, epochs)
    for ordering in ("none", "rcm"):
        time.sleep(0.05)
        ours = edgewise.train(f"rmat:{n}:{e}:{f}:{k}", model="gcn", epochs=epochs + 1, hidden=hidden,
                              weight_decay=0.0, reorder=ordering)
        rec = {"name": f"dgl/gcn_epoch/rmat/N={n},E={e},F={f}/order={ordering}",
               "edgewise_ms": ours["epoch_ms_median"], "dgl_ms": dgl_ms, "dgl_op": "DGL GraphConv GCN (original order)",
               "speedup": dgl_ms / ours["epoch_ms_median"]}
        records.append(rec)
        print(f"{rec['name']:<62} edgewise {rec['edgewise_ms']:8.2f} ms  DGL GraphConv  {dgl_ms:8.2f} ms  "
              f"{rec['speedup']:6.2f}x")

from compare_torch_scatter_api import scatter_api_cases  # noqa: E402  (the section lives in its own file)
from compare_pyg_accelerate import OPTIONS as PYG_OPTIONS, pyg_accelerate_cases  # noqa: E402
from compare_hetero import MATMUL_DTYPES, OPTIONS as HETERO_OPTIONS, hetero_cases  # noqa: E402

SECTIONS = [segment_cases, scatter_cases, sort_rle_offsets_cases, segment_tree_cases, gcn_epoch_cases, galloping_cases, spmm_cases,
            torch_nn_cases, gat_epoch_cases, dgl_cases, scatter_api_cases, pyg_accelerate_cases,
            hetero_cases]

if __name__ == "__main__":
    sys.exit(main())
