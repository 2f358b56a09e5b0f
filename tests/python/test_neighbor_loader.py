"""edgewise.torch.loader.NeighborLoader: PyG's fields field for field against an
independent breadth-first reference (full neighbourhoods), valid random samples
(edges exist, fan-outs, no repeats, disjoint, weighted, temporal), determinism across
thread counts, every node / edge attribute sliced, PyG models (trim_to_layer too)
training on the batches, and bad input named before any thread starts."""

import pytest

torch = pytest.importorskip("torch")
ewt = pytest.importorskip("edgewise.torch")

from edgewise.torch.loader import NeighborLoader, SampledData  # noqa: E402

try:
    import torch_geometric
    from torch_geometric.data import Data
except Exception:  # without PyG the loader yields SampledData; the tests below still run
    torch_geometric = None
    Data = None

needs_pyg = pytest.mark.skipif(torch_geometric is None, reason="needs torch_geometric (tools/install_deps.sh --test "
                                                               "installs it; CI always has it)")

N, E, F = 120, 900, 5


def _graph(seed=0, n=N, e=E, pyg=True):
    g = torch.Generator().manual_seed(seed)
    # Skewed destinations (a few hubs), duplicates and self-loops included.
    dst = (torch.rand(e, generator=g) ** 3 * n).long().clamp_(max=n - 1)
    src = torch.randint(0, n, (e,), generator=g)
    edge_index = torch.stack([src, dst])
    fields = dict(x=torch.randn(n, F, generator=g), y=torch.randint(0, 4, (n,), generator=g),
                  train_mask=torch.rand(n, generator=g) < 0.5, edge_attr=torch.randn(e, 3, generator=g),
                  edge_index=edge_index)
    if pyg and Data is not None:
        return Data(**fields)
    fields["num_nodes"] = n
    return fields


def _reference_full(edge_index, seeds, hops):
    """PyG's layout by definition: seeds first, then each hop's new sources in the order
    met (frontier order, then edge-list order); edges grouped by hop."""
    src, dst = edge_index.tolist()
    in_edges = {}
    for k, v in enumerate(dst):
        in_edges.setdefault(v, []).append(k)
    node = list(seeds)
    local = {v: i for i, v in enumerate(node)}
    row, col, edge, ns_nodes, ns_edges = [], [], [], [len(seeds)], []
    begin, end = 0, len(node)
    for _ in range(hops):
        e0 = len(row)
        for i in range(begin, end):
            for k in in_edges.get(node[i], []):
                u = src[k]
                if u not in local:
                    local[u] = len(node)
                    node.append(u)
                row.append(local[u])
                col.append(i)
                edge.append(k)
        ns_nodes.append(len(node) - end)
        ns_edges.append(len(row) - e0)
        begin, end = end, len(node)
    return node, row, col, edge, ns_nodes, ns_edges


@pytest.mark.parametrize("pyg", [True, False])
def test_full_neighbourhood_batches_match_pygs_layout_field_for_field(pyg):
    data = _graph(1, pyg=pyg)
    fields = data if isinstance(data, dict) else dict(data.items())
    seeds = torch.tensor([7, 0, 55, 3, 99, 18, 2])
    loader = NeighborLoader(data, num_neighbors=[-1, -1], input_nodes=seeds, batch_size=3, num_threads=2)
    assert len(loader) == 3
    batches = list(loader)
    assert len(batches) == 3
    for b, batch in enumerate(batches):
        if pyg and Data is not None:
            assert isinstance(batch, Data)
        else:
            assert isinstance(batch, SampledData)
        want_ids = list(range(3 * b, min(3 * b + 3, 7)))
        assert batch.input_id.tolist() == want_ids
        assert batch.batch_size == len(want_ids)
        node, row, col, edge, ns_nodes, ns_edges = _reference_full(fields["edge_index"], seeds[want_ids].tolist(), 2)
        assert batch.n_id.tolist() == node
        assert batch.edge_index.tolist() == [row, col]
        assert batch.e_id.tolist() == edge
        assert batch.num_sampled_nodes == ns_nodes
        assert batch.num_sampled_edges == ns_edges
        assert torch.equal(batch.x, fields["x"][batch.n_id])
        assert torch.equal(batch.y, fields["y"][batch.n_id])
        assert torch.equal(batch.train_mask, fields["train_mask"][batch.n_id])
        assert batch.train_mask.dtype == torch.bool
        assert torch.equal(batch.edge_attr, fields["edge_attr"][batch.e_id])
        assert batch.batch is None if (pyg and Data is not None) else batch["batch"] is None


def _check_valid(batch, fields, num_neighbors, replace=False, disjoint=False):
    ei = fields["edge_index"]
    n_id, e_id = batch.n_id, batch.e_id
    # Every sampled edge exists, with the endpoints its ids say.
    assert torch.equal(ei[0][e_id], n_id[batch.edge_index[0]])
    assert torch.equal(ei[1][e_id], n_id[batch.edge_index[1]])
    if not disjoint:
        assert n_id.unique().numel() == n_id.numel()
    deg = torch.bincount(ei[1], minlength=fields["x"].size(0))
    hop_of = torch.repeat_interleave(torch.arange(len(batch.num_sampled_nodes)),
                                     torch.tensor(batch.num_sampled_nodes))
    per_dst = torch.bincount(batch.edge_index[1], minlength=n_id.numel())
    for i in range(n_id.numel()):
        h = int(hop_of[i])
        if h >= len(num_neighbors):
            assert per_dst[i] == 0
            continue
        d, c = int(deg[n_id[i]]), num_neighbors[h]
        want = d if c < 0 else ((c if d else 0) if replace else min(c, d))
        assert per_dst[i] == want
        if not replace:
            mine = e_id[batch.edge_index[1] == i]
            assert mine.unique().numel() == mine.numel()
    assert sum(batch.num_sampled_edges) == e_id.numel()


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("disjoint", [False, True])
def test_random_samples_are_valid(replace, disjoint):
    data = _graph(2)
    fields = dict(data.items()) if not isinstance(data, dict) else data
    loader = NeighborLoader(data, num_neighbors=[4, 2, 3], batch_size=16, shuffle=True, replace=replace,
                            disjoint=disjoint, seed=3)
    seen = []
    for batch in loader:
        _check_valid(batch, fields, [4, 2, 3], replace, disjoint)
        seen += batch.n_id[:batch.batch_size].tolist()
        if disjoint:
            assert batch.batch.numel() == batch.n_id.numel()
            assert torch.equal(batch.batch[batch.edge_index[0]], batch.batch[batch.edge_index[1]])
    assert sorted(seen) == list(range(N))


def test_same_seed_gives_the_same_batches_at_one_and_two_threads_overlapped_or_not():
    data = _graph(3)
    runs = []
    for threads, overlap in ((1, True), (2, True), (2, False)):
        loader = NeighborLoader(data, num_neighbors=[5, 5], batch_size=10, shuffle=True, seed=11,
                                num_threads=threads, prefetch=1, overlap=overlap)
        runs.append([(b.n_id.clone(), b.e_id.clone(), b.input_id.clone()) for b in loader])
        second = [b.input_id.clone() for b in loader]  # the next epoch: another order
        assert any(not torch.equal(a, b[2]) for a, b in zip(second, runs[-1]))
    for other in runs[1:]:
        assert len(other) == len(runs[0])
        for (n1, e1, i1), (n2, e2, i2) in zip(runs[0], other):
            assert torch.equal(n1, n2) and torch.equal(e1, e2) and torch.equal(i1, i2)


def test_weighted_sampling_never_takes_zero_weights_and_follows_the_weights():
    # A star: node 0 receives from 1..6 with weights 0, 1, 2, 3, 4, 5.
    ei = torch.stack([torch.arange(1, 7), torch.zeros(6, dtype=torch.long)])
    w = torch.arange(6, dtype=torch.float32)
    data = {"edge_index": ei, "w": w, "x": torch.zeros(7, 1), "num_nodes": 7}
    counts = torch.zeros(6)
    loader = NeighborLoader(data, num_neighbors=[1], input_nodes=torch.tensor([0]), weight_attr="w", seed=5)
    for _ in range(3000):
        for b in loader:
            counts[b.e_id] += 1
    assert counts[0] == 0
    expected = 3000 * w[1:] / w.sum()
    chi2 = float(((counts[1:] - expected) ** 2 / expected).sum())
    assert chi2 < 18.5  # 4 degrees of freedom, P = 0.001


def test_temporal_sampling_respects_seed_times():
    n = 40
    g = torch.Generator().manual_seed(4)
    ei = torch.stack([torch.randint(0, n, (400,), generator=g), torch.randint(0, n, (400,), generator=g)])
    t = torch.randint(0, 100, (n,), generator=g)
    data = _graph(4, n=n, e=400)
    data["edge_index"] = ei
    data["edge_attr"] = torch.randn(400, 3)
    data["time"] = t
    for strategy in ("uniform", "last"):
        loader = NeighborLoader(data, num_neighbors=[3, 2], batch_size=8, time_attr="time",
                                temporal_strategy=strategy, seed=1)
        for batch in loader:
            assert batch.batch is not None  # temporal sampling is disjoint, as in PyG
            assert torch.equal(batch.seed_time, t[batch.n_id[:batch.batch_size]])
            seed_of_node = batch.batch
            # every node's time is at most its own seed's time
            assert bool((t[batch.n_id] <= batch.seed_time[seed_of_node]).all())


def test_induced_subgraph_holds_every_edge_among_the_sampled_nodes():
    data = _graph(5)
    ei = data["edge_index"]
    loader = NeighborLoader(data, num_neighbors=[3, 2], batch_size=10, subgraph_type="induced", seed=2)
    for batch in loader:
        inside = torch.isin(ei[0], batch.n_id) & torch.isin(ei[1], batch.n_id)
        assert sorted(batch.e_id.tolist()) == inside.nonzero().view(-1).tolist()


@needs_pyg
def test_pyg_and_edgewise_models_train_on_the_batches_and_trim_to_layer_agrees():
    from torch_geometric.nn import SAGEConv
    from torch_geometric.utils import trim_to_layer
    from edgewise.torch import nn as ewnn

    torch.manual_seed(0)
    data = _graph(6)

    class Model(torch.nn.Module):
        def __init__(self, conv):
            super().__init__()
            self.convs = torch.nn.ModuleList([conv(F, 16), conv(16, 4)])

        def forward(self, x, edge_index, ns_nodes=None, ns_edges=None):
            for i, conv in enumerate(self.convs):
                if ns_nodes is not None:
                    x, edge_index, _ = trim_to_layer(i, ns_nodes, ns_edges, x, edge_index)
                x = conv(x, edge_index)
                if i == 0:
                    x = x.relu()
            return x

    for conv in (SAGEConv, ewnn.SAGEConv):
        model = Model(conv)
        opt = torch.optim.Adam(model.parameters(), lr=0.02)
        loader = NeighborLoader(data, num_neighbors=[5, 5], batch_size=32, shuffle=True, seed=0)
        first = last = None
        for epoch in range(15):
            total = 0.0
            for batch in loader:
                opt.zero_grad()
                out = model(batch.x, batch.edge_index)[:batch.batch_size]
                loss = torch.nn.functional.cross_entropy(out, batch.y[:batch.batch_size])
                loss.backward()
                opt.step()
                total += float(loss)
            first = total if first is None else first
            last = total
        assert last < 0.8 * first, (conv, first, last)
        with torch.no_grad():
            for batch in NeighborLoader(data, num_neighbors=[5, 5], batch_size=32, seed=1):
                full = model(batch.x, batch.edge_index)[:batch.batch_size]
                trimmed = model(batch.x, batch.edge_index, batch.num_sampled_nodes,
                                batch.num_sampled_edges)[:batch.batch_size]
                torch.testing.assert_close(trimmed, full, rtol=1e-5, atol=1e-5)


def test_transform_applies_to_every_batch():
    data = _graph(7)
    seen = []
    loader = NeighborLoader(data, num_neighbors=[2], batch_size=50, transform=lambda b: seen.append(1) or b)
    assert len(list(loader)) == len(loader) == 3 and len(seen) == 3


def test_breaking_early_and_starting_again_is_clean():
    data = _graph(8)
    loader = NeighborLoader(data, num_neighbors=[5, 5], batch_size=4, num_threads=2, seed=9)
    it = iter(loader)
    next(it)
    next(it)
    again = list(loader)  # a new pass ends the old one
    assert len(again) == len(loader)
    with pytest.raises(StopIteration):
        next(it)


@pytest.mark.parametrize("kwargs, needle", [
    (dict(num_neighbors=[]), "num_neighbors"),
    (dict(num_neighbors=[2, -2]), r"num_neighbors\[1\]"),
    (dict(num_neighbors={("a", "b", "c"): [1]}), "heterogeneous"),
    (dict(num_neighbors=[2], input_nodes=torch.tensor([0, N])), r"input_nodes\[1\] \(120\)"),
    (dict(num_neighbors=[2], input_nodes=torch.tensor([-1])), r"input_nodes\[0\]"),
    (dict(num_neighbors=[2], input_nodes=torch.tensor([3, 4, 3])), r"input_nodes\[2\] \(3\) repeats"),
    (dict(num_neighbors=[2], input_nodes=torch.ones(N - 1, dtype=torch.bool)), "mask"),
    (dict(num_neighbors=[2], input_nodes=torch.tensor([0.5])), "input_nodes"),
    (dict(num_neighbors=[2], time_attr="missing"), "time_attr 'missing'"),
    (dict(num_neighbors=[2], time_attr="x"), "time_attr 'x'"),
    (dict(num_neighbors=[2], weight_attr="y"), "weight_attr 'y'"),
    (dict(num_neighbors=[2], weight_attr="missing"), "weight_attr 'missing'"),
    (dict(num_neighbors=[2], batch_size=0), "batch_size"),
    (dict(num_neighbors=[2], num_threads=0), "num_threads"),
    (dict(num_neighbors=[2], overlap="no"), "overlap"),
    (dict(num_neighbors=[2], subgraph_type="bidirected"), "subgraph_type"),
    (dict(num_neighbors=[2], temporal_strategy="newest"), "temporal_strategy"),
    (dict(num_neighbors=[2], input_time=torch.tensor([1])), "input_time"),
])
def test_bad_arguments_raise_value_errors_naming_them(kwargs, needle):
    data = _graph(9)
    with pytest.raises(ValueError, match=needle):
        NeighborLoader(data, **kwargs)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_bad_edge_weights_are_named(bad):
    data = _graph(10)
    data["w"] = torch.rand(E)
    data["w"][17] = bad
    with pytest.raises(ValueError, match=r"weight_attr 'w'\[17\]"):
        NeighborLoader(data, num_neighbors=[2], weight_attr="w")


def test_unknown_keyword_is_a_type_error_and_dataloader_knobs_are_accepted():
    data = _graph(11)
    with pytest.raises(TypeError, match="colate_fn"):
        NeighborLoader(data, num_neighbors=[2], colate_fn=None)
    NeighborLoader(data, num_neighbors=[2], num_workers=4, persistent_workers=True)


@pytest.mark.parametrize("pyg", [True, False])
def test_pin_memory_pins_every_tensor_where_torch_has_cuda_and_warns_elsewhere(pyg):
    data = _graph(21, pyg=pyg)
    plain = list(NeighborLoader(data, num_neighbors=[3, 2], batch_size=16, seed=4))
    if torch.cuda.is_available():
        pinned = list(NeighborLoader(data, num_neighbors=[3, 2], batch_size=16, seed=4, pin_memory=True))
    else:
        with pytest.warns(UserWarning, match="pin_memory=True but torch finds no CUDA device"):
            loader = NeighborLoader(data, num_neighbors=[3, 2], batch_size=16, seed=4, pin_memory=True)
        assert loader.pin_memory is False
        pinned = list(loader)
    assert len(pinned) == len(plain)
    for a, b in zip(plain, pinned):
        for key in ("x", "y", "edge_attr", "edge_index", "n_id", "e_id"):
            assert torch.equal(a[key], b[key]), key
            assert b[key].is_pinned() == torch.cuda.is_available(), key
    with pytest.raises(ValueError, match="pin_memory must be True or False"):
        NeighborLoader(data, num_neighbors=[2], pin_memory="yes")


def test_a_graph_changed_while_iterating_is_an_error():
    data = _graph(12)
    loader = NeighborLoader(data, num_neighbors=[2], batch_size=10)
    it = iter(loader)
    next(it)
    data["edge_index"][0, 0] = 1  # in place
    with pytest.raises(ValueError, match="edge_index changed"):
        next(it)
    with pytest.raises(ValueError, match="edge_index changed"):
        iter(loader)
    data2 = _graph(13)
    loader2 = NeighborLoader(data2, num_neighbors=[2], batch_size=10)
    data2["edge_index"] = data2["edge_index"].flip(0)  # replaced
    with pytest.raises(ValueError, match="edge_index changed"):
        list(loader2)


_CTRL_C_CHILD = r"""
import os, signal, threading, time
import torch
from edgewise.torch.loader import NeighborLoader

n, e = 500_000, 10_000_000
g = torch.Generator().manual_seed(0)
data = dict(x=torch.randn(n, 4, generator=g), edge_index=torch.randint(0, n, (2, e), generator=g), num_nodes=n)
# overlap=False: nothing is sampled until next() waits, so the first batch starts inside next().
loader = NeighborLoader(data, num_neighbors=[-1, -1, -1], batch_size=n // 4, num_threads=1, overlap=False)
threading.Timer(0.15, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
t0 = time.perf_counter()
try:
    next(iter(loader))
    outcome = "finished"
except KeyboardInterrupt:
    outcome = "interrupted"
latency = time.perf_counter() - t0 - 0.15
t0 = time.perf_counter()
batch = next(iter(loader))  # the loader works again after the interruption
batch_seconds = time.perf_counter() - t0
print(outcome, latency, batch_seconds, batch.batch_size)
"""


def test_ctrl_c_while_next_waits_raises_keyboard_interrupt_promptly_and_the_loader_recovers():
    """SIGINT in the middle of a batch that takes about a second reaches the loop within
    the pipeline's polling interval (0.1 s), not when the batch is done: the sampling
    thread drops the batch at its next cancel check. The pipeline stops and a new epoch
    of the same loader works. In a child process, so the signal goes to no other test."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _CTRL_C_CHILD], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    outcome, latency, batch_seconds, batch_size = proc.stdout.split()
    latency, batch_seconds = float(latency), float(batch_seconds)
    assert outcome == "interrupted"
    assert int(batch_size) == 125_000
    # The batch must take long enough to tell a prompt interruption from one that
    # waited for the batch: waiting would give latency ~ batch_seconds - 0.15.
    assert batch_seconds > 0.4, f"the batch took only {batch_seconds:.2f} s; the test cannot tell"
    assert latency < batch_seconds / 2, f"KeyboardInterrupt {latency:.2f} s after SIGINT, batch {batch_seconds:.2f} s"


def test_loaders_of_one_graph_share_its_csc():
    data = _graph(14)
    a = NeighborLoader(data, num_neighbors=[2], input_nodes=torch.arange(10))
    b = NeighborLoader(data, num_neighbors=[3], input_nodes=torch.arange(10, 20))
    assert a.graph is b.graph


# --- PyG's own loaders on Edgewise's sampler ------------------------------------


def _sorted_graph(seed):
    """A graph whose edge list is sorted by destination. PyG's loader told so
    (is_sorted=True) keeps each node's in-edges in input order, as ours does always
    (PyG otherwise sorts with an unstable sort: any order within a node is its layout),
    so the two must agree exactly."""
    data = _graph(seed)
    ei, attr = data.edge_index, data.edge_attr
    order = torch.from_numpy(__import__("numpy").lexsort((ei[0].numpy(), ei[1].numpy())))
    data.edge_index, data.edge_attr = ei[:, order].contiguous(), attr[order].contiguous()
    return data


@needs_pyg
def test_accelerate_makes_pygs_neighbor_loader_run_and_agree_field_for_field():
    import torch_geometric.typing as pyg_typing
    from torch_geometric.loader import NeighborLoader as PygNeighborLoader
    from torch_geometric.sampler.neighbor_sampler import NeighborSampler as PygSampler
    import edgewise.torch.pyg as ewpyg

    data = _sorted_graph(20)
    plain_sample = PygSampler.__dict__["_sample"]
    if not (pyg_typing.WITH_PYG_LIB or pyg_typing.WITH_TORCH_SPARSE):
        with pytest.raises(ImportError, match="pyg-lib"):
            next(iter(PygNeighborLoader(data, num_neighbors=[2], batch_size=4)))
    with ewpyg.accelerated():
        assert PygSampler.__dict__["_sample"] is not plain_sample
        with warnings_ignored():
            theirs = list(PygNeighborLoader(data, num_neighbors=[-1, -1], batch_size=16, is_sorted=True))
            random = list(PygNeighborLoader(data, num_neighbors=[3, 2], batch_size=16, shuffle=True))
    assert PygSampler.__dict__["_sample"] is plain_sample  # restored
    ours = list(NeighborLoader(data, num_neighbors=[-1, -1], batch_size=16))
    assert len(theirs) == len(ours)
    for a, b in zip(theirs, ours):
        for key in ("n_id", "e_id", "edge_index", "x", "y", "edge_attr", "train_mask", "input_id"):
            assert torch.equal(a[key], b[key]), key
        for key in ("num_sampled_nodes", "num_sampled_edges", "batch_size"):
            assert a[key] == b[key], key
    fields = dict(data.items())
    for batch in random:
        _check_valid(batch, fields, [3, 2])


@pytest.mark.parametrize("disjoint", [False, True])
def test_bidirectional_batches_hold_every_sampled_edge_both_ways_once(disjoint):
    data = _graph(21)
    fields = dict(data.items()) if Data is not None else data
    ei, edge_attr = fields["edge_index"], fields["edge_attr"]
    kwargs = dict(num_neighbors=[4, 3], batch_size=10, shuffle=True, seed=5, disjoint=disjoint)
    plain = list(NeighborLoader(data, **kwargs))
    both = list(NeighborLoader(data, subgraph_type="bidirectional", **kwargs))
    assert len(plain) == len(both)
    for a, b in zip(plain, both):
        assert torch.equal(a.n_id, b.n_id) and torch.equal(a.x, b.x)
        # PyG drops the per-hop counts (None: a PyG Data then holds no such key).
        assert getattr(b, "num_sampled_nodes", None) is None and getattr(b, "num_sampled_edges", None) is None
        pairs = {(int(u), int(v)) for u, v in a.edge_index.t()}
        expected = sorted(pairs | {(v, u) for u, v in pairs}, key=lambda p: (p[1], p[0]))
        assert [tuple(map(int, e)) for e in b.edge_index.t()] == expected
        # Each edge's id is a sampled edge joining its endpoints, in one direction or the
        # other, and its attributes are that edge's.
        sampled = set(a.e_id.tolist())
        for (u, v), k in zip(b.edge_index.t().tolist(), b.e_id.tolist()):
            assert k in sampled
            ends = (int(b.n_id[u]), int(b.n_id[v]))
            assert ends in ((int(ei[0, k]), int(ei[1, k])), (int(ei[1, k]), int(ei[0, k])))
        assert torch.equal(b.edge_attr, edge_attr[b.e_id])


@needs_pyg
def test_bidirectional_matches_pygs_own_loader_field_for_field():
    from torch_geometric.loader import NeighborLoader as PygNeighborLoader
    import edgewise.torch.pyg as ewpyg

    data = _sorted_graph(22)
    with ewpyg.accelerated(), warnings_ignored():
        theirs = list(PygNeighborLoader(data, num_neighbors=[-1, -1], batch_size=16, is_sorted=True,
                                        subgraph_type="bidirectional"))
    ours = list(NeighborLoader(data, num_neighbors=[-1, -1], batch_size=16, subgraph_type="bidirectional"))
    assert len(theirs) == len(ours)
    for a, b in zip(theirs, ours):
        for key in ("n_id", "edge_index", "x", "input_id"):
            assert torch.equal(a[key], b[key]), key
        assert torch.equal(a.edge_attr, data.edge_attr[a.e_id]) and torch.equal(b.edge_attr, data.edge_attr[b.e_id])
        for key in ("num_sampled_nodes", "num_sampled_edges"):
            assert key not in a and key not in b, key


class warnings_ignored:
    """PyG warns that sampling without pyg-lib is deprecated; with accelerate() it is not."""

    def __enter__(self):
        import warnings
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


@needs_pyg
def test_edgewise_neighbor_sampler_is_a_pyg_base_sampler_for_node_and_link_loaders():
    from torch_geometric.loader import LinkLoader, NodeLoader
    from torch_geometric.sampler import BaseSampler
    import edgewise.torch.pyg as ewpyg

    data = _graph(21)
    fields = dict(data.items())
    sampler = ewpyg.NeighborSampler(data, num_neighbors=[4, 3])
    assert isinstance(sampler, BaseSampler)
    torch.manual_seed(0)
    first = [b.e_id for b in NodeLoader(data, node_sampler=sampler, batch_size=20)]
    torch.manual_seed(0)
    again = [b.e_id for b in NodeLoader(data, node_sampler=sampler, batch_size=20)]
    assert all(torch.equal(a, b) for a, b in zip(first, again))  # torch's seed fixes the draws
    for batch in NodeLoader(data, node_sampler=sampler, batch_size=20):
        _check_valid(batch, fields, [4, 3])
    disjoint = ewpyg.NeighborSampler(data, num_neighbors=[2, 2], disjoint=True)
    for batch in NodeLoader(data, node_sampler=disjoint, batch_size=20):
        assert batch.batch is not None
        assert torch.equal(batch.batch[batch.edge_index[0]], batch.batch[batch.edge_index[1]])
    label_index = data.edge_index[:, :64]
    for batch in LinkLoader(data, link_sampler=sampler, edge_label_index=label_index, batch_size=16,
                            neg_sampling="binary"):
        assert batch.edge_label_index.size(1) == batch.edge_label.numel() == 32
        _check_valid(batch, fields, [4, 3])
        # the positive label edges are edges of the graph, in local ids
        pos = batch.n_id[batch.edge_label_index[:, batch.edge_label == 1]]
        assert torch.equal(pos, label_index[:, batch.input_id])


@needs_pyg
def test_pyg_temporal_and_weighted_sampling_through_edgewise():
    import edgewise.torch.pyg as ewpyg
    from torch_geometric.loader import NodeLoader

    data = _graph(22)
    data.time = torch.randint(0, 50, (N,))
    data.w = torch.rand(E)
    for strategy in ("uniform", "last"):
        sampler = ewpyg.NeighborSampler(data, num_neighbors=[3, 3], time_attr="time", temporal_strategy=strategy)
        for batch in NodeLoader(data, node_sampler=sampler, batch_size=25):
            seed_time = data.time[batch.n_id[:batch.batch_size]]
            assert bool((data.time[batch.n_id] <= seed_time[batch.batch]).all())
    weighted = ewpyg.NeighborSampler(data, num_neighbors=[3], weight_attr="w")
    for batch in NodeLoader(data, node_sampler=weighted, batch_size=25):
        _check_valid(batch, dict(data.items()), [3])


@needs_pyg
def test_link_neighbor_loader_samples_around_label_edges_with_negatives():
    from edgewise.torch.loader import LinkNeighborLoader

    data = _graph(23)
    fields = dict(data.items())
    label_index = data.edge_index[:, 100:164]
    torch.manual_seed(1)
    loader = LinkNeighborLoader(data, num_neighbors=[3, 2], edge_label_index=label_index, batch_size=16,
                                neg_sampling_ratio=1.0, shuffle=True)
    seen = []
    for batch in loader:
        _check_valid(batch, fields, [3, 2])
        assert batch.edge_label.numel() == batch.edge_label_index.size(1) == 32
        pos = batch.edge_label_index[:, batch.edge_label == 1]
        assert torch.equal(batch.n_id[pos], label_index[:, batch.input_id])
        seen += batch.input_id.tolist()
    assert sorted(seen) == list(range(64))
    with pytest.raises(ValueError, match="heterogeneous"):
        LinkNeighborLoader(data, num_neighbors={("a", "to", "b"): [1]}, edge_label_index=label_index)


def test_replaced_attributes_are_read_on_the_next_pass():
    data = _graph(24)
    loader = NeighborLoader(data, num_neighbors=[2], batch_size=40, seed=0)
    first = next(iter(loader))
    assert torch.equal(first.x, data["x"][first.n_id])
    data["x"] = data["x"] * 2  # a new tensor
    data["z"] = torch.arange(N)  # a new node attribute
    again = next(iter(loader))
    assert torch.equal(again.x, data["x"][again.n_id])
    assert torch.equal(again.z, again.n_id)


def test_no_input_nodes_is_an_empty_epoch_and_one_seed_works():
    data = _graph(25)
    empty = NeighborLoader(data, num_neighbors=[3], input_nodes=torch.zeros(N, dtype=torch.bool))
    assert len(empty) == 0 and list(empty) == []
    one = list(NeighborLoader(data, num_neighbors=[-1], input_nodes=torch.tensor([0]), batch_size=7))
    assert len(one) == 1 and one[0].batch_size == 1 and one[0].n_id[0] == 0
    fields = data if isinstance(data, dict) else dict(data.items())
    assert one[0].e_id.numel() == int((fields["edge_index"][1] == 0).sum())  # node 0 is the hub: every in-edge


def test_edge_level_time_needs_input_time():
    data = _graph(26)
    data["t"] = torch.arange(E)
    with pytest.raises(ValueError, match="input_time"):
        NeighborLoader(data, num_neighbors=[2], time_attr="t")
    loader = NeighborLoader(data, num_neighbors=[2, 2], time_attr="t", input_nodes=torch.arange(10),
                            input_time=torch.full((10,), 400), batch_size=5)
    fields = data if isinstance(data, dict) else dict(data.items())
    for batch in loader:
        assert bool((fields["t"][batch.e_id] <= 400).all())
        assert torch.equal(batch.seed_time, torch.full((5,), 400))
