"""accelerate() on PyG's typed layers: HeteroLinear, HeteroDictLinear and RGCNConv
(every decomposition, aggregation, input form), HeteroConv and to_hetero models give
PyG's own outputs and gradients; the relational structure is cached per
(edge_index, edge_type) and rebuilt when either changes; deaccelerate() restores PyG."""

import copy

import pytest

torch = pytest.importorskip("torch")
torch_geometric = pytest.importorskip("torch_geometric")
import torch_geometric.nn as pyg_nn  # noqa: E402
from torch_geometric.nn.dense.linear import HeteroDictLinear, HeteroLinear  # noqa: E402

import edgewise.torch.pyg as ew_pyg  # noqa: E402
from edgewise.torch.pyg import _hetero  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(autouse=True)
def _restored():
    ew_pyg.deaccelerate()
    yield
    ew_pyg.deaccelerate()


def _outputs_and_grads(module, call, inputs):
    """(output, gradients of every parameter and floating input) of one forward + backward."""
    module.zero_grad()
    for t in inputs:
        if t.grad is not None:
            t.grad = None
    out = call(module)
    flat = list(out.values()) if isinstance(out, dict) else [out]
    gen = torch.Generator().manual_seed(3)
    loss = sum((o * torch.randn(o.shape, generator=gen, dtype=o.dtype)).sum() for o in flat)
    loss.backward()
    grads = [p.grad.clone() if p.grad is not None else None for p in module.parameters()]
    grads += [t.grad.clone() if t.grad is not None else None for t in inputs]
    return [o.detach().clone() for o in flat], grads


def _same_with_and_without(module, call, inputs=(), rtol=1e-5, atol=1e-5):
    torch.manual_seed(0)
    expected = _outputs_and_grads(module, call, inputs)
    with ew_pyg.accelerated():
        got = _outputs_and_grads(module, call, inputs)
    for a, b in zip(got[0], expected[0]):
        torch.testing.assert_close(a, b, rtol=rtol, atol=atol)
    assert len(got[1]) == len(expected[1])
    for a, b in zip(got[1], expected[1]):
        if b is None:
            assert a is None or torch.count_nonzero(a) == 0
        else:
            torch.testing.assert_close(a, b, rtol=rtol, atol=atol)
    return got


def _typed_rows(n, types, seed, sorted_=False):
    gen = torch.Generator().manual_seed(seed)
    type_vec = torch.randint(0, types, (n,), generator=gen)
    return type_vec.sort().values if sorted_ else type_vec


@pytest.mark.parametrize("sorted_", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_hetero_linear(sorted_, bias, dtype):
    torch.manual_seed(1)
    lin = HeteroLinear(12, 7, num_types=5, is_sorted=sorted_, bias=bias).to(dtype)
    x = torch.randn(40, 12, dtype=dtype, requires_grad=True)
    type_vec = _typed_rows(40, 5, 2, sorted_)
    type_vec[type_vec == 3] = 2  # one type without rows
    # bfloat16: both round each product once, but PyG's loop may sum in another order.
    tol = 2e-2 if dtype == torch.bfloat16 else 1e-5
    _same_with_and_without(lin, lambda m: m(x, type_vec), [x], rtol=tol, atol=tol)


def test_hetero_linear_uses_segment_matmul(monkeypatch):
    calls = []
    original = _hetero.segment_matmul
    monkeypatch.setattr(_hetero, "segment_matmul", lambda *a: calls.append(1) or original(*a))
    lin = HeteroLinear(4, 3, num_types=2)
    with ew_pyg.accelerated():
        lin(torch.randn(5, 4), torch.tensor([1, 0, 1, 1, 0]))
    assert calls == [1]


@pytest.mark.parametrize("forced", [None, True, False])
@pytest.mark.parametrize("types", [3, 12])
def test_hetero_dict_linear(monkeypatch, types, forced):
    import torch_geometric.backend

    monkeypatch.setattr(torch_geometric.backend, "use_segment_matmul", forced)
    calls = []
    original = _hetero.grouped_matmul
    monkeypatch.setattr(_hetero, "grouped_matmul", lambda *a: calls.append(1) or original(*a))
    torch.manual_seed(2)
    in_channels = {f"t{i}": 4 + i for i in range(types)}
    lin = HeteroDictLinear(in_channels, 6)
    xs = {key: torch.randn(3 * (i + 1), c, requires_grad=True) for i, (key, c) in enumerate(in_channels.items())}
    del xs["t1"]  # a type without input
    _same_with_and_without(lin, lambda m: m(xs), list(xs.values()))
    # PyG's switch decides; unset, the CPU keeps PyG's loop (measured faster there).
    assert bool(calls) == bool(forced)


def test_hetero_dict_linear_lazy():
    torch.manual_seed(3)
    lin = HeteroDictLinear(-1, 5, types=["a", "b"])
    xs = {"a": torch.randn(4, 3), "b": torch.randn(2, 6)}
    with ew_pyg.accelerated():
        out = lin(xs)
    expected = {k: lin.lins[k](x) for k, x in xs.items()}
    for k in xs:
        torch.testing.assert_close(out[k], expected[k])


def _relational_graph(n_src, n_dst, edges, relations, seed, bad_types=False):
    gen = torch.Generator().manual_seed(seed)
    edge_index = torch.stack([torch.randint(0, n_src, (edges,), generator=gen),
                              torch.randint(0, n_dst, (edges,), generator=gen)])
    edge_type = torch.randint(0, relations, (edges,), generator=gen)
    if bad_types:
        edge_type[:5] = relations  # outside [0, R)
    return edge_index, edge_type


RGCN_CASES = {
    "plain_mean": dict(kw={}, ),
    "plain_add": dict(kw=dict(aggr="add")),
    "sum": dict(kw=dict(aggr="sum")),
    "bases": dict(kw=dict(num_bases=2)),
    "blocks": dict(kw=dict(num_blocks=2)),
    "no_root_no_bias": dict(kw=dict(root_weight=False, bias=False)),
    "sorted": dict(kw=dict(is_sorted=True), sorted_=True),
}


@pytest.mark.parametrize("case", sorted(RGCN_CASES))
def test_rgcn_conv(case):
    spec = RGCN_CASES[case]
    torch.manual_seed(4)
    conv = pyg_nn.RGCNConv(8, 6, num_relations=4, **spec["kw"])
    edge_index, edge_type = _relational_graph(30, 30, 150, 4, 5, spec.get("bad_types", False))
    if spec.get("sorted_"):
        edge_type, perm = edge_type.sort()
        edge_index = edge_index[:, perm]
    x = torch.randn(30, 8, requires_grad=True)
    _same_with_and_without(conv, lambda m: m(x, edge_index, edge_type), [x])


def test_rgcn_conv_float64_and_isolated_nodes():
    torch.manual_seed(5)
    conv = pyg_nn.RGCNConv(5, 3, num_relations=3).double()
    edge_index, edge_type = _relational_graph(40, 40, 30, 3, 6)  # most nodes without edges
    x = torch.randn(40, 5, dtype=torch.float64, requires_grad=True)
    _same_with_and_without(conv, lambda m: m(x, edge_index, edge_type), [x], rtol=1e-12, atol=1e-12)


def test_rgcn_conv_node_index_input():
    # x = None: trainable embeddings (weight rows indexed by node).
    torch.manual_seed(6)
    conv = pyg_nn.RGCNConv(25, 4, num_relations=3)
    edge_index, edge_type = _relational_graph(25, 25, 80, 3, 7)
    _same_with_and_without(conv, lambda m: m(None, edge_index, edge_type))


def test_rgcn_conv_bipartite_takes_the_aggregate_first_path():
    torch.manual_seed(7)
    conv = pyg_nn.RGCNConv((8, 5), 6, num_relations=3)
    edge_index, edge_type = _relational_graph(50, 10, 120, 3, 8)
    x_src = torch.randn(50, 8, requires_grad=True)
    x_dst = torch.randn(10, 5, requires_grad=True)
    _same_with_and_without(conv, lambda m: m((x_src, x_dst), edge_index, edge_type), [x_src, x_dst])
    # and the transform-first path when the source side is the smaller one
    edge_index2, edge_type2 = _relational_graph(10, 50, 120, 3, 9)
    xs2 = torch.randn(10, 8, requires_grad=True)
    xd2 = torch.randn(50, 5, requires_grad=True)
    _same_with_and_without(conv, lambda m: m((xs2, xd2), edge_index2, edge_type2), [xs2, xd2])


def test_rgcn_structure_cached_and_rebuilt_on_change():
    _hetero.clear_cache()
    conv = pyg_nn.RGCNConv(4, 4, num_relations=2)
    edge_index, edge_type = _relational_graph(20, 20, 60, 2, 10)
    x = torch.randn(20, 4)
    with ew_pyg.accelerated():
        before = _hetero.cache_builds()
        conv(x, edge_index, edge_type)
        conv(x, edge_index, edge_type)
        assert _hetero.cache_builds() == before + 1
        edge_type[0] = 1 - edge_type[0]  # in place: the cached structure is stale
        out = conv(x, edge_index, edge_type)
        assert _hetero.cache_builds() == before + 2
    torch.testing.assert_close(out, conv(x, edge_index, edge_type), rtol=1e-5, atol=1e-5)


def test_rgcn_out_of_range_edge_types_raise_pyg_error():
    conv = pyg_nn.RGCNConv(4, 4, num_relations=3)
    edge_index, edge_type = _relational_graph(20, 20, 60, 3, 15, bad_types=True)
    x = torch.randn(20, 4)
    with pytest.raises(Exception) as plain:
        conv(x, edge_index, edge_type)
    with ew_pyg.accelerated(), pytest.raises(type(plain.value)):
        conv(x, edge_index, edge_type)


def test_rgcn_falls_back_for_max_and_out_of_range_nodes():
    conv = pyg_nn.RGCNConv(4, 4, num_relations=2, aggr="max")
    edge_index, edge_type = _relational_graph(20, 20, 60, 2, 11)
    x = torch.randn(20, 4, requires_grad=True)
    _same_with_and_without(conv, lambda m: m(x, edge_index, edge_type), [x])
    conv = pyg_nn.RGCNConv(4, 4, num_relations=2)
    bad = edge_index.clone()
    bad[0, 0] = 25
    with ew_pyg.accelerated(), pytest.raises(Exception):
        conv(x, bad, edge_type)


def _hetero_graph(seed):
    gen = torch.Generator().manual_seed(seed)
    sizes = {"paper": 30, "author": 20, "field": 6}
    x = {k: torch.randn(n, 8, generator=gen) for k, n in sizes.items()}
    def edges(s, d, e):
        return torch.stack([torch.randint(0, sizes[s], (e,), generator=gen), torch.randint(0, sizes[d], (e,), generator=gen)])
    edge_index = {
        ("paper", "cites", "paper"): edges("paper", "paper", 90),
        ("author", "writes", "paper"): edges("author", "paper", 60),
        ("paper", "rev_writes", "author"): None,
        ("paper", "has_topic", "field"): edges("paper", "field", 40),
        ("field", "rev_has_topic", "paper"): None,
    }
    edge_index[("paper", "rev_writes", "author")] = edge_index[("author", "writes", "paper")].flip(0)
    edge_index[("field", "rev_has_topic", "paper")] = edge_index[("paper", "has_topic", "field")].flip(0)
    return x, edge_index


def test_hetero_conv():
    torch.manual_seed(8)
    x, edge_index = _hetero_graph(12)
    conv = pyg_nn.HeteroConv({et: pyg_nn.SAGEConv((-1, -1), 5) for et in edge_index}, aggr="sum")
    conv(x, edge_index)  # lazy initialisation
    leaves = {k: v.clone().requires_grad_() for k, v in x.items()}
    _same_with_and_without(conv, lambda m: m(leaves, edge_index), list(leaves.values()))


def test_to_hetero_graph_sage():
    from torch_geometric.data import HeteroData

    torch.manual_seed(9)
    x, edge_index = _hetero_graph(13)
    data = HeteroData()
    for k, v in x.items():
        data[k].x = v
    for et, ei in edge_index.items():
        data[et].edge_index = ei

    class SAGE(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = pyg_nn.SAGEConv((-1, -1), 16)
            self.conv2 = pyg_nn.SAGEConv((-1, -1), 4)

        def forward(self, x, edge_index):
            return self.conv2(self.conv1(x, edge_index).relu(), edge_index)

    model = pyg_nn.to_hetero(SAGE(), data.metadata(), aggr="sum")
    model(data.x_dict, data.edge_index_dict)  # lazy initialisation
    leaves = {k: v.clone().requires_grad_() for k, v in data.x_dict.items()}
    _same_with_and_without(model, lambda m: m(leaves, data.edge_index_dict), list(leaves.values()))


def test_many_edge_types_are_built_once():
    """Seven edge types, two layers: the second forward builds no structure (a cache
    smaller than the edge types rebuilt all of them on every forward)."""
    from edgewise.torch.pyg import _structure

    torch.manual_seed(4)
    types = [("a", f"r{k}", "b") for k in range(4)] + [("b", f"s{k}", "a") for k in range(3)]
    x = {"a": torch.randn(30, 5), "b": torch.randn(20, 5)}
    edge_index = {et: torch.stack([torch.randint(0, 30 if et[0] == "a" else 20, (50 + k,)),
                                   torch.randint(0, 20 if et[2] == "b" else 30, (50 + k,))])
                  for k, et in enumerate(types)}
    model = pyg_nn.HeteroConv({et: pyg_nn.SAGEConv((5, 5), 5) for et in types}, aggr="sum")
    with ew_pyg.accelerated():
        model(x, edge_index)
        builds = _structure.cache_builds()
        model(x, edge_index)
        assert _structure.cache_builds() == builds


def test_content_cache_keeps_graphs_within_its_byte_budget():
    from edgewise.torch.nn._graph_cache import ContentGraphCache

    graphs = [torch.full((2, 100), k) for k in range(6)]  # 1600 bytes each, plus the value's
    roomy = ContentGraphCache(capacity=2, budget_bytes=1 << 20)
    tight = ContentGraphCache(capacity=2, budget_bytes=4000)
    for cache in (roomy, tight):
        for g in graphs:
            cache.get(g, None, lambda g=g: g.clone())
        for g in graphs:
            cache.get(g.clone(), None, lambda g=g: g.clone())
    assert roomy.builds == 6  # all six kept
    assert tight.builds == 12  # two kept (capacity), all rebuilt in order


def test_deaccelerate_restores_forwards():
    originals = [cls.__dict__["forward"] for cls in (HeteroLinear, HeteroDictLinear, pyg_nn.RGCNConv)]
    ew_pyg.accelerate()
    assert [cls.__dict__["forward"] for cls in (HeteroLinear, HeteroDictLinear, pyg_nn.RGCNConv)] != originals
    ew_pyg.deaccelerate()
    assert [cls.__dict__["forward"] for cls in (HeteroLinear, HeteroDictLinear, pyg_nn.RGCNConv)] == originals


def test_module_copies_follow():
    conv = pyg_nn.RGCNConv(4, 3, num_relations=2)
    clone = copy.deepcopy(conv)
    edge_index, edge_type = _relational_graph(10, 10, 20, 2, 14)
    x = torch.randn(10, 4)
    with ew_pyg.accelerated():
        torch.testing.assert_close(clone(x, edge_index, edge_type), conv(x, edge_index, edge_type))
