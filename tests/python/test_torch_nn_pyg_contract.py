"""edgewise.torch.nn against PyG's own layers on what PyG's layers accept and expose:
repr, static graphs, sparse adjacencies (hybrid ones for GINEConv), attention returned
for a sparse adjacency, GCNConv's cached graph, the message-passing and edge-update
hooks. Each compares outputs and gradients with PyG's layer holding the same
parameters, on seeded random graphs."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("edgewise.torch")
pyg_nn = pytest.importorskip("torch_geometric.nn", reason="compares with PyG's layers: torch_geometric is not "
                                                          "installed here (tools/install_deps.sh --test installs it)")

from edgewise.torch import nn as ewnn  # noqa: E402

N, C, C_OUT, D = 13, 6, 5, 3


def _graph(seed, n=N, edges=40, loops=True):
    g = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, n, (2, edges), generator=g)
    if loops:
        ei[:, :2] = torch.tensor([[1, 4], [1, 4]])  # a few self loops
    # Unique edges: a sparse adjacency has one entry per pair.
    ei = torch.unique(ei, dim=1)
    ei = ei[:, torch.randperm(ei.size(1), generator=g)]
    x = torch.randn(n, C, generator=g, dtype=torch.float64)
    return x, ei, g


def _pair(make, **kwargs):
    """(PyG's layer, Edgewise's) of one class in float64, Edgewise's holding PyG's parameters."""
    torch.manual_seed(0)
    pyg = make(pyg_nn, **kwargs).double()
    ew = make(ewnn, **kwargs).double()
    ew.load_state_dict(pyg.state_dict())
    return pyg, ew


def _run(layer, call, tensors):
    """call(layer, *leaves) and the gradients of a fixed random projection of its
    output with respect to the floating-point leaves and the layer's parameters."""
    leaves = [t.detach().clone().requires_grad_() if t.is_floating_point() else t for t in tensors]
    out = call(layer, *leaves)
    weights = torch.randn(out.shape, dtype=out.dtype, generator=torch.Generator().manual_seed(3))
    wrt = [t for t in leaves if t.requires_grad] + list(layer.parameters())
    return out.detach(), torch.autograd.grad((out * weights).sum(), wrt, allow_unused=True)


def _assert_same(a, b):
    torch.testing.assert_close(a[0], b[0], rtol=1e-5, atol=1e-8)
    for ga, gb in zip(a[1], b[1]):
        assert (ga is None) == (gb is None)
        if ga is not None:
            torch.testing.assert_close(ga, gb, rtol=1e-5, atol=1e-8)


def _same_run(pyg, ew, call, tensors):
    _assert_same(_run(ew, call, tensors), _run(pyg, call, tensors))


def _adjacency_t(ei, values, n_src, n_dst, layout):
    """PyG's adj_t [n_dst, n_src(, D)] in a torch.sparse layout; values in edge_index order."""
    adj = torch.sparse_coo_tensor(ei.flip(0), values, (n_dst, n_src) + tuple(values.shape[1:])).coalesce()
    return adj.to_sparse_csr() if layout == "csr" else adj


@pytest.mark.parametrize("in_channels,aggr", [(8, "mean"), (8, "sum"), (8, "lstm"), ((8, 16), "max"),
                                               ((8, 16), "lstm"), (-1, "mean"), ((-1, -1), "max")])
def test_sageconv_repr_matches_pyg(in_channels, aggr):
    assert str(ewnn.SAGEConv(in_channels, 32, aggr=aggr)) == str(pyg_nn.SAGEConv(in_channels, 32, aggr=aggr))


def _gine(lib, edge_dim=None):
    mlp = torch.nn.Sequential(torch.nn.Linear(C, C_OUT), torch.nn.ReLU(), torch.nn.Linear(C_OUT, C_OUT))
    return lib.GINEConv(mlp, train_eps=True, edge_dim=edge_dim)


@pytest.mark.parametrize("edge_dim", [None, D])
def test_gineconv_static_graph_matches_pyg(edge_dim):
    _, ei, g = _graph(1)
    x = torch.randn(3, N, C, generator=g, dtype=torch.float64)  # a batch of 3 over one graph
    attr = torch.randn(ei.size(1), edge_dim or C, generator=g, dtype=torch.float64)
    pyg, ew = _pair(_gine, edge_dim=edge_dim)
    _same_run(pyg, ew, lambda m, x, a: m(x, ei, a), (x, attr))


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("edge_dim", [None, D])
def test_gineconv_hybrid_sparse_adjacency_matches_pyg(layout, edge_dim):
    """adj_t [N, N, D]: PyG reads its values as edge_attr."""
    x, ei, g = _graph(2)
    attr = torch.randn(ei.size(1), edge_dim or C, generator=g, dtype=torch.float64)
    pyg, ew = _pair(_gine, edge_dim=edge_dim)
    _same_run(pyg, ew, lambda m, x, a: m(x, _adjacency_t(ei, a, N, N, layout)), (x, attr))


def test_gineconv_sparse_adjacency_with_edge_attr_and_bipartite_matches_pyg():
    """edge_attr passed beside a plain adj_t is in the adjacency's (row-major) order; a
    non-square adj_t is bipartite."""
    x, ei, g = _graph(3)
    ei = ei[:, ei[1] < 7]
    adj = _adjacency_t(ei, torch.ones(ei.size(1), dtype=torch.float64), N, 7, "csr")
    attr = torch.randn(adj._nnz(), C, generator=g, dtype=torch.float64)
    pyg, ew = _pair(_gine)
    _same_run(pyg, ew, lambda m, x, xd, a: m((x, xd), adj, a), (x, x[:7].clone(), attr))
    _same_run(pyg, ew, lambda m, x, a: m((x, None), adj, a), (x, attr))


def test_gineconv_sparse_adjacency_flow_error_matches_pyg():
    x, ei, _ = _graph(4)
    attr = torch.randn(ei.size(1), C, dtype=torch.float64)
    adj = _adjacency_t(ei, attr, N, N, "coo")
    torch.manual_seed(0)
    messages = []
    for lib in (pyg_nn, ewnn):
        conv = lib.GINEConv(torch.nn.Linear(C, C_OUT), flow="target_to_source").double()
        with pytest.raises(ValueError) as error:
            conv(x, adj)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def _recording_hooks(conv, record):
    """PyG's message / aggregate / propagate hooks that record what they see; the
    message hook also doubles the messages (a hook's return replaces them)."""
    conv.register_propagate_forward_pre_hook(lambda m, inputs: record.append(("propagate_pre", inputs[1])))
    conv.register_message_forward_pre_hook(
        lambda m, inputs: record.append(("message_pre", _detached(inputs[0]))))
    conv.register_message_forward_hook(lambda m, inputs, out: 2 * out)
    conv.register_aggregate_forward_pre_hook(
        lambda m, inputs: record.append(("aggregate_pre", inputs[0]["index"], inputs[0]["dim_size"])))
    conv.register_aggregate_forward_hook(lambda m, inputs, out: record.append(("aggregate", out.detach())))
    conv.register_propagate_forward_hook(lambda m, inputs, out: out + 1)


def _assert_same_records(a, b):
    assert [r[0] for r in a] == [r[0] for r in b]
    for ra, rb in zip(a, b):
        for va, vb in zip(ra[1:], rb[1:]):
            if isinstance(va, dict):
                assert va.keys() == vb.keys()
                for key in va:
                    if isinstance(va[key], torch.Tensor):
                        torch.testing.assert_close(va[key], vb[key])
                    else:
                        assert va[key] == vb[key]
            elif isinstance(va, torch.Tensor):
                torch.testing.assert_close(va, vb)
            else:
                assert va == vb


@pytest.mark.parametrize("edge_dim", [None, D])
@pytest.mark.parametrize("flow", ["source_to_target", "target_to_source"])
def test_gineconv_hooks_match_pyg(edge_dim, flow):
    x, ei, g = _graph(5)
    attr = torch.randn(ei.size(1), edge_dim or C, generator=g, dtype=torch.float64)
    torch.manual_seed(0)
    pyg = pyg_nn.GINEConv(torch.nn.Linear(C, C_OUT), train_eps=True, edge_dim=edge_dim, flow=flow).double()
    ew = ewnn.GINEConv(torch.nn.Linear(C, C_OUT), train_eps=True, edge_dim=edge_dim, flow=flow).double()
    ew.load_state_dict(pyg.state_dict())
    records = ([], [])
    _recording_hooks(pyg, records[0])
    _recording_hooks(ew, records[1])
    _same_run(pyg, ew, lambda m, x, a: m(x, ei, a), (x, attr))
    _assert_same_records(records[1], records[0])


def _gat(lib, layer, **kwargs):
    return getattr(lib, layer)(C, C_OUT, heads=2, **kwargs)


@pytest.mark.parametrize("layer", ["GATConv", "GATv2Conv"])
@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("add_self_loops", [True, False])
def test_attention_weights_for_a_sparse_adjacency_match_pyg(layer, layout, add_self_loops):
    """PyG returns (adj_t holding the attention [N, N, H] in adj_t's layout, the
    attention in its value order)."""
    x, ei, _ = _graph(6)
    adj = _adjacency_t(ei, torch.ones(ei.size(1), dtype=torch.float64), N, N, layout)
    pyg, ew = _pair(_gat, layer=layer, add_self_loops=add_self_loops)
    results = [m(x, adj, return_attention_weights=True) for m in (pyg, ew)]
    (_, (adj_pyg, alpha_pyg)), (_, (adj_ew, alpha_ew)) = results
    assert adj_ew.layout == adj_pyg.layout and adj_ew.shape == adj_pyg.shape
    torch.testing.assert_close(adj_ew.to_dense(), adj_pyg.to_dense())
    torch.testing.assert_close(alpha_ew, alpha_pyg)

    def flat(m, x):
        out, (adj_alpha, alpha) = m(x, adj, return_attention_weights=True)
        return torch.cat([out.flatten(), alpha.flatten(), adj_alpha.values().flatten()])

    _same_run(pyg, ew, flat, (x,))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("first", ["edge_index", "adjacency"])
def test_gcnconv_cached_keeps_the_first_graph_as_pyg(weighted, first):
    """cached=True: the first normalised graph serves every later call (a different
    graph too) until reset_parameters()."""
    x, ei_a, g = _graph(7)
    _, ei_b, _ = _graph(8)
    w_a = torch.rand(ei_a.size(1), generator=g, dtype=torch.float64) + 0.1 if weighted else None
    pyg, ew = _pair(lambda lib: lib.GCNConv(C, C_OUT, cached=True))
    assert ew._cached_edge_index is None and ew._cached_adj_t is None
    graph_a = (ei_a, w_a) if first == "edge_index" else (
        _adjacency_t(ei_a, w_a if weighted else torch.ones(ei_a.size(1), dtype=torch.float64), N, N, "csr"), None)
    _same_run(pyg, ew, lambda m, x: m(x, *graph_a), (x,))
    assert ew._cached_edge_index is not None
    _same_run(pyg, ew, lambda m, x: m(x, ei_b), (x,))  # still graph a
    torch.testing.assert_close(ew(x, ei_b), ew(x, *graph_a))
    state = ew.state_dict()
    for m in (pyg, ew):
        m.reset_parameters()
    ew.load_state_dict(pyg.state_dict())
    assert ew._cached_edge_index is None
    _same_run(pyg, ew, lambda m, x: m(x, ei_b), (x,))  # graph b now
    assert set(state) == set(ew.state_dict())


def test_gcnconv_not_cached_follows_each_graph():
    x, ei_a, _ = _graph(9)
    _, ei_b, _ = _graph(10)
    pyg, ew = _pair(lambda lib: lib.GCNConv(C, C_OUT))
    for ei in (ei_a, ei_b):
        _same_run(pyg, ew, lambda m, x: m(x, ei), (x,))
    assert ew._cached_edge_index is None


def _gat_graph(seed, edge_dim):
    x, ei, g = _graph(seed)
    attr = torch.randn(ei.size(1), edge_dim, generator=g, dtype=torch.float64) if edge_dim else None
    return x, ei, attr


def _detached(kwargs):
    return {k: v.detach() if isinstance(v, torch.Tensor) else v for k, v in sorted(kwargs.items())}


def _edge_update_hooks(conv, record, pre_key):
    """PyG's edge-update hooks that record their inputs and the attention; the pre hook
    scales kwargs[pre_key] and the forward hook reweighs the attention."""

    def pre(m, inputs):
        edge_index, size, kwargs = inputs
        record.append(("pre", edge_index.clone(), size, _detached(kwargs)))
        return edge_index, size, {**kwargs, pre_key: 1.5 * kwargs[pre_key]}

    def post(m, inputs, out):
        record.append(("post", out.detach(), inputs[1], _detached(inputs[2])))
        return out * torch.linspace(0.5, 1.5, out.size(0), dtype=out.dtype).unsqueeze(1)

    conv.register_edge_update_forward_pre_hook(pre)
    conv.register_edge_update_forward_hook(post)


@pytest.mark.parametrize("layer,pre_key", [("GATConv", "alpha_j"), ("GATv2Conv", "x_j")])
@pytest.mark.parametrize("edge_dim,add_self_loops", [(None, True), (2, True), (2, False), (None, False)])
@pytest.mark.parametrize("flow", ["source_to_target", "target_to_source"])
def test_edge_update_hooks_match_pyg(layer, pre_key, edge_dim, add_self_loops, flow):
    x, ei, attr = _gat_graph(11, edge_dim)
    pyg, ew = _pair(_gat, layer=layer, edge_dim=edge_dim, add_self_loops=add_self_loops, flow=flow)
    records = ([], [])
    _edge_update_hooks(pyg, records[0], pre_key)
    _edge_update_hooks(ew, records[1], pre_key)
    tensors = (x,) if attr is None else (x, attr)
    _same_run(pyg, ew, lambda m, x, *a: m(x, ei, *a, return_attention_weights=True)[1][1], tensors)
    _same_run(pyg, ew, lambda m, x, *a: m(x, ei, *a), tensors)
    _assert_same_records(records[1], records[0])
    # Removed, the fused path gives the unhooked attention again.
    for conv in (pyg, ew):
        conv._edge_update_forward_pre_hooks.clear()
        conv._edge_update_forward_hooks.clear()
    _same_run(pyg, ew, lambda m, x, *a: m(x, ei, *a), tensors)


def test_edge_update_hook_handles_remove():
    x, ei, _ = _gat_graph(12, None)
    conv = ewnn.GATConv(C, C_OUT, heads=2).double()
    plain = conv(x, ei)
    handle = conv.register_edge_update_forward_hook(lambda m, inputs, out: torch.zeros_like(out))
    assert conv.has_edge_update_hooks() and not conv.has_message_passing_hooks()
    torch.testing.assert_close(conv(x, ei), conv.bias.expand(N, -1))
    handle.remove()
    assert not conv.has_edge_update_hooks()
    torch.testing.assert_close(conv(x, ei), plain)


@pytest.mark.parametrize("layer", ["GATConv", "GATv2Conv"])
@pytest.mark.parametrize("flow", ["source_to_target", "target_to_source"])
def test_attention_message_hooks_see_pygs_edges(layer, flow):
    """With self loops added, the message hooks get PyG's edge order and tensors."""
    x, ei, _ = _gat_graph(13, None)
    pyg, ew = _pair(_gat, layer=layer, flow=flow)
    records = ([], [])
    _recording_hooks(pyg, records[0])
    _recording_hooks(ew, records[1])
    _same_run(pyg, ew, lambda m, x: m(x, ei), (x,))
    _assert_same_records(records[1], records[0])


def _gcn(lib, **kwargs):
    return lib.GCNConv(C, 8, **kwargs)


@pytest.mark.parametrize("layer", ["GCNConv", "GATConv"])
def test_decomposed_layers_split_the_hooked_messages_as_pyg(layer):
    """decomposed_layers = 2: the message hooks see half the features each time, the
    output does not change."""
    x, ei, _ = _graph(14, loops=False)
    ei = ei[:, ei[0] != ei[1]]  # PyG's hooks see the input edges then one loop per node
    make = _gcn if layer == "GCNConv" else (lambda lib, **kw: lib.GATConv(C, 8, heads=2, **kw))
    widths = {"pyg": [], "ew": []}
    torch.manual_seed(0)
    pyg, ew = _pair(make)
    plain = ew(x, ei)
    for name, conv in (("pyg", pyg), ("ew", ew)):
        conv.decomposed_layers = 2
        conv.register_message_forward_pre_hook(lambda m, inputs, name=name: widths[name].append(
            tuple(inputs[0]["x_j"].shape)))
    if layer == "GCNConv":
        _same_run(pyg, ew, lambda m, x: m(x, ei), (x,))
        assert widths["ew"] == widths["pyg"]
    else:
        # PyG's GATConv cannot split its (x_src, x_dst) pair; Edgewise splits x_src.
        _run(ew, lambda m, x: m(x, ei), (x,))
    assert widths["ew"] and all(shape[-1] == 4 for shape in widths["ew"])
    torch.testing.assert_close(ew(x, ei), plain)
    assert _gcn(ewnn, decomposed_layers=3).decomposed_layers == 3


@pytest.mark.parametrize("layer", ["GCNConv", "SAGEConv", "GINConv", "GINEConv", "GATConv", "GATv2Conv"])
def test_message_passing_keywords_as_pyg(layer):
    """PyG's layers pass **kwargs to MessagePassing: accepted at the values the layer
    computes, a ValueError naming the argument otherwise, a TypeError for unknown names."""
    def make(lib, **kwargs):
        if layer in ("GINConv", "GINEConv"):
            return getattr(lib, layer)(torch.nn.Linear(C, C_OUT), **kwargs)
        return getattr(lib, layer)(C, C_OUT, **kwargs)

    native = {"node_dim": 0 if layer.startswith("GAT") else -2}
    if layer != "SAGEConv":
        native["aggr"] = "add"
    conv = make(ewnn, decomposed_layers=2, **native)
    assert conv.decomposed_layers == 2 and conv.node_dim == native["node_dim"]
    if "aggr" in native:
        assert make(ewnn, aggr="sum").aggr == "add"
        with pytest.raises(ValueError, match="aggr='max' is not supported"):
            make(ewnn, aggr="max")
    with pytest.raises(ValueError, match="node_dim=5 is not supported"):
        make(ewnn, node_dim=5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'no_such_option'"):
        make(ewnn, no_such_option=1)


@pytest.mark.parametrize("layer,pre_key", [("GATConv", "alpha_j"), ("GATv2Conv", "x_j")])
def test_edge_update_hooks_bipartite_match_pyg(layer, pre_key):
    x, ei, g = _graph(15)
    ei = ei[:, ei[1] < 9]
    x_dst = torch.randn(9, C, generator=g, dtype=torch.float64)
    torch.manual_seed(0)
    pyg, ew = _pair(lambda lib: getattr(lib, layer)((C, C), C_OUT, heads=2))
    records = ([], [])
    _edge_update_hooks(pyg, records[0], pre_key)
    _edge_update_hooks(ew, records[1], pre_key)
    _same_run(pyg, ew, lambda m, xs, xd: m((xs, xd), ei), (x, x_dst))
    if layer == "GATConv":  # PyG's GATv2Conv needs x_dst
        _same_run(pyg, ew, lambda m, xs: m((xs, None), ei, size=(N, 9)), (x,))
    _assert_same_records(records[1], records[0])


@pytest.mark.parametrize("layer,in_channels", [("GATConv", -1), ("GATConv", (-1, -1)), ("GATv2Conv", -1),
                                               ("GATv2Conv", (-1, -1)), ("GCNConv", -1)])
def test_lazy_in_channels_as_pyg(layer, in_channels):
    """in_channels -1: the widths come from the first input; PyG's parameters then load
    and the outputs and gradients agree; a fresh lazy layer is glorot-initialised."""
    x, ei, g = _graph(16)
    kwargs = {} if layer == "GCNConv" else {"heads": 2, "residual": True}
    torch.manual_seed(0)
    pyg = getattr(pyg_nn, layer)(in_channels, C_OUT, **kwargs).double()
    ew = getattr(ewnn, layer)(in_channels, C_OUT, **kwargs).double()
    assert str(ew) == str(pyg)
    pyg(x, ei)
    fresh = ew(x, ei)
    assert fresh.shape == pyg(x, ei).shape
    for name, p in ew.named_parameters():
        if p.dim() == 2:
            bound = (6.0 / (p.size(0) + p.size(1))) ** 0.5
            assert p.abs().max() <= bound, name
        elif name.endswith("bias"):
            assert not p.any(), name
    ew.load_state_dict(pyg.state_dict())
    _same_run(pyg, ew, lambda m, x: m(x, ei), (x,))


@pytest.mark.parametrize("layer", ["GINConv", "GINEConv", "SAGEConv lstm", "SAGEConv mean"])
def test_reset_parameters_draws_as_pyg(layer):
    """reset_parameters resets what PyG's does, in PyG's order: a Sequential nn's
    layers, SAGEConv's aggregation module; seeded, both draw the same parameters."""
    def make(lib):
        if layer.startswith("SAGEConv"):
            return lib.SAGEConv(C, C_OUT, aggr=layer.split()[1])
        mlp = torch.nn.Sequential(torch.nn.Linear(C, C_OUT), torch.nn.ReLU(), torch.nn.Linear(C_OUT, C_OUT))
        return getattr(lib, layer)(mlp, train_eps=True, eps=0.25)

    pyg, ew = _pair(make)
    with torch.no_grad():
        for m in (pyg, ew):
            for p in m.parameters():
                p.fill_(7.0)
    states = []
    for m in (pyg, ew):
        torch.manual_seed(5)
        m.reset_parameters()
        states.append(m.state_dict())
    assert states[0].keys() == states[1].keys()
    for key in states[0]:
        torch.testing.assert_close(states[1][key], states[0][key])
        assert not (states[1][key] == 7.0).all(), key


@pytest.mark.parametrize("options", [{}, {"flow": "target_to_source"}, {"improved": True}, {"normalize": False},
                                     {"add_self_loops": False}, {"cached": True}])
@pytest.mark.parametrize("weighted", [False, True])
def test_gcnconv_hooks_see_pygs_edges(options, weighted):
    """The hooks see PyG's normalised graph: the input edges in order (its own self
    loops dropped where loops are added), one loop per node, the normalised weights."""
    x, ei, g = _graph(17)  # with self loops
    w = torch.rand(ei.size(1), generator=g, dtype=torch.float64) + 0.1 if weighted else None
    pyg, ew = _pair(lambda lib: lib.GCNConv(C, C_OUT, **options))
    records = ([], [])
    for conv, record in zip((pyg, ew), records):
        _recording_hooks(conv, record)
        conv.register_propagate_forward_pre_hook(lambda m, inputs, record=record: record.append(
            ("propagate_edges", inputs[0].clone(), _detached(inputs[2]))))
    for _ in range(2):  # cached: the second call is served from the cache
        _same_run(pyg, ew, lambda m, x: m(x, ei, w), (x,))
    _assert_same_records(records[1], records[0])


def _dense(value):
    if isinstance(value, torch.Tensor):
        return value.detach().to_dense() if value.layout != torch.strided else value.detach()
    if isinstance(value, (tuple, list)):
        return tuple(_dense(v) for v in value)
    return value


def _fused_hooks(conv, record):
    """Hooks around PyG's fused path for a sparse adjacency; the message hook must not run."""
    conv.register_propagate_forward_pre_hook(lambda m, inputs: record.append(
        ("propagate_pre", _dense(inputs[0]), inputs[1], {k: _dense(v) for k, v in sorted(inputs[2].items())})))
    conv.register_message_and_aggregate_forward_pre_hook(lambda m, inputs: record.append(
        ("fused_pre", inputs[0].layout, _dense(inputs[0]), {k: _dense(v) for k, v in inputs[1].items()})))
    conv.register_message_and_aggregate_forward_hook(lambda m, inputs, out: 3 * out)
    conv.register_message_forward_hook(lambda m, inputs, out: record.append(("message",)))
    conv.register_propagate_forward_hook(lambda m, inputs, out: out - 1)


def _flatten_records(records):
    flat = []
    for record in records:
        items = []
        for value in record:
            if isinstance(value, dict):
                for key in value:
                    items += [key] + list(value[key] if isinstance(value[key], tuple) else (value[key],))
            elif isinstance(value, tuple):
                items += list(value)
            else:
                items.append(value)
        flat.append(items)
    return flat


@pytest.mark.parametrize("layer", ["GCNConv", "SAGEConv", "GINConv"])
@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_sparse_adjacency_runs_pygs_fused_hooks(layer, layout):
    """For a sparse adjacency PyG fuses message and aggregation (GCNConv over its
    normalised adj_t): the message_and_aggregate hooks run, the message hooks do not."""
    x, ei, g = _graph(18)
    adj = _adjacency_t(ei, torch.rand(ei.size(1), generator=g, dtype=torch.float64), N, N, layout)

    def make(lib):
        if layer == "GINConv":
            return lib.GINConv(torch.nn.Linear(C, C_OUT))
        return getattr(lib, layer)(C, C_OUT)

    pyg, ew = _pair(make)
    records = ([], [])
    _fused_hooks(pyg, records[0])
    _fused_hooks(ew, records[1])
    _same_run(pyg, ew, lambda m, x: m(x, adj), (x,))
    flat = _flatten_records(records[1]), _flatten_records(records[0])
    assert [len(r) for r in flat[0]] == [len(r) for r in flat[1]]
    for a, b in zip(*flat):
        for va, vb in zip(a, b):
            if isinstance(va, torch.Tensor):
                torch.testing.assert_close(va, vb)
            else:
                assert va == vb


def _make_layer(lib, layer):
    if layer in ("GINConv", "GINEConv"):
        return getattr(lib, layer)(torch.nn.Linear(C, C_OUT))
    return getattr(lib, layer)(C, C_OUT)


def _raised(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the error itself is under test
        return error
    return None


BAD_EDGE_INDEX = {
    "float": lambda ei: ei.double(),
    "one-dimensional": lambda ei: ei[0],
    "three rows": lambda ei: torch.cat([ei, ei[:1]]),
    "negative source": lambda ei: torch.cat([ei, torch.tensor([[-3], [1]])], dim=1),
    "source past x": lambda ei: torch.cat([ei, torch.tensor([[N + 4], [1]])], dim=1),
}


@pytest.mark.parametrize("case", list(BAD_EDGE_INDEX))
@pytest.mark.parametrize("layer", ["GCNConv", "SAGEConv", "GINConv", "GINEConv", "GATConv", "GATv2Conv"])
def test_bad_edge_index_errors_carry_pygs_message(layer, case):
    """Where PyG raises its own message for a malformed edge_index, Edgewise's error
    is of PyG's type and carries that message (and stays a ValueError)."""
    x, ei, g = _graph(19, loops=False)
    bad = BAD_EDGE_INDEX[case](ei)
    attr = torch.randn(bad.size(-1), C, generator=g, dtype=torch.float64)

    def call(lib):
        conv = _make_layer(lib, layer).double()
        return lambda: conv(x, bad, attr) if layer == "GINEConv" else conv(x, bad)

    expected, got = _raised(call(pyg_nn)), _raised(call(ewnn))
    assert expected is not None and isinstance(got, ValueError)
    if str(expected).startswith(("Expected 'edge_index'", "Found ")):
        assert isinstance(got, type(expected)) and str(expected) in str(got)


LOW_PRECISION_LAYERS = ["GCNConv", "SAGEConv", "GINConv", "GINEConv", "GATConv", "GATv2Conv"]


def _low_precision_call(layer, ei, attr):
    if layer == "GINEConv":
        return lambda m, x: m(x, ei, attr.to(x.dtype))
    return lambda m, x: m(x, ei)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("layer", LOW_PRECISION_LAYERS)
def test_half_precision_inputs_as_pyg(layer, dtype):
    """A float16 / bfloat16 layer and x (PyG takes them): the output in PyG's dtype,
    close to PyG's float32 result on the same rounded parameters and inputs
    (Edgewise aggregates in float32, so it is the closer), gradients in that dtype."""
    x, ei, g = _graph(20)
    attr = torch.randn(ei.size(1), C, generator=g)
    pyg, ew = (m.float() for m in _pair(_make_layer, layer=layer))
    pyg, ew = pyg.to(dtype), ew.to(dtype)
    call = _low_precision_call(layer, ei, attr)
    x_low = x.to(dtype).requires_grad_()
    expected, got = call(pyg, x_low), call(ew, x_low)
    assert got.dtype == expected.dtype == dtype
    reference = call(pyg.float(), x_low.detach().float())
    error = (got.float() - reference).abs().max()
    assert error <= (expected.float() - reference).abs().max() * 2 + 1e-3
    (grad,) = torch.autograd.grad(got.float().sum(), x_low)
    assert grad.dtype == dtype and torch.isfinite(grad).all()


@pytest.mark.parametrize("layer", LOW_PRECISION_LAYERS)
def test_cpu_autocast_as_pyg(layer):
    """Under CPU autocast (bfloat16 linears) the output dtype is PyG's and the values
    agree within bfloat16 rounding."""
    x, ei, g = _graph(21)
    attr = torch.randn(ei.size(1), C, generator=g)
    pyg, ew = (m.float() for m in _pair(_make_layer, layer=layer))
    call = _low_precision_call(layer, ei, attr)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected, got = call(pyg, x.float()), call(ew, x.float())
    assert got.dtype == expected.dtype
    torch.testing.assert_close(got.float(), expected.float(), atol=3e-2, rtol=3e-2)


_SIZE_CASES = [(layer, inputs) for layer in ("GCNConv", "SAGEConv", "GINConv", "GINEConv", "GATConv")
               for inputs in ("plain", "pair", "pair_no_dst", "adjacency")
               if not (layer == "GCNConv" and inputs.startswith("pair"))  # GCNConv takes no pair
               and not (layer in ("GINEConv", "GATConv") and inputs == "adjacency")]  # no fused path in PyG


@pytest.mark.parametrize("layer,inputs", _SIZE_CASES)
def test_propagate_forward_hook_gets_pygs_size(layer, inputs):
    """The propagate forward hook's size: PyG's, as its argument collection leaves it."""
    x, ei, g = _graph(22)
    ei_b = ei[:, ei[1] < 9]
    attr = torch.randn(ei.size(1), C, generator=g, dtype=torch.float64)
    attr_b = attr[ei[1] < 9]
    args = {
        "plain": ((x, ei), attr, {}),
        "pair": (((x, x[:9].clone()), ei_b), attr_b, {}),
        "pair_no_dst": (((x, None), ei_b), attr_b, {"size": (N, 9)}),
        "adjacency": ((x, _adjacency_t(ei, torch.ones(ei.size(1), dtype=torch.float64), N, N, "csr")), None, {}),
    }[inputs]
    sizes = []
    for lib in (pyg_nn, ewnn):
        torch.manual_seed(0)
        conv = _make_layer(lib, layer).double()
        conv.register_propagate_forward_hook(lambda m, inputs, out: sizes.append(list(inputs[1])))
        (xs, e), a, kwargs = args
        conv(xs, e, a, **kwargs) if layer == "GINEConv" else conv(xs, e, **kwargs)
    assert sizes[1] == sizes[0]


@pytest.mark.parametrize("layer", ["SAGEConv", "GINConv", "GINEConv", "SAGEConv project"])
def test_target_to_source_pair_reads_x0_as_pyg(layer):
    """flow="target_to_source" with a pair (x0, x1): PyG's generated argument collection
    gathers the messages from x0 at edge_index[1] into edge_index[0] (x1 the root):
    outputs, gradients and the message hooks' x_j as PyG's."""
    x0, ei, g = _graph(23)
    x1 = torch.randn(N, C, generator=g, dtype=torch.float64)
    attr = torch.randn(ei.size(1), C, generator=g, dtype=torch.float64)

    def make(lib):
        if layer.startswith("SAGEConv"):
            return lib.SAGEConv(C, C_OUT, flow="target_to_source", project=layer.endswith("project"))
        return getattr(lib, layer)(torch.nn.Linear(C, C_OUT), flow="target_to_source")

    pyg, ew = _pair(make)
    records = ([], [])
    for conv, record in zip((pyg, ew), records):
        conv.register_message_forward_pre_hook(lambda m, inputs, record=record: record.append(
            ("message_pre", _detached(inputs[0]))))
    if layer == "GINEConv":
        call = lambda m, a, b, e: m((a, b), ei, e)  # noqa: E731
        tensors = (x0, x1, attr)
    else:
        call = lambda m, a, b: m((a, b), ei)  # noqa: E731
        tensors = (x0, x1)
    _same_run(pyg, ew, call, tensors)
    _assert_same_records(records[1], records[0])


@pytest.mark.parametrize("layer", LOW_PRECISION_LAYERS)
def test_half_precision_x_into_a_float32_layer_as_pyg(layer):
    """bfloat16 x into a float32 layer (no autocast): where PyG's linear fails (a
    RuntimeError) Edgewise fails too (also a ValueError), naming the layer and the
    dtypes; GINConv / GINEConv aggregate first and PyG runs them: so does Edgewise."""
    x, ei, g = _graph(24)
    attr = torch.randn(ei.size(1), C, generator=g, dtype=torch.bfloat16)
    call = lambda m: m(x.bfloat16(), ei, attr) if layer == "GINEConv" else m(x.bfloat16(), ei)  # noqa: E731
    pyg, ew = (m.float() for m in _pair(_make_layer, layer=layer))
    expected, got = _raised(lambda: call(pyg)), _raised(lambda: call(ew))
    if layer in ("GINConv", "GINEConv"):
        assert expected is None and got is None
        out_pyg, out_ew = call(pyg), call(ew)
        assert out_ew.dtype == out_pyg.dtype
        torch.testing.assert_close(out_ew, out_pyg, atol=3e-2, rtol=3e-2)
        return
    assert isinstance(expected, RuntimeError)
    assert isinstance(got, RuntimeError) and isinstance(got, ValueError)
    assert layer in str(got) and "bfloat16" in str(got) and "float32" in str(got)


_NARROW_MAKERS = {
    "GCNConv": lambda nn: nn.GCNConv(C, C_OUT),
    "SAGEConv": lambda nn: nn.SAGEConv(C, C_OUT),
    "GINConv": lambda nn: nn.GINConv(torch.nn.Linear(C, C_OUT)),
    "GINEConv": lambda nn: nn.GINEConv(torch.nn.Linear(C, C_OUT), edge_dim=D),
    "GATConv": lambda nn: nn.GATConv(C, C_OUT, heads=2),
    "GATv2Conv": lambda nn: nn.GATv2Conv(C, C_OUT, heads=2),
}


@pytest.mark.parametrize("name", sorted(_NARROW_MAKERS))
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32])
def test_every_integer_type_pyg_takes_for_edge_index_gives_pygs_results(name, dtype):
    # PyG's MessagePassing admits these types; its layers then fail on some (index_select
    # wants int32 / int64) and PyG's GINConv / SAGEConv gradients with int32 differ from
    # int64's (torch_geometric 2.8; GINEConv's too): the reference is PyG's layer on the
    # int64 graph.
    x, ei, g = _graph(31)
    attr = torch.randn(ei.size(1), D, generator=g, dtype=torch.float64)
    pyg, ew = _pair(_NARROW_MAKERS[name])
    extra = (attr,) if name == "GINEConv" else ()
    narrow = ei.to(dtype)
    _assert_same(_run(ew, lambda layer, xx, *rest: layer(xx, narrow, *rest), (x, *extra)),
                 _run(pyg, lambda layer, xx, *rest: layer(xx, ei, *rest), (x, *extra)))


@pytest.mark.parametrize("name", sorted(_NARROW_MAKERS))
@pytest.mark.parametrize("dtype", [torch.uint16, torch.float32, torch.bool])
def test_edge_index_of_a_type_pyg_refuses_raises_pygs_message(name, dtype):
    x, ei, g = _graph(32)
    attr = torch.randn(ei.size(1), D, generator=g, dtype=torch.float64)
    _, ew = _pair(_NARROW_MAKERS[name])
    extra = (attr,) if name == "GINEConv" else ()
    with pytest.raises(ValueError, match=f"Expected 'edge_index' to be of integer type \\(got '{dtype}'\\)"):
        ew(x, ei.to(dtype), *extra)


@pytest.mark.parametrize("cls", ["GATConv", "GATv2Conv"])
@pytest.mark.parametrize("kwargs", [dict(), dict(add_self_loops=False), dict(heads=2, concat=False),
                                    dict(heads=2, edge_dim=D), dict(edge_dim=D, fill_value=0.5)])
def test_gat_target_to_source_flow_as_pyg(cls, kwargs):
    x, ei, g = _graph(33)
    ei = torch.cat([ei, ei[:, :3]], dim=1)  # duplicate edges
    attr = torch.randn(ei.size(1), D, generator=g, dtype=torch.float64)
    extra = (attr,) if "edge_dim" in kwargs else ()
    pyg, ew = _pair(lambda nn: getattr(nn, cls)(C, C_OUT, flow="target_to_source", **kwargs))
    _same_run(pyg, ew, lambda layer, xx, *rest: layer(xx, ei, *rest), (x, *extra))
    out_p, (ei_p, att_p) = pyg(x, ei, *extra, return_attention_weights=True)
    out_e, (ei_e, att_e) = ew(x, ei, *extra, return_attention_weights=True)
    assert torch.equal(ei_p, ei_e)
    torch.testing.assert_close(att_e, att_p, rtol=1e-5, atol=1e-8)
    # The reversed flow is not the plain one (the test would pass for a layer ignoring it).
    plain = getattr(ewnn, cls)(C, C_OUT, **kwargs).double()
    plain.load_state_dict(ew.state_dict())
    assert not torch.allclose(plain(x, ei, *extra), out_e)


@pytest.mark.parametrize("cls", ["GATConv", "GATv2Conv"])
@pytest.mark.parametrize("kwargs", [dict(), dict(add_self_loops=False, heads=2), dict(residual=True),
                                    dict(edge_dim=D)])
def test_gat_target_to_source_with_a_pair_of_equal_sizes_as_pyg(cls, kwargs):
    """A pair (x_src, x_dst) under flow="target_to_source": separate source and
    destination weights, so swapped roles would show."""
    x, ei, g = _graph(35)
    x_dst = torch.randn(x.shape, generator=g, dtype=torch.float64)
    attr = torch.randn(ei.size(1), D, generator=g, dtype=torch.float64)
    extra = (attr,) if "edge_dim" in kwargs else ()
    pyg, ew = _pair(lambda nn: getattr(nn, cls)((C, C), C_OUT, flow="target_to_source", **kwargs))
    _same_run(pyg, ew, lambda layer, xs, xd, *rest: layer((xs, xd), ei, *rest), (x, x_dst, *extra))
    swapped = getattr(ewnn, cls)((C, C), C_OUT, flow="target_to_source", **kwargs).double()
    swapped.load_state_dict(ew.state_dict())
    assert not torch.allclose(swapped((x_dst, x), ei, *extra), ew((x, x_dst), ei, *extra))


@pytest.mark.parametrize("cls", ["GATConv", "GATv2Conv"])
def test_gat_target_to_source_refuses_what_it_does_not_run(cls):
    x, ei, _ = _graph(34)
    layer = getattr(ewnn, cls)(C, C_OUT, flow="target_to_source").double()
    with pytest.raises(ValueError, match="as many source as destination nodes \\(got 13 and 5\\)"):
        layer((x, x[:5]), ei)
    adj = torch.sparse_coo_tensor(ei.flip(0), torch.ones(ei.size(1), dtype=torch.float64), (N, N)).to_sparse_csr()
    with pytest.raises(ValueError, match="target_to_source"):
        layer(x, adj)
    with pytest.raises(ValueError, match="flow"):
        getattr(ewnn, cls)(C, C_OUT, flow="sideways")
