"""edgewise.torch.nn's SAGEConv and GINConv take PyG's message-passing inputs: bipartite
(x_src, x_dst) pairs (x_dst None too), size, flow, lazy in_channels = -1 and size as
the third positional argument. Outputs and gradients against PyG's own layers with
the same parameters, and against a plain-torch reference where PyG is missing."""

import pytest

torch = pytest.importorskip("torch")
ewt = pytest.importorskip("edgewise.torch")

from edgewise.torch import nn as ewnn  # noqa: E402

try:
    import torch_geometric.nn as pyg_nn
except Exception:  # PyG is optional: the plain-torch reference still runs
    pyg_nn = None

# The comparisons need PyG itself; .ci/run installs it (tools/install_deps.sh --test),
# so CI always runs them. Without PyG only the plain-reference tests below run.
needs_pyg = pytest.mark.skipif(pyg_nn is None, reason="compares with PyG's layers: torch_geometric is not "
                                                       "installed here (tools/install_deps.sh --test installs it)")

N_SRC, N_DST, C, C_OUT = 30, 17, 8, 5


def _bipartite(seed=0, edges=120):
    g = torch.Generator().manual_seed(seed)
    ei = torch.stack([torch.randint(0, N_SRC - 2, (edges,), generator=g),
                      torch.randint(0, N_DST - 2, (edges,), generator=g)])  # trailing nodes isolated
    ei = torch.cat([ei, ei[:, :6]], dim=1)  # duplicate edges
    x_src = torch.randn(N_SRC, C, generator=g, dtype=torch.float64)
    x_dst = torch.randn(N_DST, C, generator=g, dtype=torch.float64)
    return x_src, x_dst, ei


def _reference(x_src, ei, n_dst, reduce):
    msg = x_src[ei[0]]
    out = torch.zeros(n_dst, x_src.size(1), dtype=x_src.dtype)
    if reduce == "max":
        return out.scatter_reduce(0, ei[1].unsqueeze(1).expand_as(msg), msg, "amax", include_self=False)
    out = out.index_add(0, ei[1], msg)
    if reduce == "mean":
        out = out / torch.bincount(ei[1], minlength=n_dst).clamp(min=1).unsqueeze(1)
    return out


def _same_parameters(ew_layer, pyg_layer):
    ew_layer.load_state_dict(pyg_layer.state_dict())


def _outputs_and_grads(layer, call, tensors):
    leaves = [t.clone().requires_grad_() if t.is_floating_point() else t for t in tensors]
    out = call(layer, *leaves)
    weights = torch.randn(out.shape, dtype=out.dtype, generator=torch.Generator().manual_seed(3))
    wrt = [t for t in leaves if t.requires_grad] + list(layer.parameters())
    return out.detach(), torch.autograd.grad((out * weights).sum(), wrt, allow_unused=True)


def _assert_same(a, b):
    out_a, grads_a = a
    out_b, grads_b = b
    torch.testing.assert_close(out_a, out_b)
    for ga, gb in zip(grads_a, grads_b):
        assert (ga is None) == (gb is None)
        if ga is not None:
            torch.testing.assert_close(ga, gb)


def _layer_pair(layer):
    """(PyG's layer, Edgewise's) in float64 with the same parameters, for "GCNConv",
    "GINConv" and "SAGEConv <aggr>" ("multi": ["mean", "max"])."""
    torch.manual_seed(0)
    if layer == "GCNConv":
        pyg, ew = pyg_nn.GCNConv(C, C_OUT), ewnn.GCNConv(C, C_OUT)
    elif layer in ("GATConv", "GATv2Conv"):
        pyg, ew = getattr(pyg_nn, layer)(C, C_OUT, heads=2), getattr(ewnn, layer)(C, C_OUT, heads=2)
    elif layer == "GINConv":
        pyg, ew = pyg_nn.GINConv(torch.nn.Linear(C, C_OUT)), ewnn.GINConv(torch.nn.Linear(C, C_OUT))
    else:
        aggr = layer.split()[1]
        aggr = ["mean", "max"] if aggr == "multi" else aggr
        pyg, ew = pyg_nn.SAGEConv(C, C_OUT, aggr=aggr), ewnn.SAGEConv(C, C_OUT, aggr=aggr)
    pyg, ew = pyg.double(), ew.double()
    _same_parameters(ew, pyg)
    return pyg, ew


CALLS = {
    "pair": lambda m, xs, xd, ei: m((xs, xd), ei),
    "pair_size": lambda m, xs, xd, ei: m((xs, xd), ei, size=(N_SRC, N_DST)),
    "pair_no_root": lambda m, xs, xd, ei: m((xs, None), ei, size=(N_SRC, N_DST)),
    "size_positional": lambda m, xs, xd, ei: m((xs, xd), ei, (N_SRC, N_DST)),
}


@needs_pyg
@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("aggr", ["mean", "max", "sum"])
def test_sageconv_bipartite_matches_pyg(call, aggr):
    x_src, x_dst, ei = _bipartite()
    torch.manual_seed(0)
    pyg = pyg_nn.SAGEConv((C, C), C_OUT, aggr=aggr).double()
    ew = ewnn.SAGEConv((C, C), C_OUT, aggr=aggr).double()
    _same_parameters(ew, pyg)
    fn = CALLS[call]
    _assert_same(_outputs_and_grads(ew, fn, (x_src, x_dst, ei)), _outputs_and_grads(pyg, fn, (x_src, x_dst, ei)))


@needs_pyg
@pytest.mark.parametrize("call", list(CALLS))
def test_ginconv_bipartite_matches_pyg(call):
    x_src, x_dst, ei = _bipartite(1)
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(C, C_OUT), torch.nn.ReLU(), torch.nn.Linear(C_OUT, C_OUT)).double()
    pyg = pyg_nn.GINConv(mlp, train_eps=True).double()
    ew = ewnn.GINConv(torch.nn.Sequential(torch.nn.Linear(C, C_OUT), torch.nn.ReLU(),
                                          torch.nn.Linear(C_OUT, C_OUT)).double(), train_eps=True).double()
    _same_parameters(ew, pyg)
    fn = CALLS[call]
    _assert_same(_outputs_and_grads(ew, fn, (x_src, x_dst, ei)), _outputs_and_grads(pyg, fn, (x_src, x_dst, ei)))


@needs_pyg
@pytest.mark.parametrize("layer", ["SAGEConv", "GINConv", "GCNConv", "GCNConv weighted", "GCNConv plain"])
def test_target_to_source_flow_matches_pyg(layer):
    g = torch.Generator().manual_seed(4)
    ei = torch.randint(0, 25, (2, 90), generator=g)
    x = torch.randn(28, C, generator=g, dtype=torch.float64)
    torch.manual_seed(0)
    w = torch.rand(90, generator=g, dtype=torch.float64) + 0.1
    fn = lambda m, x, ei: m(x, ei)  # noqa: E731
    if layer == "SAGEConv":
        pyg = pyg_nn.SAGEConv(C, C_OUT, flow="target_to_source").double()
        ew = ewnn.SAGEConv(C, C_OUT, flow="target_to_source").double()
    elif layer == "GINConv":
        pyg = pyg_nn.GINConv(torch.nn.Linear(C, C_OUT), flow="target_to_source").double()
        ew = ewnn.GINConv(torch.nn.Linear(C, C_OUT), flow="target_to_source").double()
    else:
        normalize = layer != "GCNConv plain"
        pyg = pyg_nn.GCNConv(C, C_OUT, normalize=normalize, flow="target_to_source").double()
        ew = ewnn.GCNConv(C, C_OUT, normalize=normalize, flow="target_to_source").double()
        if layer != "GCNConv":
            fn = lambda m, x, ei, w: m(x, ei, w)  # noqa: E731
    _same_parameters(ew, pyg)
    tensors = (x, ei, w) if fn.__code__.co_argcount == 4 else (x, ei)
    _assert_same(_outputs_and_grads(ew, fn, tensors), _outputs_and_grads(pyg, fn, tensors))


@pytest.mark.parametrize("aggr", ["mean", "max", "sum"])
def test_sageconv_bipartite_against_reference(aggr):
    """Without PyG too: lin_l(aggr of x_src) + lin_r(x_dst)."""
    x_src, x_dst, ei = _bipartite(2)
    layer = ewnn.SAGEConv((C, C), C_OUT, aggr=aggr).double()
    out = layer((x_src, x_dst), ei)
    expected = layer.lin_l(_reference(x_src, ei, N_DST, aggr)) + layer.lin_r(x_dst)
    torch.testing.assert_close(out, expected)
    no_root = layer((x_src, None), ei, size=(N_SRC, N_DST))
    torch.testing.assert_close(no_root, layer.lin_l(_reference(x_src, ei, N_DST, aggr)))


def test_lazy_gcn():
    x_src, _, ei = _bipartite(3)
    layer = ewnn.GCNConv(-1, C_OUT).double()
    assert layer(x_src, ei.clamp(max=N_SRC - 1)).shape == (N_SRC, C_OUT)
    assert layer.lin.weight.shape == (C_OUT, C)


def test_lazy_in_channels():
    x_src, x_dst, ei = _bipartite(3)
    layer = ewnn.SAGEConv(-1, C_OUT).double()
    out = layer((x_src, x_dst), ei)
    assert out.shape == (N_DST, C_OUT)
    assert layer.lin_l.weight.shape == (C_OUT, C)
    pair = ewnn.SAGEConv((-1, -1), C_OUT).double()
    assert pair((x_src, x_dst), ei).shape == (N_DST, C_OUT)


def test_bad_message_inputs_name_the_problem():
    x_src, x_dst, ei = _bipartite(4)
    layer = ewnn.SAGEConv((C, C), C_OUT).double()
    with pytest.raises(ValueError, match="expected size 99"):
        layer((x_src, x_dst), ei, size=(99, N_DST))
    with pytest.raises(ValueError, match="pair"):
        layer((x_src, x_dst, x_dst), ei)
    with pytest.raises(ValueError, match="size must be a pair"):
        layer((x_src, x_dst), ei, size=(N_SRC,))
    bad = ei.clone()
    bad[1, 0] = N_DST  # a destination past x_dst
    with pytest.raises(ValueError, match="destinations"):
        layer((x_src, x_dst), bad)
    with pytest.raises(ValueError, match="flow"):
        ewnn.SAGEConv(C, C_OUT, flow="sideways")


def _adjacency(ei, n_src, n_dst, values, layout):
    adj = torch.sparse_coo_tensor(ei.flip(0), values, (n_dst, n_src)).coalesce()
    if layout == "csr":
        return adj.to_sparse_csr()
    if layout == "csc":
        return adj.to_sparse_csc()
    return adj


_SPARSE_CASES = [(layer, layout) for layer in ("SAGEConv mean", "SAGEConv max", "GINConv", "GCNConv", "GCNConv plain")
                 for layout in ("coo", "csr", "csc")
                 if not (layer.startswith("GCNConv") and layout == "csc")]  # PyG refuses: the test below


@needs_pyg
@pytest.mark.parametrize("layer,layout", _SPARSE_CASES)
def test_sparse_adjacency_input_matches_pyg(layer, layout):
    g = torch.Generator().manual_seed(6)
    n = 26
    ei = torch.randint(0, n - 2, (2, 100), generator=g)
    ei = torch.cat([ei, torch.arange(0, n - 2, 4).repeat(2, 1)], dim=1)  # some self loops
    values = torch.rand(ei.size(1), generator=g, dtype=torch.float64) + 0.2
    x = torch.randn(n, C, generator=g, dtype=torch.float64)
    torch.manual_seed(0)
    if layer.startswith("SAGEConv"):
        aggr = layer.split()[1]
        pyg, ew = pyg_nn.SAGEConv(C, C_OUT, aggr=aggr), ewnn.SAGEConv(C, C_OUT, aggr=aggr)
        adj = _adjacency(ei, n, n, torch.ones_like(values), layout)  # PyG's SAGEConv ignores values
    elif layer == "GINConv":
        pyg, ew = pyg_nn.GINConv(torch.nn.Linear(C, C_OUT)), ewnn.GINConv(torch.nn.Linear(C, C_OUT))
        adj = _adjacency(ei, n, n, values, layout)
    else:
        normalize = layer == "GCNConv"
        pyg = pyg_nn.GCNConv(C, C_OUT, normalize=normalize, add_self_loops=normalize)
        ew = ewnn.GCNConv(C, C_OUT, normalize=normalize, add_self_loops=normalize)
        adj = _adjacency(ei, n, n, values, layout)
    pyg, ew = pyg.double(), ew.double()
    _same_parameters(ew, pyg)
    fn = lambda m, x: m(x, adj)  # noqa: E731
    _assert_same(_outputs_and_grads(ew, fn, (x,)), _outputs_and_grads(pyg, fn, (x,)))


def test_sparse_adjacency_errors():
    x_src, x_dst, ei = _bipartite(5)
    adj = _adjacency(ei, N_SRC, N_DST, torch.ones(ei.size(1), dtype=torch.float64), "csr")
    sage = ewnn.SAGEConv((C, C), C_OUT).double()
    assert sage((x_src, x_dst), adj).shape == (N_DST, C_OUT)
    with pytest.raises(ValueError, match="expected size"):
        sage((x_src[:-1], x_dst), adj)
    with pytest.raises(ValueError, match="target_to_source"):
        ewnn.SAGEConv(C, C_OUT, flow="target_to_source").double()(x_src, _adjacency(ei, N_SRC, N_SRC, torch.ones(
            ei.size(1), dtype=torch.float64), "csr"))
    with pytest.raises(ValueError, match=r"\[N, N\]"):
        ewnn.GCNConv(C, C_OUT).double()(x_src, adj)


@needs_pyg
def test_gcn_csc_adjacency_which_pyg_refuses_equals_csr():
    """PyG's gcn_norm raises NotImplementedError for CSC; Edgewise's GCNConv takes it."""
    g = torch.Generator().manual_seed(16)
    n = 18
    ei = torch.randint(0, n, (2, 60), generator=g)
    values = torch.rand(60, generator=g, dtype=torch.float64) + 0.2
    x = torch.randn(n, C, generator=g, dtype=torch.float64)
    torch.manual_seed(0)
    pyg, ew = pyg_nn.GCNConv(C, C_OUT).double(), ewnn.GCNConv(C, C_OUT).double()
    _same_parameters(ew, pyg)
    with pytest.raises(NotImplementedError):
        pyg(x, _adjacency(ei, n, n, values, "csc"))
    torch.testing.assert_close(ew(x, _adjacency(ei, n, n, values, "csc")), pyg(x, _adjacency(ei, n, n, values, "csr")))


def test_gcn_sparse_layouts_agree_with_its_edge_list_form():
    """Without PyG too: adj_t in any layout = the edge list with PyG's sparse self-loop
    rule (one loop added per node, existing loops kept)."""
    g = torch.Generator().manual_seed(7)
    n = 20
    ei = torch.randint(0, n, (2, 70), generator=g)
    values = torch.rand(70, generator=g, dtype=torch.float64) + 0.2
    x = torch.randn(n, C, generator=g, dtype=torch.float64)
    layer = ewnn.GCNConv(C, C_OUT).double()
    outs = [layer(x, _adjacency(ei, n, n, values, layout)) for layout in ("coo", "csr", "csc")]
    for out in outs[1:]:
        torch.testing.assert_close(out, outs[0])
    coalesced = torch.sparse_coo_tensor(ei.flip(0), values, (n, n)).coalesce()
    rows, cols = coalesced.indices()
    loops = torch.arange(n)
    src, dst = torch.cat([cols, loops]), torch.cat([rows, loops])
    w = torch.cat([coalesced.values(), torch.ones(n, dtype=torch.float64)])
    deg = torch.zeros(n, dtype=torch.float64).index_add(0, dst, w)
    norm = deg.pow(-0.5)[src] * w * deg.pow(-0.5)[dst]
    h = layer.lin(x)
    expected = torch.zeros(n, C_OUT, dtype=torch.float64).index_add(0, dst, h[src] * norm.unsqueeze(1)) + layer.bias
    torch.testing.assert_close(outs[0], expected)


@needs_pyg
@pytest.mark.parametrize("layer", ["GCNConv", "SAGEConv mean", "SAGEConv max", "GINConv"])
def test_static_graph_batches_match_pyg(layer):
    """x [B, N, C] sharing one edge_index (PyG's static-graph input)."""
    g = torch.Generator().manual_seed(8)
    n = 22
    ei = torch.randint(0, n - 2, (2, 80), generator=g)
    x = torch.randn(3, n, C, generator=g, dtype=torch.float64)
    pyg, ew = _layer_pair(layer)
    fn = lambda m, x, ei: m(x, ei)  # noqa: E731
    _assert_same(_outputs_and_grads(ew, fn, (x, ei)), _outputs_and_grads(pyg, fn, (x, ei)))


@needs_pyg
@pytest.mark.parametrize("aggr,aggr_kwargs", [
    (["mean", "max"], None),
    (["sum", "std"], {"mode": "proj", "mode_kwargs": {"in_channels": C, "out_channels": C}}),
    ("lstm", None),
    ("softmax", {"learn": True}),
    ("median", None),
    ("module", None),
])
def test_sageconv_pyg_aggregations_match_pyg(aggr, aggr_kwargs):
    from torch_geometric.nn import aggr as pyg_aggr
    from torch_geometric.utils import sort_edge_index

    x_src, x_dst, ei = _bipartite(9)
    ei = sort_edge_index(ei, sort_by_row=False)  # LSTM aggregation needs the index sorted
    kwargs = {} if aggr_kwargs is None else {"aggr_kwargs": aggr_kwargs}
    if aggr == "module":
        torch.manual_seed(0)
        pyg = pyg_nn.SAGEConv((C, C), C_OUT, aggr=pyg_aggr.PowerMeanAggregation(learn=True))
        torch.manual_seed(0)
        ew = ewnn.SAGEConv((C, C), C_OUT, aggr=pyg_aggr.PowerMeanAggregation(learn=True))
    else:
        torch.manual_seed(0)
        pyg = pyg_nn.SAGEConv((C, C), C_OUT, aggr=aggr, **kwargs)
        torch.manual_seed(0)
        ew = ewnn.SAGEConv((C, C), C_OUT, aggr=aggr, **kwargs)
    pyg, ew = pyg.double(), ew.double()
    assert set(ew.state_dict()) == set(pyg.state_dict())
    _same_parameters(ew, pyg)
    fn = lambda m, xs, xd, ei: m((xs, xd.abs() + 0.1), ei)  # noqa: E731  (power mean: positive inputs)
    if aggr == "module":
        x_src = x_src.abs() + 0.1
    _assert_same(_outputs_and_grads(ew, fn, (x_src, x_dst, ei)), _outputs_and_grads(pyg, fn, (x_src, x_dst, ei)))


def _error(make):
    try:
        make()
    except Exception as error:  # noqa: BLE001
        return type(error), str(error)
    return None


@needs_pyg
@pytest.mark.parametrize("case", ["gcn_loops_without_norm", "gcn_tuple", "sage_lazy_project", "gine_widths",
                                  "sage_bad_flow", "size_mismatch", "sparse_reverse_flow"])
def test_pyg_error_messages(case):
    x = torch.randn(6, C)
    ei = torch.tensor([[0, 1, 2], [1, 2, 3]])
    calls = {
        "gcn_loops_without_norm": lambda nn: nn.GCNConv(C, C_OUT, add_self_loops=True, normalize=False),
        "gcn_tuple": lambda nn: nn.GCNConv(C, C_OUT)((x, x), ei),
        "sage_lazy_project": lambda nn: nn.SAGEConv(-1, C_OUT, project=True),
        "gine_widths": lambda nn: nn.GINEConv(torch.nn.Linear(C, C_OUT))(x, ei, torch.randn(3, 2)),
        "sage_bad_flow": lambda nn: nn.SAGEConv(C, C_OUT, flow="sideways"),
        "size_mismatch": lambda nn: nn.SAGEConv(C, C_OUT)((x, x[:4]), ei, size=(6, 5)),
        "sparse_reverse_flow": lambda nn: nn.SAGEConv(C, C_OUT, flow="target_to_source")(
            x, torch.sparse_coo_tensor(ei.flip(0), torch.ones(3), (6, 6)).to_sparse_csr()),
    }
    expected = _error(lambda: calls[case](pyg_nn))
    assert expected is not None
    assert _error(lambda: calls[case](ewnn)) == expected


@needs_pyg
@pytest.mark.parametrize("case", ["gat_static", "gatv2_static", "gatv2_edge_attr_without_edge_dim",
                                  "gcn_sparse_not_square", "gat_destination_past_x_dst",
                                  "gatv2_destination_past_x_dst", "sage_destination_past_x_dst",
                                  "gin_destination_past_x_dst"])
def test_pyg_assertions_and_destination_errors(case):
    """Where PyG's layer asserts, or fails on a destination outside x_dst: an error of
    PyG's type carrying PyG's message (if it has one), which is also a ValueError."""
    x = torch.randn(6, C)
    ei = torch.tensor([[0, 1, 2], [1, 2, 3]])
    calls = {
        "gat_static": lambda nn: nn.GATConv(C, C_OUT)(x.view(2, 3, C), ei),
        "gatv2_static": lambda nn: nn.GATv2Conv(C, C_OUT)(x.view(2, 3, C), ei),
        "gatv2_edge_attr_without_edge_dim": lambda nn: nn.GATv2Conv(C, C_OUT)(x, ei, torch.randn(3, 2)),
        "gcn_sparse_not_square": lambda nn: nn.GCNConv(C, C_OUT)(
            x, torch.sparse_coo_tensor(ei.flip(0), torch.ones(3), (5, 6)).to_sparse_csr()),
        "gat_destination_past_x_dst": lambda nn: nn.GATConv(C, C_OUT)((x, x[:2]), ei),
        "gatv2_destination_past_x_dst": lambda nn: nn.GATv2Conv(C, C_OUT)((x, x[:2]), ei),
        "sage_destination_past_x_dst": lambda nn: nn.SAGEConv(C, C_OUT)((x, x[:2]), ei),
        "gin_destination_past_x_dst": lambda nn: nn.GINConv(torch.nn.Linear(C, C_OUT))((x, x[:2]), ei),
    }
    with pytest.raises(Exception) as expected:  # noqa: PT011 - PyG's error, whatever it is, is the reference
        calls[case](pyg_nn)
    with pytest.raises(type(expected.value)) as got:
        calls[case](ewnn)
    assert isinstance(got.value, ValueError) and str(expected.value) in str(got.value)


HOOKS = {
    "message_pre": ("register_message_forward_pre_hook",
                    lambda m, inputs: ({**inputs[0], "x_j": inputs[0]["x_j"] * 3},)),
    "message": ("register_message_forward_hook", lambda m, inputs, out: out.relu()),
    "aggregate_pre": ("register_aggregate_forward_pre_hook", lambda m, inputs: None),
    "aggregate": ("register_aggregate_forward_hook", lambda m, inputs, out: out * 2 + 1),
    "propagate_pre": ("register_propagate_forward_pre_hook", lambda m, inputs: None),
    "propagate": ("register_propagate_forward_hook", lambda m, inputs, out: out - 1),
}


@needs_pyg
@pytest.mark.parametrize("hook", list(HOOKS))
@pytest.mark.parametrize("layer", ["GCNConv", "SAGEConv mean", "SAGEConv max", "GINConv", "SAGEConv multi", "GATConv",
                                   "GATv2Conv"])
def test_message_passing_hooks_match_pyg(layer, hook):
    g = torch.Generator().manual_seed(10)
    n = 24
    ei = torch.randint(0, n - 2, (2, 90), generator=g)
    x = torch.randn(n, C, generator=g, dtype=torch.float64)
    pyg, ew = _layer_pair(layer)
    method, fn = HOOKS[hook]
    calls = {"pyg": [], "ew": []}
    for name, module in (("pyg", pyg), ("ew", ew)):
        def counted(*args, name=name):
            calls[name].append(sorted(args[1][0]) if isinstance(args[1], tuple) and isinstance(args[1][0], dict)
                               else len(args))
            return fn(*args)
        getattr(module, method)(counted)
    call = lambda m, x, ei: m(x, ei)  # noqa: E731
    _assert_same(_outputs_and_grads(ew, call, (x, ei)), _outputs_and_grads(pyg, call, (x, ei)))
    assert calls["ew"] == calls["pyg"] and calls["ew"]


def test_hooks_are_removable_and_the_fused_path_returns():
    x_src, x_dst, ei = _bipartite(11)
    layer = ewnn.SAGEConv((C, C), C_OUT).double()
    plain = layer((x_src, x_dst), ei)
    handle = layer.register_message_forward_hook(lambda m, inputs, out: out * 0)
    assert layer.has_message_passing_hooks()
    hooked = layer((x_src, x_dst), ei)
    torch.testing.assert_close(hooked, layer.lin_r(x_dst) + layer.lin_l.bias)
    handle.remove()
    assert not layer.has_message_passing_hooks()
    torch.testing.assert_close(layer((x_src, x_dst), ei), plain)


_GAT_CASES = [(layer, case) for layer in ("GATConv", "GATv2Conv")
              for case in ("pair", "pair_loops", "pair_no_dst", "shared_lin_pair", "size", "edge_attr", "residual")
              if not (layer == "GATv2Conv" and case in ("pair_no_dst", "size"))]  # PyG refuses: the test below


@needs_pyg
@pytest.mark.parametrize("layer,case", _GAT_CASES)
def test_gat_bipartite_matches_pyg(layer, case):
    x_src, x_dst, ei = _bipartite(12)
    edge_attr = torch.randn(ei.size(1), 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    kwargs = {"heads": 2, "add_self_loops": case in ("pair_loops", "edge_attr")}
    if case == "edge_attr":
        kwargs["edge_dim"] = 3
    if case == "residual":
        kwargs["residual"] = True
    in_channels = C if case == "shared_lin_pair" else (C, C)
    torch.manual_seed(0)
    pyg = getattr(pyg_nn, layer)(in_channels, C_OUT, **kwargs).double()
    ew = getattr(ewnn, layer)(in_channels, C_OUT, **kwargs).double()
    _same_parameters(ew, pyg)
    calls = {
        "pair": lambda m, xs, xd, ei, ea: m((xs, xd), ei),
        "pair_loops": lambda m, xs, xd, ei, ea: m((xs, xd), ei),
        "pair_no_dst": lambda m, xs, xd, ei, ea: m((xs, None), ei, size=(N_SRC, N_DST)),
        "shared_lin_pair": lambda m, xs, xd, ei, ea: m((xs, xd), ei),
        "size": lambda m, xs, xd, ei, ea: m((xs, xd), ei, size=(N_SRC, N_DST)),
        "edge_attr": lambda m, xs, xd, ei, ea: m((xs, xd), ei, ea),
        "residual": lambda m, xs, xd, ei, ea: m((xs, xd), ei),
    }
    fn = calls[case]
    tensors = (x_src, x_dst, ei, edge_attr)
    _assert_same(_outputs_and_grads(ew, fn, tensors), _outputs_and_grads(pyg, fn, tensors))


@needs_pyg
def test_gatv2_size_which_pyg_refuses_changes_nothing():
    """PyG's GATv2Conv.forward has no size argument; Edgewise's takes it, and a size
    that agrees with x changes nothing."""
    x_src, x_dst, ei = _bipartite(17)
    torch.manual_seed(0)
    pyg = pyg_nn.GATv2Conv((C, C), C_OUT, heads=2, add_self_loops=False).double()
    ew = ewnn.GATv2Conv((C, C), C_OUT, heads=2, add_self_loops=False).double()
    _same_parameters(ew, pyg)
    with pytest.raises(TypeError):
        pyg((x_src, x_dst), ei, size=(N_SRC, N_DST))
    torch.testing.assert_close(ew((x_src, x_dst), ei, size=(N_SRC, N_DST)), pyg((x_src, x_dst), ei))


@needs_pyg
@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("layer", ["GATConv", "GATv2Conv"])
def test_gat_sparse_adjacency_matches_pyg(layer, layout):
    g = torch.Generator().manual_seed(13)
    n = 21
    ei = torch.randint(0, n - 2, (2, 70), generator=g)
    x = torch.randn(n, C, generator=g, dtype=torch.float64)
    adj = _adjacency(ei, n, n, torch.rand(ei.size(1), generator=g, dtype=torch.float64), layout)
    torch.manual_seed(0)
    pyg = getattr(pyg_nn, layer)(C, C_OUT, heads=2).double()
    ew = getattr(ewnn, layer)(C, C_OUT, heads=2).double()
    _same_parameters(ew, pyg)
    fn = lambda m, x: m(x, adj)  # noqa: E731
    _assert_same(_outputs_and_grads(ew, fn, (x,)), _outputs_and_grads(pyg, fn, (x,)))


@needs_pyg
@pytest.mark.parametrize("case", ["pair", "pair_no_root", "size", "target_to_source", "edge_dim"])
def test_gine_message_inputs_match_pyg(case):
    x_src, x_dst, ei = _bipartite(14)
    edge_attr = torch.randn(ei.size(1), 3 if case == "edge_dim" else C, dtype=torch.float64,
                            generator=torch.Generator().manual_seed(2))
    kwargs = {"edge_dim": 3} if case == "edge_dim" else {}
    if case == "target_to_source":
        kwargs["flow"] = "target_to_source"
    torch.manual_seed(0)
    pyg = pyg_nn.GINEConv(torch.nn.Linear(C, C_OUT), train_eps=True, **kwargs).double()
    ew = ewnn.GINEConv(torch.nn.Linear(C, C_OUT), train_eps=True, **kwargs).double()
    _same_parameters(ew, pyg)
    calls = {
        "pair": lambda m, xs, xd, ei, ea: m((xs, xd), ei, ea),
        "pair_no_root": lambda m, xs, xd, ei, ea: m((xs, None), ei, ea, size=(N_SRC, N_DST)),
        "size": lambda m, xs, xd, ei, ea: m((xs, xd), ei, ea, size=(N_SRC, N_DST)),
        "target_to_source": lambda m, xs, xd, ei, ea: m(xs, ei, ea),  # one node set: ei within N_DST
        "edge_dim": lambda m, xs, xd, ei, ea: m((xs, xd), ei, ea),
    }
    fn = calls[case]
    tensors = (x_src, x_dst, ei, edge_attr)
    _assert_same(_outputs_and_grads(ew, fn, tensors), _outputs_and_grads(pyg, fn, tensors))
