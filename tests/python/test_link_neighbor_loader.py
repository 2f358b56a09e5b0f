"""edgewise.torch.loader.LinkNeighborLoader on the native pipeline: batches equal to
PyG's own LinkNeighborLoader field for field (full neighbourhoods, with and without
disjoint subgraphs, binary negatives compared as the same pairs labelled), valid random
samples around the label edges, negatives (binary, triplet, weighted, temporal),
determinism across thread counts, batches without PyG, and bad input named."""

import math

import pytest

torch = pytest.importorskip("torch")
ewt = pytest.importorskip("edgewise.torch")

from edgewise.torch.loader import LinkNeighborLoader, SampledData  # noqa: E402

try:
    import torch_geometric
    from torch_geometric.data import Data
except Exception:  # without PyG the loader yields SampledData; most tests below still run
    torch_geometric = None
    Data = None

needs_pyg = pytest.mark.skipif(torch_geometric is None, reason="needs torch_geometric (tools/install_deps.sh --test "
                                                               "installs it; CI always has it)")

N, E, F = 90, 700, 4


def _graph(seed=0, pyg=True):
    g = torch.Generator().manual_seed(seed)
    dst = (torch.rand(E, generator=g) ** 3 * N).long().clamp_(max=N - 1)  # a few hubs
    src = torch.randint(0, N, (E,), generator=g)
    # Grouped by destination, so PyG's sampler (is_sorted=True) sees the edges in the
    # same order as ours: its own sort by destination is not stable.
    dst, order = torch.sort(dst, stable=True)
    src = src[order]
    fields = dict(x=torch.randn(N, F, generator=g), y=torch.randint(0, 3, (N,), generator=g),
                  edge_attr=torch.randn(E, 2, generator=g), edge_index=torch.stack([src, dst]))
    if pyg and Data is not None:
        return Data(**fields)
    fields["num_nodes"] = N
    return fields


def _fields(data):
    return data if isinstance(data, dict) else dict(data.items())


def _check_sample(batch, data, fanouts):
    """Every sampled edge is an edge of data with its attributes; fan-outs respected."""
    fields = _fields(data)
    n_id, e_id = batch.n_id, batch.e_id
    assert torch.equal(batch.x, fields["x"][n_id])
    assert torch.equal(batch.edge_attr, fields["edge_attr"][e_id])
    global_edges = fields["edge_index"][:, e_id]
    assert torch.equal(n_id[batch.edge_index], global_edges)
    in_degree = torch.bincount(batch.edge_index[1], minlength=n_id.numel())
    assert int(in_degree.max()) <= max(fanouts)


def _same(a, b, key):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor), key
        assert a.dtype == b.dtype and torch.equal(a, b), key
    else:
        assert a == b, key


@needs_pyg
@pytest.mark.parametrize("disjoint, subgraph_type", [(False, "directional"), (True, "directional"),
                                                      (False, "bidirectional")])
def test_full_neighbourhoods_equal_pygs_own_loader_field_for_field(disjoint, subgraph_type):
    import edgewise.torch.pyg as ewpyg
    from torch_geometric.loader import LinkNeighborLoader as PygLinkNeighborLoader

    data = _graph(1)
    label_index = torch.stack([torch.randint(0, N, (23,)), torch.randint(0, N, (23,))])
    label = torch.rand(23)
    ours = list(LinkNeighborLoader(data, num_neighbors=[-1, -1], edge_label_index=label_index, edge_label=label,
                                   batch_size=5, disjoint=disjoint, subgraph_type=subgraph_type, num_threads=2))
    sampler = ewpyg.NeighborSampler(data, num_neighbors=[-1, -1], disjoint=disjoint, subgraph_type=subgraph_type,
                                    is_sorted=True)
    theirs = list(PygLinkNeighborLoader(data, num_neighbors=[-1, -1], edge_label_index=label_index,
                                        edge_label=label, batch_size=5, neighbor_sampler=sampler))
    assert len(ours) == len(theirs) == 5
    for a, b in zip(ours, theirs):
        assert sorted(a.keys()) == sorted(b.keys())
        for key in b.keys():
            if subgraph_type == "bidirectional" and key in ("e_id", "edge_attr"):
                continue  # PyG keeps an arbitrary copy of a duplicated edge (coalesce reduce="any")
            _same(a[key], b[key], key)
        if subgraph_type == "bidirectional":  # the same node pairs, whichever copy
            pair_a, pair_b = data.edge_index[:, a.e_id], data.edge_index[:, b.e_id]
            assert torch.equal(pair_a.sort(0).values, pair_b.sort(0).values)
            assert torch.equal(a.edge_attr, data.edge_attr[a.e_id])


@needs_pyg
@pytest.mark.parametrize("disjoint", [False, True])
def test_binary_negatives_give_pygs_batch_of_the_same_pairs_labelled_zero(disjoint):
    import edgewise.torch.pyg as ewpyg
    from torch_geometric.loader import LinkNeighborLoader as PygLinkNeighborLoader

    data = _graph(2)
    label_index = data.edge_index[:, 40:52]
    for batch in LinkNeighborLoader(data, num_neighbors=[-1], edge_label_index=label_index, batch_size=6,
                                    neg_sampling="binary", disjoint=disjoint, seed=3):
        num_pos = batch.input_id.numel()
        assert batch.edge_label_index.size(1) == 2 * num_pos
        assert torch.equal(batch.edge_label, torch.cat([torch.ones(num_pos), torch.zeros(num_pos)]))
        pairs = batch.n_id[batch.edge_label_index]
        assert torch.equal(pairs[:, :num_pos], label_index[:, batch.input_id])
        # PyG's loader over the same pairs, labelled as ours, must give the same batch.
        sampler = ewpyg.NeighborSampler(data, num_neighbors=[-1], disjoint=disjoint, is_sorted=True)
        (reference,) = PygLinkNeighborLoader(data, num_neighbors=[-1], edge_label_index=pairs,
                                             edge_label=batch.edge_label, batch_size=pairs.size(1),
                                             neighbor_sampler=sampler)
        for key in reference.keys():
            if key == "batch":  # PyG numbers disjoint subgraphs by positive: its own batch % num_pos
                _same(batch[key], reference[key] % num_pos, key)
            elif key != "input_id":
                _same(batch[key], reference[key], key)


@pytest.mark.parametrize("pyg", [True, False])
def test_random_samples_cover_every_label_edge_once_per_epoch(pyg):
    data = _graph(3, pyg=pyg)
    edge_index = _fields(data)["edge_index"]
    loader = LinkNeighborLoader(data, num_neighbors=[3, 2], batch_size=64, shuffle=True, seed=5, num_threads=2)
    assert len(loader) == math.ceil(E / 64)
    seen = []
    for batch in loader:
        if not pyg or Data is None:
            assert isinstance(batch, SampledData)
        _check_sample(batch, data, [3, 2])
        assert torch.equal(batch.n_id[batch.edge_label_index], edge_index[:, batch.input_id])
        seeds = batch.n_id[:int(batch.num_sampled_nodes[0])]
        assert torch.equal(seeds, torch.unique(edge_index[:, batch.input_id]))  # sorted, distinct
        seen += batch.input_id.tolist()
    assert sorted(seen) == list(range(E))
    dropped = LinkNeighborLoader(data, num_neighbors=[2], batch_size=64, drop_last=True)
    assert len(dropped) == E // 64 == len(list(dropped))


def test_the_same_seed_gives_the_same_batches_at_any_thread_count():
    data = _graph(4)

    def epochs(threads):
        loader = LinkNeighborLoader(data, num_neighbors=[4, 3], batch_size=50, shuffle=True, seed=11,
                                    neg_sampling=dict(mode="binary", amount=2), num_threads=threads)
        return [[(b.n_id, b.edge_index, b.edge_label_index, b.edge_label, b.input_id) for b in loader]
                for _ in range(2)]

    one, two = epochs(1), epochs(2)
    for epoch_one, epoch_two in zip(one, two):
        for a, b in zip(epoch_one, epoch_two):
            for x, y in zip(a, b):
                assert torch.equal(x, y)
    assert not torch.equal(one[0][0][4], one[1][0][4])  # epochs differ


@pytest.mark.parametrize("disjoint", [False, True])
def test_triplet_negatives_index_the_sources_and_destinations(disjoint):
    data = _graph(5)
    edge_index = _fields(data)["edge_index"]
    loader = LinkNeighborLoader(data, num_neighbors=[2, 2], batch_size=40, neg_sampling="triplet",
                                disjoint=disjoint, seed=1)
    for batch in loader:
        num_pos = batch.input_id.numel()
        assert "edge_label_index" not in batch.keys() and "edge_label" not in batch.keys()
        assert torch.equal(batch.n_id[batch.src_index], edge_index[0, batch.input_id])
        assert torch.equal(batch.n_id[batch.dst_pos_index], edge_index[1, batch.input_id])
        assert batch.dst_neg_index.shape == (num_pos,)
        if disjoint:
            assert torch.equal(batch.batch[batch.src_index], torch.arange(num_pos))
            assert torch.equal(batch.batch[batch.dst_neg_index], torch.arange(num_pos))
    three = LinkNeighborLoader(data, num_neighbors=[2], batch_size=40, neg_sampling={"mode": "triplet", "amount": 3},
                               disjoint=disjoint)
    batch = next(iter(three))
    assert batch.dst_neg_index.shape == (40, 3)
    assert int(batch.dst_neg_index.max()) < batch.n_id.numel()
    if disjoint:  # PyG's layout: row i holds positive i's negatives, each in subgraph i
        assert torch.equal(batch.batch[batch.dst_neg_index], torch.arange(40).view(-1, 1).expand(40, 3))


def test_weighted_negatives_follow_the_weights():
    data = _graph(6)
    weight = torch.zeros(N)
    weight[[4, 9]] = torch.tensor([1.0, 3.0])
    loader = LinkNeighborLoader(data, num_neighbors=[1], batch_size=E, seed=2,
                                neg_sampling=dict(mode="binary", amount=4, src_weight=weight, dst_weight=weight))
    batch = next(iter(loader))
    negatives = batch.n_id[batch.edge_label_index[:, batch.edge_label == 0]].reshape(-1)
    assert set(negatives.tolist()) == {4, 9}
    share = float((negatives == 9).double().mean())
    assert abs(share - 0.75) < 0.03  # 5600 draws: a 7-sigma band


def test_temporal_link_batches_respect_the_label_times():
    data = _graph(7)
    node_time = torch.randint(0, 100, (N,))
    data["time"] = node_time
    data_time = data
    label_index = _fields(data)["edge_index"][:, :60]
    label_time = torch.randint(20, 100, (60,))
    loader = LinkNeighborLoader(data_time, num_neighbors=[3, 3], edge_label_index=label_index,
                                edge_label_time=label_time, time_attr="time", batch_size=20,
                                neg_sampling="binary", seed=4)
    for batch in loader:
        num_pos = batch.input_id.numel()
        assert torch.equal(batch.edge_label_time, label_time[batch.input_id].repeat(2))
        # disjoint: node i belongs to label edge batch[i]; no sampled neighbour is newer
        # than its edge (the seeds are the label edges' endpoints, whatever their time)
        seeds = int(batch.num_sampled_nodes[0])
        assert seeds == 4 * num_pos
        sampled_time = node_time[batch.n_id[seeds:]]
        assert bool((sampled_time <= batch.edge_label_time[:num_pos][batch.batch[seeds:]]).all())
        negatives = batch.n_id[batch.edge_label_index[:, num_pos:]]
        assert bool((node_time[negatives] <= batch.edge_label_time[num_pos:]).all())
    with pytest.raises(ValueError, match="conflicting 'edge_label_time' and 'time_attr'"):
        LinkNeighborLoader(data_time, num_neighbors=[1], edge_label_index=label_index, time_attr="time")


def test_a_link_prediction_model_trains_on_the_batches():
    from edgewise.torch.nn import SAGEConv

    torch.manual_seed(0)
    # Three communities: edges inside them, features that say which (plus noise), so
    # a dot-product decoder can tell edges from random pairs.
    group = torch.arange(N) % 3
    src = torch.randint(0, N // 3, (E,)) * 3
    offset = torch.randint(0, 3, (E,))
    src = src + offset
    dst = torch.randint(0, N // 3, (E,)) * 3 + offset
    x = torch.nn.functional.one_hot(group, 3).float() + 0.3 * torch.randn(N, 3)
    data = dict(x=x, edge_index=torch.stack([src, dst]), num_nodes=N)
    conv1, conv2 = SAGEConv(3, 16), SAGEConv(16, 16)
    params = list(conv1.parameters()) + list(conv2.parameters())
    opt = torch.optim.Adam(params, lr=0.02)
    loader = LinkNeighborLoader(data, num_neighbors=[5, 5], batch_size=100, shuffle=True, neg_sampling="binary",
                                seed=0)
    steps = []
    for _ in range(10):
        for batch in loader:
            h = conv2(conv1(batch.x, batch.edge_index).relu(), batch.edge_index)
            src_h, dst_h = h[batch.edge_label_index[0]], h[batch.edge_label_index[1]]
            logits = (src_h * dst_h).sum(-1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, batch.edge_label)
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps.append(loss.item())
    last_epoch = sum(steps[-len(loader):]) / len(loader)
    assert last_epoch < 0.8 * steps[0]


@pytest.mark.parametrize("kwargs, message", [
    (dict(edge_label_index=torch.tensor([[0, 1], [2, N]])), r"edge_label_index\[1, 1\] \(90\) must lie in \[0, 90\)"),
    (dict(edge_label_index=torch.tensor([0, 1])), r"edge_label_index must be \[2, L\]"),
    (dict(edge_label_index=torch.tensor([[0.0], [1.0]])), "edge_label_index must hold node ids"),
    (dict(edge_label=torch.ones(3)), r"edge_label must be a tensor with one entry per label edge \(700\)"),
    (dict(edge_label_time=torch.ones(E, dtype=torch.long)), "conflicting 'edge_label_time' and 'time_attr'"),
    (dict(neg_sampling="triplet", edge_label=torch.ones(E)), "'edge_label' needs to be undefined"),
    (dict(neg_sampling="sometimes"), "neg_sampling mode 'sometimes' must be 'binary' or 'triplet'"),
    (dict(neg_sampling=dict(mode="binary", amount=0)), "neg_sampling amount must be a positive number"),
    (dict(neg_sampling=dict(mode="triplet", amount=1.5)), "must be an integer for 'triplet'"),
    (dict(neg_sampling=dict(mode="binary", src_weight=torch.ones(3))), "src_weight must be a 1-D floating-point"),
    (dict(neg_sampling=dict(mode="binary", dst_weight=torch.zeros(N))), "dst_weight must be finite, >= 0 and not"),
    (dict(neg_sampling=dict(mode="binary", ratio=2)), "neg_sampling as a dict takes"),
    (dict(batch_size=0), r"batch_size \(0\) must be >= 1"),
])
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LinkNeighborLoader(_graph(9), num_neighbors=[2], **kwargs)


def test_a_graph_changed_while_iterating_is_refused():
    data = _graph(10, pyg=False)
    loader = LinkNeighborLoader(data, num_neighbors=[2], batch_size=100)
    it = iter(loader)
    next(it)
    data["edge_index"][0, 0] = 1 - data["edge_index"][0, 0]
    with pytest.raises(ValueError, match="edge_index changed"):
        next(it)


@pytest.mark.parametrize("neg", [None, "binary", "triplet"])
def test_no_label_edges_is_an_empty_epoch_and_a_self_pair_is_one_seed(neg):
    data = _graph(11, pyg=False)
    empty = LinkNeighborLoader(data, num_neighbors=[2], edge_label_index=torch.empty(2, 0, dtype=torch.long),
                               batch_size=4, neg_sampling=neg)
    assert len(empty) == 0 and list(empty) == []
    batch = next(iter(LinkNeighborLoader(data, num_neighbors=[2], edge_label_index=torch.tensor([[3], [3]]),
                                         batch_size=4, seed=1)))
    assert batch.n_id[:int(batch.num_sampled_nodes[0])].tolist() == [3]  # both endpoints, one seed
    assert batch.edge_label_index.tolist() == [[0], [0]]
