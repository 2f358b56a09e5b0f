"""edgewise.torch.nn layers against PyG (when installed) and a plain-torch reference."""

import pytest

torch = pytest.importorskip("torch")
ewt = pytest.importorskip("edgewise.torch")

from edgewise.torch import nn as ewnn  # noqa: E402
from edgewise.torch.nn import conv as ewconv  # noqa: E402

try:
    import torch_geometric.nn as pyg_nn
except Exception:  # PyG is optional: the plain-torch reference still runs
    pyg_nn = None


def graph(seed, N=40, E=160):
    gen = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, N - 3, (2, E), generator=gen)  # the last 3 nodes are isolated
    ei[:, :4] = torch.tensor([[1, 1, 5, 5], [1, 1, 5, 2]])  # duplicate self loops, a duplicate edge
    x = torch.randn(N, 8, generator=gen)
    w = torch.rand(E, generator=gen) + 0.5
    return x, ei, w


def ref_aggregate(x, ei, w, reduce, N):
    msg = x[ei[0]] if w is None else x[ei[0]] * w.unsqueeze(1)
    if reduce == "sum":
        return x.new_zeros(N, x.size(1)).index_add(0, ei[1], msg)
    if reduce == "mean":
        cnt = x.new_zeros(N).index_add(0, ei[1], x.new_ones(ei.size(1))).clamp(min=1)
        return x.new_zeros(N, x.size(1)).index_add(0, ei[1], msg) / cnt.unsqueeze(1)
    if reduce in ("var", "std"):
        # PyG's VarAggregation / StdAggregation written out, in float64: in float32
        # E[x^2] - E[x]^2 cancels (edgewise's Welford result is the closer one).
        xd = x.double()
        mean = ref_aggregate(xd, ei, w, "mean", N)
        mean2 = ref_aggregate(xd * xd, ei, None if w is None else w * w, "mean", N)
        var = mean2 - mean * mean
        if reduce == "var":
            return var.to(x.dtype)
        out = var.clamp(min=1e-5).sqrt()
        return out.masked_fill(out <= 1e-5 ** 0.5, 0.0).to(x.dtype)
    idx = ei[1].unsqueeze(1).expand(-1, x.size(1))
    return x.new_zeros(N, x.size(1)).scatter_reduce(0, idx, msg, "amax", include_self=False)


def ref_gcn(layer, x, ei, w):
    """PyG's gcn_norm written out: loops replaced, weight 1 without edge weights."""
    N = x.size(0)
    if layer.normalize and not layer.add_self_loops:
        w2 = torch.ones(ei.size(1)) if w is None else w
        deg = torch.zeros(N).index_add(0, ei[1], w2)
        dis = deg.pow(-0.5).masked_fill(deg == 0, 0)
        w = dis[ei[0]] * w2 * dis[ei[1]]
    elif layer.normalize:
        keep = ei[0] != ei[1]
        loops = torch.arange(N)
        if w is None:
            lw = torch.ones(N)
            w2 = torch.ones(int(keep.sum()) + N)
        else:
            lw = torch.full((N,), 2.0 if layer.improved else 1.0)
            lw = lw.index_put((ei[0][~keep],), w[~keep])
            w2 = torch.cat([w[keep], lw])
        ei2 = torch.cat([ei[:, keep], torch.stack([loops, loops])], 1)
        deg = torch.zeros(N).index_add(0, ei2[1], w2)
        dis = deg.pow(-0.5).masked_fill(deg == 0, 0)
        ei, w = ei2, dis[ei2[0]] * w2 * dis[ei2[1]]
    out = ref_aggregate(x @ layer.lin.weight.t(), ei, w, "sum", N)
    return out + layer.bias if layer.bias is not None else out


def ref_sage(layer, x, ei):
    xs = torch.relu(layer.lin(x)) if layer.project else x
    out = layer.lin_l(ref_aggregate(xs, ei, None, layer.aggr, x.size(0)))
    if layer.root_weight:
        out = out + layer.lin_r(x)
    return torch.nn.functional.normalize(out, dim=-1) if layer.normalize else out


def ref_gin(layer, x, ei):
    return layer.nn(ref_aggregate(x, ei, None, "sum", x.size(0)) + (1 + layer.eps) * x)


def check_same(ew_layer, out_fn, x, params, ref_out):
    """Outputs and gradients (w.r.t. x and every parameter) agree."""
    xe = x.clone().requires_grad_()
    got = out_fn(xe)
    gen = torch.Generator().manual_seed(1)
    g = torch.randn(got.shape, generator=gen)
    (got * g).sum().backward()
    xr = x.clone().requires_grad_()
    want = ref_out(xr)
    (want * g).sum().backward()
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(xe.grad, xr.grad, rtol=1e-5, atol=1e-5)
    for (name, p), q in zip(ew_layer.named_parameters(), params):
        torch.testing.assert_close(p.grad, q.grad.to(p.grad.dtype), rtol=1e-5, atol=1e-5, msg=name)


GCN_ARGS = [dict(), dict(improved=True), dict(normalize=False), dict(bias=False), dict(add_self_loops=False)]


@pytest.mark.parametrize("kwargs", GCN_ARGS)
@pytest.mark.parametrize("weighted", [False, True])
def test_gcnconv_matches_pyg_and_reference(kwargs, weighted):
    x, ei, w = graph(3)
    w = w if weighted else None
    torch.manual_seed(0)
    layer = ewnn.GCNConv(8, 6, **kwargs)
    with torch.no_grad():
        if layer.bias is not None:
            layer.bias.uniform_(-1, 1)
    if pyg_nn is not None:
        pyg = pyg_nn.GCNConv(8, 6, **kwargs)
        assert {k: v.shape for k, v in pyg.state_dict().items()} == {k: v.shape for k, v in layer.state_dict().items()}
        pyg.load_state_dict(layer.state_dict())
        check_same(layer, lambda xx: layer(xx, ei, w), x, list(pyg.parameters()), lambda xx: pyg(xx, ei, w))
        layer.zero_grad()
    ref = ewnn.GCNConv(8, 6, **kwargs)
    ref.load_state_dict(layer.state_dict())
    check_same(layer, lambda xx: layer(xx, ei, w), x, list(ref.parameters()), lambda xx: ref_gcn(ref, xx, ei, w))


@pytest.mark.skipif(pyg_nn is None, reason="torch_geometric not installed")
def test_gcnconv_edge_weight_gradient_matches_pyg():
    x, ei, w = graph(4)
    layer = ewnn.GCNConv(8, 5, improved=True)
    pyg = pyg_nn.GCNConv(8, 5, improved=True)
    pyg.load_state_dict(layer.state_dict())
    we, wp = w.clone().requires_grad_(), w.clone().requires_grad_()
    layer(x, ei, we).square().sum().backward()
    pyg(x, ei, wp).square().sum().backward()
    torch.testing.assert_close(we.grad, wp.grad, rtol=1e-4, atol=1e-5)


SAGE_ARGS = [dict(), dict(aggr="max"), dict(aggr="sum"), dict(normalize=True), dict(root_weight=False),
             dict(project=True), dict(bias=False), dict(aggr="var"), dict(aggr="std"),
             dict(aggr="std", project=True, normalize=True)]


@pytest.mark.parametrize("kwargs", SAGE_ARGS)
def test_sageconv_matches_pyg_and_reference(kwargs):
    x, ei, _ = graph(5)
    torch.manual_seed(0)
    layer = ewnn.SAGEConv(8, 6, **kwargs)
    if pyg_nn is not None:
        pyg = pyg_nn.SAGEConv(8, 6, **kwargs)
        assert {k: v.shape for k, v in pyg.state_dict().items()} == {k: v.shape for k, v in layer.state_dict().items()}
        pyg.load_state_dict(layer.state_dict())
        # var/std: PyG in float64 (its float32 E[x^2] - E[x]^2 cancels; see ref_aggregate).
        wide = kwargs.get("aggr") in ("var", "std")
        if wide:
            pyg = pyg.double()
        check_same(layer, lambda xx: layer(xx, ei), x, list(pyg.parameters()),
                   lambda xx: pyg(xx.double(), ei).float() if wide else pyg(xx, ei))
        layer.zero_grad()
    ref = ewnn.SAGEConv(8, 6, **kwargs)
    ref.load_state_dict(layer.state_dict())
    check_same(layer, lambda xx: layer(xx, ei), x, list(ref.parameters()), lambda xx: ref_sage(ref, xx, ei))


@pytest.mark.parametrize("aggr", ["mean", "sum"])
@pytest.mark.parametrize("leaf", [True, False])
def test_sageconv_trimmed_pair_shares_one_gradient(aggr, leaf, monkeypatch):
    # (h, h[:n_dst]), as PyG's trimmed layers pass it: the fused op serves both reads,
    # and the gradients equal those of an independent copy of the slice (and PyG's).
    from edgewise.torch import _spmm_ops
    calls = []
    fused = _spmm_ops.spmm_and_rows
    monkeypatch.setattr(_spmm_ops, "spmm_and_rows", lambda *a: calls.append(a[-1]) or fused(*a))
    gen = torch.Generator().manual_seed(3)
    n_src, n_dst = 30, 12
    ei = torch.stack([torch.randint(0, n_src, (90,), generator=gen), torch.randint(0, n_dst, (90,), generator=gen)])
    ei[:, :3] = torch.tensor([[0, 0, 11], [0, 0, 11]])  # a duplicate edge and self loops
    base = torch.randn(n_src, 5, dtype=torch.float64, generator=gen)
    torch.manual_seed(0)
    layer = ewnn.SAGEConv(5, 4, aggr=aggr).double()

    def run(split):
        x = base.clone().requires_grad_()
        h = x if leaf else (x * 1.5).tanh()
        out = layer((h, split(h)), ei, size=(n_src, n_dst))
        (out * torch.arange(out.numel(), dtype=out.dtype).view_as(out).sin()).sum().backward()
        grads = [x.grad] + [p.grad.clone() for p in layer.parameters()]
        layer.zero_grad()
        return out.detach(), grads

    out, grads = run(lambda h: h[:n_dst])
    assert calls == [n_dst]
    ref_out, ref_grads = run(lambda h: h[:n_dst].clone())
    assert calls == [n_dst]  # a copy is not x_src's rows: the plain path
    torch.testing.assert_close(out, ref_out, rtol=1e-12, atol=1e-12)
    for got, want in zip(grads, ref_grads):
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    if pyg_nn is not None:
        pyg = pyg_nn.SAGEConv(5, 4, aggr=aggr).double()
        pyg.load_state_dict(layer.state_dict())
        x = base.clone().requires_grad_()
        h = x if leaf else (x * 1.5).tanh()
        pyg_out = pyg((h, h[:n_dst]), ei, size=(n_src, n_dst))
        (pyg_out * torch.arange(pyg_out.numel(), dtype=pyg_out.dtype).view_as(pyg_out).sin()).sum().backward()
        torch.testing.assert_close(out, pyg_out.detach(), rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(grads[0], x.grad, rtol=1e-10, atol=1e-10)
    layer_x = base[:, :3].clone().requires_grad_()
    small = ewnn.SAGEConv(3, 2, aggr=aggr).double()
    assert torch.autograd.gradcheck(lambda t: small((t, t[:n_dst]), ei, size=(n_src, n_dst)), (layer_x,))


@pytest.mark.parametrize("train_eps", [False, True])
def test_ginconv_matches_pyg_and_reference(train_eps):
    x, ei, _ = graph(6)
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
    layer = ewnn.GINConv(mlp, eps=0.25, train_eps=train_eps)
    if pyg_nn is not None:
        pyg = pyg_nn.GINConv(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4)),
                             eps=0.25, train_eps=train_eps)
        assert {k: v.shape for k, v in pyg.state_dict().items()} == {k: v.shape for k, v in layer.state_dict().items()}
        pyg.load_state_dict(layer.state_dict())
        check_same(layer, lambda xx: layer(xx, ei), x, list(pyg.parameters()), lambda xx: pyg(xx, ei))
        layer.zero_grad()
    ref = ewnn.GINConv(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4)),
                       train_eps=train_eps)
    ref.load_state_dict(layer.state_dict())
    check_same(layer, lambda xx: layer(xx, ei), x, list(ref.parameters()), lambda xx: ref_gin(ref, xx, ei))


def fresh_output(layer, x, ei):
    """The layer's output with no cache: a private copy of the graph."""
    ewconv._structures.clear()
    return layer(x, ei.clone())


def test_cache_builds_once_per_graph_and_never_serves_a_changed_one():
    x, ei, _ = graph(7)
    layer = ewnn.GCNConv(8, 4)
    ewconv._structures.clear()
    builds = ewconv._structures.builds
    first = layer(x, ei)
    layer(x, ei)
    assert ewconv._structures.builds == builds + 1  # the second call reused the structure
    # In-place change (version counter bumps).
    ei[1, :10] = torch.roll(ei[1, :10], 1) + 1
    got = layer(x, ei)
    torch.testing.assert_close(got, fresh_output(layer, x, ei))
    assert not torch.allclose(got, first)
    # A change the version counter does not see (.data) is caught by the contents check.
    before = layer(x, ei)
    ei.data[0, :20] = torch.arange(20)
    got = layer(x, ei)
    torch.testing.assert_close(got, fresh_output(layer, x, ei))
    assert not torch.allclose(got, before)


def test_cache_never_serves_a_freed_tensors_successor():
    x, _, _ = graph(8)
    layer = ewnn.SAGEConv(8, 4, aggr="max")
    for seed in range(6):  # freed tensors' storage (and often their id) get reused
        _, ei, _ = graph(100 + seed)
        got = layer(x, ei)
        torch.testing.assert_close(got, ref_sage(layer, x, ei), rtol=1e-5, atol=1e-5)
        del ei


def test_layers_reject_bad_edge_index():
    x, ei, _ = graph(9)
    with pytest.raises(ValueError, match="edge_index"):
        ewnn.GCNConv(8, 4)(x, ei[0])
    with pytest.raises(ValueError, match="edge_index"):
        ewnn.SAGEConv(8, 4)(x, ei.float())
    with pytest.raises(ValueError, match="nonsense"):  # PyG's resolver's message, or ours without PyG
        ewnn.SAGEConv(8, 4, aggr="nonsense")


def test_compiled_gcn_and_sage_model_matches_eager():
    x, ei, _ = graph(10)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = ewnn.GCNConv(8, 16)
            self.conv2 = ewnn.SAGEConv(16, 3, aggr="max")

        def forward(self, x, edge_index):
            h = ewnn.functional.dropout(torch.relu(self.conv1(x, edge_index)), 0.5, self.training)
            return torch.log_softmax(self.conv2(h, edge_index), dim=-1)

    torch.manual_seed(0)
    net = Net()
    torch._dynamo.reset()
    compiled = torch.compile(net, fullgraph=True, backend="aot_eager")
    torch.manual_seed(1)  # the dropout seed comes from torch's generator in both runs
    got = compiled(x, ei)
    got.sum().backward()
    grads = [p.grad.clone() for p in net.parameters()]
    net.zero_grad()
    torch.manual_seed(1)
    want = net(x, ei)
    want.sum().backward()
    torch.testing.assert_close(got, want)
    for g, p in zip(grads, net.parameters()):
        torch.testing.assert_close(g, p.grad)


def test_dropout_mask_statistics_backward_and_determinism():
    from edgewise.torch.nn.functional import dropout

    x = torch.randn(300, 101)
    torch.manual_seed(4)
    xe = x.clone().requires_grad_()
    y = dropout(xe, 0.3, True)
    kept = y != 0
    assert abs(kept.float().mean().item() - 0.7) < 0.01
    torch.testing.assert_close(y[kept], x[kept] / 0.7)
    y.backward(torch.ones_like(y))
    torch.testing.assert_close(xe.grad, kept.float() / 0.7)  # same mask in backward
    torch.manual_seed(4)
    assert torch.equal(dropout(x, 0.3, True), y.detach())
    assert not torch.equal(dropout(x, 0.3, True), y.detach())  # a new mask per call
    assert dropout(x, 0.3, False) is x
    assert torch.equal(dropout(x, 1.0, True), torch.zeros_like(x))
    with pytest.raises(ValueError, match="p"):
        dropout(x, 1.5, True)
