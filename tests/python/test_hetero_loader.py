"""edgewise.torch.loader.NeighborLoader on HeteroData: PyG's HeteroData layout field for
field against an independent hop-by-hop reference (full neighbourhoods; disjoint,
temporal by node and by edge time, zero weights), valid random samples (edges exist,
per-edge-type fanouts, no repeats), weighted draws in proportion, temporal 'last',
every attribute sliced, determinism, a to_hetero model training on the batches, and
bad input named."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("edgewise.torch")
pyg = pytest.importorskip("torch_geometric")

from torch_geometric.data import HeteroData  # noqa: E402

from edgewise.torch.loader import HeteroNeighborLoader, NeighborLoader  # noqa: E402

SIZES = {"paper": 60, "author": 30, "field": 5}
RELATIONS = [("paper", "cites", "paper", 240), ("author", "writes", "paper", 150),
             ("paper", "rev_writes", "author", 150), ("field", "has", "paper", 70)]


def _graph(seed=0):
    g = torch.Generator().manual_seed(seed)
    data = HeteroData()
    for t, n in SIZES.items():
        data[t].x = torch.randn(n, 4, generator=g)
    data["paper"].y = torch.randint(0, 3, (SIZES["paper"],), generator=g)
    data["paper"].train_mask = torch.rand(SIZES["paper"], generator=g) < 0.6
    for src, rel, dst, m in RELATIONS:
        # Skewed destinations and duplicate edges.
        d = (torch.rand(m, generator=g) ** 2 * SIZES[dst]).long().clamp_(max=SIZES[dst] - 1)
        s = torch.randint(0, SIZES[src], (m,), generator=g)
        data[src, rel, dst].edge_index = torch.stack([s, d])
        data[src, rel, dst].edge_attr = torch.randn(m, 2, generator=g)
    data["author", "affiliated", "field"].edge_index = torch.empty(2, 0, dtype=torch.long)  # no edges
    return data


def _reference(data, seeds, hops, disjoint=False, node_time=None, edge_time=None, seed_time=None, weight=None):
    """Full-fanout sample from the definition: per hop, per edge type, per frontier node
    of its destination type in local order, its in-edges in input order; disjoint keys
    local ids by (seed, node); an edge is skipped when its weight is 0 or its time
    (edge_time, else node_time of its source) is after its seed's."""
    node = {t: [] for t in data.node_types}
    batch = {t: [] for t in data.node_types}
    local = {t: {} for t in data.node_types}
    for i, v in enumerate(seeds):
        node["paper"].append(v)
        batch["paper"].append(i)
        local["paper"][(i if disjoint else 0, v)] = i
    rows = {e: [] for e in data.edge_types}
    cols = {e: [] for e in data.edge_types}
    eids = {e: [] for e in data.edge_types}
    counts_n = {t: [len(node[t])] for t in data.node_types}
    counts_e = {e: [] for e in data.edge_types}
    begin = {t: 0 for t in data.node_types}
    end = {t: len(node[t]) for t in data.node_types}
    for _ in range(hops):
        for e in data.edge_types:
            src, _, dst = e
            ei = data[e].edge_index.tolist()
            before = len(rows[e])
            for i in range(begin[dst], end[dst]):
                b = batch[dst][i] if disjoint else 0
                for k, (s, d) in enumerate(zip(*ei)):
                    if d != node[dst][i]:
                        continue
                    if weight is not None and e in weight and weight[e][k] <= 0:
                        continue
                    t = None
                    if edge_time is not None and e in edge_time:
                        t = int(edge_time[e][k])
                    elif node_time is not None and src in node_time:
                        t = int(node_time[src][s])
                    if t is not None and t > seed_time[b]:
                        continue
                    if (b, s) not in local[src]:
                        local[src][(b, s)] = len(node[src])
                        node[src].append(s)
                        batch[src].append(b)
                    rows[e].append(local[src][(b, s)])
                    cols[e].append(i)
                    eids[e].append(k)
            counts_e[e].append(len(rows[e]) - before)
        for t in data.node_types:
            begin[t], end[t] = end[t], len(node[t])
            counts_n[t].append(end[t] - begin[t])
    return node, rows, cols, eids, counts_n, counts_e, batch


def _expect_batch(batch, data, ref, disjoint, perm=None):
    """batch against _reference's sample; perm: per edge type, the input id of each
    edge position the reference read (PyG's CSC permutation), when not the identity."""
    node, rows, cols, eids, counts_n, counts_e, batch_of = ref
    for t in data.node_types:
        assert batch[t].n_id.tolist() == node[t], t
        assert torch.equal(batch[t].x, data[t].x[batch[t].n_id])
        assert batch[t].num_sampled_nodes == counts_n[t]
        if disjoint:
            assert batch[t].batch.tolist() == batch_of[t], t
        else:
            assert "batch" not in batch[t]
    for e in data.edge_types:
        assert batch[e].edge_index.tolist() == [rows[e], cols[e]], e
        order = (perm or {}).get(e)
        assert batch[e].e_id.tolist() == (eids[e] if order is None else [int(order[k]) for k in eids[e]]), e
        if "edge_attr" in data[e]:
            assert torch.equal(batch[e].edge_attr, data[e].edge_attr[batch[e].e_id])
        assert batch[e].num_sampled_edges == counts_e[e]


@pytest.mark.parametrize("hops", [1, 2, 3])
def test_full_fanout_matches_reference_field_for_field(hops):
    data = _graph(1)
    loader = NeighborLoader(data, num_neighbors=[-1] * hops, input_nodes=("paper", data["paper"].train_mask),
                            batch_size=7, seed=3)
    assert isinstance(loader, HeteroNeighborLoader)
    seeds_all = data["paper"].train_mask.nonzero().view(-1)
    assert len(loader) == -(-seeds_all.numel() // 7)
    seen = 0
    for b, batch in enumerate(loader):
        assert isinstance(batch, HeteroData)
        seeds = seeds_all[b * 7:(b + 1) * 7].tolist()
        node, rows, cols, eids, counts_n, counts_e, _ = _reference(data, seeds, hops)
        assert batch["paper"].batch_size == len(seeds)
        assert batch["paper"].input_id.tolist() == list(range(b * 7, b * 7 + len(seeds)))
        for t in data.node_types:
            assert batch[t].n_id.tolist() == node[t], t
            assert torch.equal(batch[t].x, data[t].x[batch[t].n_id])
            assert batch[t].num_sampled_nodes == counts_n[t]
        assert torch.equal(batch["paper"].y, data["paper"].y[batch["paper"].n_id])
        for e in data.edge_types:
            assert batch[e].edge_index.tolist() == [rows[e], cols[e]], e
            assert batch[e].e_id.tolist() == eids[e]
            assert batch[e].num_sampled_edges == counts_e[e]
            if "edge_attr" in data[e]:
                assert torch.equal(batch[e].edge_attr, data[e].edge_attr[batch[e].e_id])
        seen += len(seeds)
    assert seen == seeds_all.numel()


def _timed_graph(seed, level):
    data = _graph(seed)
    g = torch.Generator().manual_seed(seed + 100)
    if level == "node":
        for t in ("paper", "author"):  # "field" has no times: its edges are never filtered
            data[t].time = torch.randint(0, 50, (SIZES[t],), generator=g)
    else:
        for e in data.edge_types:
            if e[1] != "has":  # one edge type without times
                data[e].time = torch.randint(0, 50, (data[e].edge_index.size(1),), generator=g)
    return data


@pytest.mark.parametrize("mode", ["disjoint", "node_time", "node_time_input", "edge_time_input", "weights"])
def test_full_fanout_options_match_reference(mode):
    data = _timed_graph(8, "edge" if mode.startswith("edge") else "node")
    seeds_all = torch.tensor([3, 17, 3, 40, 8, 8, 55, 21, 0, 33, 12])  # repeats: disjoint grows each
    kwargs = dict(disjoint=True)
    input_time = torch.randint(10, 60, (seeds_all.numel(),), generator=torch.Generator().manual_seed(1))
    weight = None
    if mode.startswith("node_time") or mode.startswith("edge_time"):
        kwargs = dict(time_attr="time")  # disjoint by itself, as in PyG
        if mode.endswith("input"):
            kwargs["input_time"] = input_time
    if mode == "weights":
        g = torch.Generator().manual_seed(2)
        weight = {}
        for e in data.edge_types:
            if e[1] == "has":
                continue  # drawn uniformly
            w = torch.rand(data[e].edge_index.size(1), generator=g, dtype=torch.float64)
            w[w < 0.3] = 0  # never drawn
            data[e].w = w
            weight[e] = w.tolist()
        kwargs = dict(weight_attr="w")
        seeds_all = seeds_all.unique()  # shared subgraphs: distinct seeds
    loader = NeighborLoader(data, num_neighbors=[-1, -1], input_nodes=("paper", seeds_all), batch_size=4, **kwargs)
    disjoint = mode != "weights"
    for b, batch in enumerate(loader):
        seeds = seeds_all[b * 4:(b + 1) * 4].tolist()
        times = None
        node_time = edge_time = None
        if "time" in mode:
            node_time = {t: data[t].time.tolist() for t in data.node_types if "time" in data[t]}
            edge_time = {e: data[e].time.tolist() for e in data.edge_types if "time" in data[e]}
            times = input_time[b * 4:(b + 1) * 4].tolist() if mode.endswith("input") else \
                [node_time["paper"][v] for v in seeds]
            assert batch["paper"].seed_time.tolist() == times
        else:
            assert "seed_time" not in batch["paper"]  # PyG drops attributes set to None
        ref = _reference(data, seeds, 2, disjoint=disjoint, node_time=node_time, edge_time=edge_time,
                         seed_time=times, weight=weight)
        _expect_batch(batch, data, ref, disjoint)


def test_weighted_draws_follow_the_weights():
    data = HeteroData()
    data["paper"].x = torch.zeros(1, 1)
    data["author"].x = torch.zeros(3, 1)
    data["author", "writes", "paper"].edge_index = torch.tensor([[0, 1, 2], [0, 0, 0]])
    data["author", "writes", "paper"].w = torch.tensor([1.0, 3.0, 0.0])
    seeds = torch.zeros(4000, dtype=torch.long)  # one paper, 4000 independent draws (disjoint)
    for replace in (False, True):
        loader = NeighborLoader(data, num_neighbors=[1], input_nodes=("paper", seeds), batch_size=4000,
                                weight_attr="w", disjoint=True, replace=replace, seed=11)
        batch = next(iter(loader))
        drawn = batch["author"].n_id
        assert drawn.numel() == 4000 and not bool((drawn == 2).any())  # zero weight: never
        share = float((drawn == 1).double().mean())
        assert abs(share - 0.75) < 0.03, share  # 3 : 1 (4 sigma ~ 0.027)


def test_temporal_last_takes_the_newest_eligible():
    data = HeteroData()
    data["paper"].x = torch.zeros(3, 1)
    data["paper"].time = torch.tensor([5, 5, 5])
    data["author"].x = torch.zeros(5, 1)
    data["author"].time = torch.tensor([9, 1, 4, 6, 3])  # unsorted in input order
    data["author", "writes", "paper"].edge_index = torch.tensor([[0, 1, 2, 3, 4, 4], [0, 0, 0, 0, 0, 1]])
    loader = NeighborLoader(data, num_neighbors=[2], input_nodes=("paper", torch.tensor([0, 1, 2])),
                            batch_size=3, time_attr="time", temporal_strategy="last")
    batch = next(iter(loader))
    ei = batch["author", "writes", "paper"].edge_index
    picked = batch["author"].n_id[ei[0]]
    # paper 0 (time 5): eligible authors 1 (1), 2 (4), 4 (3): the newest two, oldest first.
    assert picked[ei[1] == 0].tolist() == [4, 2]
    assert picked[ei[1] == 1].tolist() == [4]
    assert batch["author"].batch.tolist() == [0, 0, 1]
    with pytest.raises(ValueError, match="temporal_strategy 'newest'"):
        NeighborLoader(data, num_neighbors=[2], input_nodes="paper", time_attr="time", temporal_strategy="newest")


@pytest.mark.parametrize("replace", [False, True])
def test_random_samples_respect_per_edge_type_fanouts(replace):
    data = _graph(2)
    fanouts = {("paper", "cites", "paper"): [3, 2], ("author", "writes", "paper"): [2, 1],
               "paper__rev_writes__author": [4, 0], ("field", "has", "paper"): [1, 1],
               ("author", "affiliated", "field"): [2, 2]}
    loader = NeighborLoader(data, num_neighbors=fanouts, input_nodes="paper", batch_size=16, replace=replace,
                            shuffle=True, seed=5)
    names = {"__".join(e): e for e in data.edge_types}
    want = {names[k] if isinstance(k, str) else k: v for k, v in fanouts.items()}
    for batch in loader:
        for t in data.node_types:
            n_id = batch[t].n_id
            assert n_id.unique().numel() == n_id.numel()
            assert sum(batch[t].num_sampled_nodes) == n_id.numel()
        for e in data.edge_types:
            src, _, dst = e
            ei = batch[e].edge_index
            global_pairs = torch.stack([batch[src].n_id[ei[0]], batch[dst].n_id[ei[1]]])
            assert torch.equal(global_pairs, data[e].edge_index[:, batch[e].e_id])
            # First hop: each seed gets min(fanout, degree) in-edges (fanout with replacement).
            hop0 = batch[e].num_sampled_edges[0]
            if dst == "paper":
                cols = ei[1, :hop0]
                for i in range(batch["paper"].batch_size):
                    deg = int((data[e].edge_index[1] == batch["paper"].n_id[i]).sum())
                    k = int((cols == i).sum())
                    expect = 0 if deg == 0 else want[e][0] if replace else min(want[e][0], deg)
                    assert k == expect, (e, i)
                    if not replace:
                        ids = batch[e].e_id[:hop0][cols == i]
                        assert ids.unique().numel() == ids.numel()
            else:
                assert hop0 == 0  # no seeds of that type


def test_epochs_are_reproducible_and_threads_do_not_matter():
    data = _graph(3)
    a = NeighborLoader(data, num_neighbors=[2, 2], input_nodes="paper", batch_size=8, shuffle=True, seed=9,
                       num_threads=1)
    b = NeighborLoader(data, num_neighbors=[2, 2], input_nodes="paper", batch_size=8, shuffle=True, seed=9,
                       num_threads=2, prefetch=1)
    for _ in range(2):
        for x, y in zip(a, b):
            for t in data.node_types:
                assert torch.equal(x[t].n_id, y[t].n_id)
            for e in data.edge_types:
                assert torch.equal(x[e].edge_index, y[e].edge_index)
    first = [batch["paper"].n_id for batch in a]
    second = [batch["paper"].n_id for batch in a]
    assert any(not torch.equal(p, q) for p, q in zip(first, second))  # a new epoch reshuffles


def test_pin_memory_pins_the_typed_batches_where_torch_has_cuda():
    data = _graph(5)
    kwargs = dict(num_neighbors=[2, 2], input_nodes="paper", batch_size=8, seed=2)
    plain = list(NeighborLoader(data, **kwargs))
    if torch.cuda.is_available():
        pinned = list(NeighborLoader(data, pin_memory=True, **kwargs))
    else:
        with pytest.warns(UserWarning, match="pin_memory=True but torch finds no CUDA device"):
            pinned = list(NeighborLoader(data, pin_memory=True, **kwargs))
    for a, b in zip(plain, pinned):
        for t in data.node_types:
            assert torch.equal(a[t].x, b[t].x)
            assert b[t].x.is_pinned() == torch.cuda.is_available()
        for e in data.edge_types:
            assert torch.equal(a[e].edge_index, b[e].edge_index)


def test_drop_last_and_transform():
    data = _graph(4)
    loader = NeighborLoader(data, num_neighbors=[1], input_nodes=("paper", torch.arange(10)), batch_size=4,
                            drop_last=True, transform=lambda d: ("seen", d))
    out = list(loader)
    assert len(loader) == 2 and len(out) == 2 and out[0][0] == "seen"


def test_to_hetero_sage_trains_on_batches():
    from torch_geometric.nn import SAGEConv, to_hetero

    data = _graph(5)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = SAGEConv((-1, -1), 16)
            self.conv2 = SAGEConv((-1, -1), 3)

        def forward(self, x, edge_index):
            return self.conv2(self.conv1(x, edge_index).relu(), edge_index)

    torch.manual_seed(0)
    model = to_hetero(Net(), data.metadata(), aggr="sum")
    loader = NeighborLoader(data, num_neighbors=[5, 5], input_nodes="paper", batch_size=20, seed=1)
    with torch.no_grad():
        model(data.x_dict, data.edge_index_dict)  # lazy shapes
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(15):
        for batch in loader:
            opt.zero_grad()
            out = model(batch.x_dict, batch.edge_index_dict)["paper"][:batch["paper"].batch_size]
            loss = torch.nn.functional.cross_entropy(out, batch["paper"].y[:batch["paper"].batch_size])
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("kwargs, needle", [
    (dict(input_nodes=None), "input_nodes of HeteroData must be a node type"),
    (dict(input_nodes="venue"), "node type 'venue'"),
    (dict(input_nodes=("paper", torch.tensor([0, 60]))), "input_nodes[1] (60)"),
    (dict(input_nodes=("paper", torch.tensor([1, 1]))), "repeats"),
    (dict(num_neighbors={("paper", "cites", "paper"): [2]}), "no entry for edge type"),
    (dict(num_neighbors={("paper", "x", "paper"): [2]}), "does not have"),
    (dict(num_neighbors={("paper", "cites", "paper"): [2], ("author", "writes", "paper"): [2, 2],
                         ("paper", "rev_writes", "author"): [2], ("field", "has", "paper"): [2],
                         ("author", "affiliated", "field"): [2]}), "same number of hops"),
    (dict(num_neighbors=[-2]), "num_neighbors[0] (-2)"),
    (dict(time_attr="time"), "time_attr 'time' is neither a node-level nor an edge-level attribute"),
    (dict(weight_attr="w"), "weight_attr 'w' is not an edge-level attribute of any edge type"),
    (dict(weight_attr="edge_attr"), "edge_attr must be a 1-D floating-point tensor"),
    (dict(time_attr="train_mask"), "data['paper'].train_mask must be a 1-D integer tensor with 60 entries"),
    (dict(input_time=torch.zeros(60, dtype=torch.long)), "input_time needs time_attr"),
    (dict(subgraph_type="induced", disjoint=True), "subgraph_type 'induced' with disjoint subgraphs"),
    (dict(subgraph_type="sideways"), "subgraph_type 'sideways' must be"),
    (dict(batch_size=0), "batch_size (0)"),
])
def test_bad_arguments_are_named(kwargs, needle):
    data = _graph(6)
    args = dict(num_neighbors=[2], input_nodes="paper")
    args.update(kwargs)
    with pytest.raises(ValueError) as info:
        NeighborLoader(data, **args)
    assert needle in str(info.value)


def _pairs(edge_index, n_src, n_dst):
    return set((edge_index[0] * n_dst + edge_index[1]).tolist()) if edge_index.numel() else set()


def test_bidirectional_batches_hold_each_sampled_edge_both_ways():
    """Full neighbourhoods, 2 hops: the bidirectional batch has the directional batch's
    nodes; 'cites' (paper -> paper, no reverse type) holds every sampled edge both
    ways; 'writes' and 'rev_writes' hold the union of both samples, each the other's
    transpose; 'has' (no reverse type) keeps its sample, as PyG's to_bidirectional."""
    data = _graph(30)
    seeds = torch.tensor([3, 17, 40, 41])
    kwargs = dict(num_neighbors=[-1, -1], input_nodes=("paper", seeds), batch_size=4)
    (one,) = list(NeighborLoader(data, **kwargs))
    with pytest.warns(UserWarning, match="does not seem to have a reverse edge type"):  # PyG's, for 'has'
        (both,) = list(NeighborLoader(data, subgraph_type="bidirectional", **kwargs))
    for t in data.node_types:
        assert torch.equal(one[t].n_id, both[t].n_id)
    n = {t: both[t].n_id.numel() for t in data.node_types}
    cites = ("paper", "cites", "paper")
    sampled = one[cites].edge_index
    want = _pairs(sampled, n["paper"], n["paper"]) | _pairs(sampled.flip(0), n["paper"], n["paper"])
    assert _pairs(both[cites].edge_index, n["paper"], n["paper"]) == want
    writes, rev = ("author", "writes", "paper"), ("paper", "rev_writes", "author")
    union = _pairs(one[writes].edge_index, n["author"], n["paper"]) | \
        _pairs(one[rev].edge_index.flip(0), n["author"], n["paper"])
    assert _pairs(both[writes].edge_index, n["author"], n["paper"]) == union
    assert torch.equal(both[rev].edge_index, both[writes].edge_index.flip(0))
    has = ("field", "has", "paper")
    assert torch.equal(both[has].edge_index, one[has].edge_index)
    assert "e_id" not in both[cites] and "e_id" in both[has]
    assert len(union) > len(_pairs(one[writes].edge_index, n["author"], n["paper"]))  # the merge added edges


def test_bad_times_and_weights_are_named():
    data = _timed_graph(9, "node")
    with pytest.raises(ValueError, match=r"input_time must be a 1-D integer tensor with one entry per input node \(60"):
        NeighborLoader(data, num_neighbors=[2], input_nodes="paper", time_attr="time", input_time=torch.zeros(3))
    with pytest.raises(ValueError, match="node type 'field' has no 'time'; pass input_time"):
        NeighborLoader(data, num_neighbors=[2], input_nodes="field", time_attr="time")
    data["paper", "cites", "paper"].time = torch.zeros(240, dtype=torch.long)
    with pytest.raises(ValueError, match="holds both node-level and edge-level times"):
        NeighborLoader(data, num_neighbors=[2], input_nodes="paper", time_attr="time")
    edge_timed = _timed_graph(9, "edge")
    with pytest.raises(ValueError, match="is edge-level: the seeds' times must come as input_time"):
        NeighborLoader(edge_timed, num_neighbors=[2], input_nodes="paper", time_attr="time")
    data = _graph(9)
    data["paper", "cites", "paper"].w = torch.ones(240)
    data["paper", "cites", "paper"].w[7] = -1
    with pytest.raises(ValueError, match=r"data\[\('paper', 'cites', 'paper'\)\]\.w\[7\] \(-1.0\) must be finite"):
        NeighborLoader(data, num_neighbors=[2], input_nodes="paper", weight_attr="w")


def test_bad_edge_index_is_named():
    data = _graph(7)
    data["paper", "cites", "paper"].edge_index[0, 3] = 99
    with pytest.raises(ValueError, match=r"paper__cites__paper: edge_index\[0\]\[3\] \(99\)"):
        NeighborLoader(data, num_neighbors=[2], input_nodes="paper")


def test_homogeneous_data_still_gets_the_homogeneous_loader():
    from torch_geometric.data import Data

    data = Data(x=torch.randn(5, 2), edge_index=torch.tensor([[0, 1], [1, 2]]))
    loader = NeighborLoader(data, num_neighbors=[1], batch_size=2)
    assert type(loader) is NeighborLoader


def _in_csc_order(data, sampler):
    """data with each edge type's edges in the order of PyG's CSC for it (sampler.perm),
    so the reference's "input order" is the order pyg-lib reads the edges in."""
    ordered = data.clone()
    for e in data.edge_types:
        perm = sampler.perm.get(e) if sampler.perm is not None else None
        if perm is not None:
            ordered[e].edge_index = data[e].edge_index[:, perm]
            if "time" in data[e]:
                ordered[e].time = data[e].time[perm]
    return ordered


@pytest.mark.parametrize("mode", ["plain", "disjoint", "node_time", "edge_time"])
def test_pygs_own_loader_samples_heterodata_on_edgewise_field_for_field(mode):
    """accelerate() and edgewise.torch.pyg.NeighborSampler take PyG's typed sampling
    (pyg-lib's hetero_neighbor_sample) too: PyG's own NeighborLoader on HeteroData,
    without pyg-lib, against the reference on the edges in PyG's CSC order (temporal
    sampling is disjoint, as in PyG)."""
    import torch_geometric.loader as pyg_loader

    import edgewise.torch.pyg as ewpyg

    data = _timed_graph(6, "edge") if mode == "edge_time" else _timed_graph(6, "node")
    if mode in ("plain", "disjoint"):
        for t in data.node_types:
            if "time" in data[t]:
                del data[t].time
    disjoint = mode != "plain"
    kwargs = dict(num_neighbors=[-1, -1], input_nodes="paper", batch_size=9)
    kwargs.update(time_attr="time") if "time" in mode else kwargs.update(disjoint=disjoint)
    if mode == "edge_time":
        kwargs["input_time"] = torch.randint(10, 60, (SIZES["paper"],), generator=torch.Generator().manual_seed(3))
    sampler_kwargs = {k: v for k, v in kwargs.items() if k in ("num_neighbors", "time_attr", "disjoint")}
    sampler = ewpyg.NeighborSampler(data, **sampler_kwargs)
    ordered = _in_csc_order(data, sampler)
    with ewpyg.accelerated():
        accelerated = list(pyg_loader.NeighborLoader(data, **kwargs))
    direct = list(pyg_loader.NeighborLoader(data, neighbor_sampler=sampler, **kwargs))
    assert len(accelerated) == len(direct) == -(-SIZES["paper"] // 9)
    node_time = {t: data[t].time.tolist() for t in data.node_types if "time" in data[t]} or None
    edge_time = {e: ordered[e].time.tolist() for e in data.edge_types if "time" in data[e]} or None
    for b, (x, y) in enumerate(zip(accelerated, direct)):
        seeds = list(range(b * 9, min(SIZES["paper"], (b + 1) * 9)))
        times = None
        if mode == "node_time":
            times = [node_time["paper"][v] for v in seeds]
        elif mode == "edge_time":
            times = kwargs["input_time"][seeds].tolist()
        ref = _reference(ordered, seeds, 2, disjoint=disjoint, node_time=node_time, edge_time=edge_time,
                         seed_time=times)
        for batch in (x, y):
            _expect_batch(batch, data, ref, disjoint, perm=sampler.perm)


@pytest.mark.parametrize("mode", ["binary", "triplet"])
def test_link_neighbor_loader_on_heterodata_runs_without_pyg_lib(mode):
    """LinkNeighborLoader given HeteroData: PyG's own link loader on Edgewise's typed
    sampler. The label edges come back in local ids of their node types, the sampled
    edges exist, and each edge type keeps its fan-out."""
    from edgewise.torch.loader import LinkNeighborLoader

    data = _graph(7)
    writes = ("author", "writes", "paper")
    label_index = data[writes].edge_index[:, :60]
    loader = LinkNeighborLoader(data, num_neighbors=[3, 2], edge_label_index=(writes, label_index), batch_size=16,
                                neg_sampling=mode, shuffle=True)
    seen = []
    for batch in loader:
        ids = batch[writes].input_id
        seen += ids.tolist()
        authors, papers = batch["author"].n_id, batch["paper"].n_id
        if mode == "binary":
            local, label = batch[writes].edge_label_index, batch[writes].edge_label
            positives = torch.stack([authors[local[0, label == 1]], papers[local[1, label == 1]]])
            assert int((label == 0).sum()) == ids.numel()
        else:
            positives = torch.stack([authors[batch["author"].src_index], papers[batch["paper"].dst_pos_index]])
            assert batch["paper"].dst_neg_index.numel() == ids.numel()
        assert torch.equal(positives, label_index[:, ids])
        for e in data.edge_types:
            src, _, dst = e
            ei = batch[e].edge_index
            pairs = torch.stack([batch[src].n_id[ei[0]], batch[dst].n_id[ei[1]]])
            assert torch.equal(pairs, data[e].edge_index[:, batch[e].e_id]), e
            for hop, (begin, count) in enumerate(zip([0] + list(torch.tensor(batch[e].num_sampled_edges).cumsum(0)),
                                                     batch[e].num_sampled_edges)):
                per_destination = torch.bincount(ei[1, int(begin):int(begin) + count])
                assert per_destination.numel() == 0 or int(per_destination.max()) <= [3, 2][hop], (e, hop)
    assert sorted(seen) == list(range(60))


def _edges_among(data, batch, e):
    """Every edge of type e among the batch's nodes, as (local src, local dst, edge id)
    with destinations in local order and each one's in-edges in input order."""
    src, _, dst = e
    local_src = {int(v): i for i, v in enumerate(batch[src].n_id)}
    ei = data[e].edge_index
    out = []
    for i, v in enumerate(batch[dst].n_id.tolist()):
        for k in (ei[1] == v).nonzero().view(-1).tolist():
            u = int(ei[0, k])
            if u in local_src:
                out.append((local_src[u], i, k))
    return out


def test_induced_batches_hold_every_edge_among_the_sampled_nodes():
    """subgraph_type="induced" on HeteroData: the nodes of the directional sample with the
    same seed, and per edge type every edge among them (ours and PyG's loader on
    Edgewise's sampler, which without Edgewise needs torch-sparse)."""
    import torch_geometric.loader as pyg_loader

    import edgewise.torch.pyg as ewpyg

    data = _graph(9)
    kwargs = dict(num_neighbors=[2, 1], input_nodes="paper", batch_size=12, seed=5)
    directional = list(NeighborLoader(data, **kwargs))
    induced = list(NeighborLoader(data, subgraph_type="induced", **kwargs))
    with ewpyg.accelerated():
        pygs = list(pyg_loader.NeighborLoader(data, num_neighbors=[2, 1], input_nodes="paper", batch_size=12,
                                              subgraph_type="induced"))
    assert len(induced) == len(directional) == len(pygs)
    grew = False
    for d, b, p in zip(directional, induced, pygs):
        for t in data.node_types:
            assert torch.equal(b[t].n_id, d[t].n_id), t
        for batch in (b, p):
            for e in data.edge_types:
                expected = _edges_among(data, batch, e)
                ei = batch[e].edge_index
                got = list(zip(ei[0].tolist(), ei[1].tolist(), batch[e].e_id.tolist()))
                if batch is b:
                    assert got == expected, e
                    assert sum(batch[e].num_sampled_edges) == len(got)
                else:  # PyG's CSC order within a destination: compare as sets
                    assert sorted(got) == sorted(expected), e
                grew |= batch is b and len(got) > d[e].edge_index.size(1)
    assert grew  # induced batches hold edges the directional ones did not draw
