"""Attention primitives (sddmm, edge_softmax, attention_aggregate) and GATConv / GATv2Conv
against plain-torch per-edge references and, when installed, PyG."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ewt = pytest.importorskip("edgewise.torch")

import edgewise  # noqa: E402
from edgewise.torch import nn as ewnn  # noqa: E402

try:
    import torch_geometric.nn as pyg_nn
except Exception:  # PyG is optional: the plain-torch references still run
    pyg_nn = None

needs_pyg = pytest.mark.skipif(pyg_nn is None, reason="torch_geometric is not installed")


def graph(seed, N=30, E=120, F=6, dtype=torch.float64):
    """Random graph whose last 3 nodes are isolated, with duplicate edges and self loops."""
    gen = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, N - 3, (2, E), generator=gen)
    ei[:, :5] = torch.tensor([[1, 1, 4, 4, 7], [1, 1, 2, 2, 7]])
    x = torch.randn(N, F, generator=gen, dtype=dtype)
    return x, ei


def csr_edges(csr):
    """(src, dst) of every CSR edge."""
    dst = torch.repeat_interleave(torch.arange(csr.num_nodes), csr.offsets[1:] - csr.offsets[:-1])
    return csr.sources.to(torch.int64), dst


def ref_edge_softmax(scores, dst, N):
    """softmax per (destination, head) with torch's scatter ops: max-shifted exp over group sums."""
    index = dst.unsqueeze(1).expand_as(scores)
    top = scores.new_full((N, scores.size(1)), -torch.inf).scatter_reduce(0, index, scores, "amax")
    e = (scores - top[dst]).exp()
    return e / scores.new_zeros((N, scores.size(1))).index_add(0, dst, e)[dst]


# --- primitives ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("H", [1, 3])
def test_primitives_match_per_edge_references(dtype, H):
    x, ei = graph(1, dtype=dtype)
    N, D = x.size(0), 4
    csr = ewt.CSR.from_edge_index(ei, N)
    src, dst = csr_edges(csr)
    gen = torch.Generator().manual_seed(2)
    a, b = (torch.randn(N, H, generator=gen, dtype=dtype) for _ in range(2))
    xs, ys = (torch.randn(N, H, D, generator=gen, dtype=dtype) for _ in range(2))
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else {}

    torch.testing.assert_close(ewt.sddmm_add(csr, a, b), a[src] + b[dst], **tol)
    torch.testing.assert_close(ewt.sddmm_dot(csr, xs, ys), (xs[src] * ys[dst]).sum(-1), **tol)
    scores = torch.randn(src.numel(), H, generator=gen, dtype=dtype) * 10
    alpha = ewt.edge_softmax(csr, scores)
    torch.testing.assert_close(alpha, ref_edge_softmax(scores, dst, N), **tol)
    # Every destination with edges sums to 1 per head; the isolated ones have no edges.
    sums = torch.zeros(N, H, dtype=dtype).index_add(0, dst, alpha)
    has_edges = torch.bincount(dst, minlength=N) > 0
    torch.testing.assert_close(sums[has_edges], torch.ones_like(sums[has_edges]), **tol)
    want = torch.zeros(N, H, D, dtype=dtype).index_add(0, dst, alpha.unsqueeze(-1) * xs[src])
    got = ewt.attention_aggregate(csr, alpha, xs)
    torch.testing.assert_close(got, want, **tol)
    assert (got[~has_edges] == 0).all()


def test_one_dimensional_forms_and_an_empty_graph():
    x, ei = graph(3)
    csr = ewt.CSR.from_edge_index(ei, x.size(0))
    src, dst = csr_edges(csr)
    a = x[:, 0].contiguous()
    torch.testing.assert_close(ewt.sddmm_add(csr, a, a), a[src] + a[dst])
    torch.testing.assert_close(ewt.sddmm_dot(csr, x, x), (x[src] * x[dst]).sum(-1))
    out = ewt.attention_aggregate(csr, ewt.edge_softmax(csr, ewt.sddmm_add(csr, a, a)), x)
    assert out.shape == x.shape
    empty = ewt.CSR.from_edge_index(torch.zeros(2, 0, dtype=torch.int64), 4)
    h = torch.randn(4, 2, 3, dtype=torch.float64, requires_grad=True)
    logits = ewt.sddmm_dot(empty, h, h)
    assert logits.shape == (0, 2)
    out = ewt.attention_aggregate(empty, ewt.edge_softmax(empty, logits), h)
    assert out.shape == (4, 2, 3) and (out == 0).all()
    out.sum().backward()
    assert (h.grad == 0).all()


def test_gradcheck_float64():
    x, ei = graph(4, N=9, E=25)
    N = x.size(0)
    csr = ewt.CSR.from_edge_index(ei, N)
    gen = torch.Generator().manual_seed(5)
    a, b = (torch.randn(N, 2, generator=gen, dtype=torch.float64, requires_grad=True) for _ in range(2))
    xs, ys = (torch.randn(N, 2, 3, generator=gen, dtype=torch.float64, requires_grad=True) for _ in range(2))
    E = csr.sources.numel()
    s = torch.randn(E, 2, generator=gen, dtype=torch.float64, requires_grad=True)
    alpha = torch.rand(E, 2, generator=gen, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda p, q: ewt.sddmm_add(csr, p, q), (a, b))
    assert torch.autograd.gradcheck(lambda p, q: ewt.sddmm_dot(csr, p, q), (xs, ys))
    assert torch.autograd.gradcheck(lambda t: ewt.edge_softmax(csr, t), (s,))
    assert torch.autograd.gradcheck(lambda w, v: ewt.attention_aggregate(csr, w, v), (alpha, xs))


def test_operators_pass_torch_library_opcheck():
    x, ei = graph(6, N=10, E=30, dtype=torch.float32)
    csr = ewt.CSR.from_edge_index(ei, 10)
    E = csr.sources.numel()
    gen = torch.Generator().manual_seed(7)
    a = torch.randn(10, 2, generator=gen, requires_grad=True)
    v = torch.randn(10, 6, generator=gen, requires_grad=True)
    s = torch.randn(E, 2, generator=gen, requires_grad=True)
    structure = (csr.offsets, csr.sources)
    transposed = (csr.t_offsets, csr.t_targets, csr.t_edge_ids)
    tests = ("test_schema", "test_faketensor", "test_aot_dispatch_dynamic")
    ops = torch.ops.edgewise
    torch.library.opcheck(ops.sddmm_add, (*structure, a, a.detach().clone(), *transposed), test_utils=tests)
    torch.library.opcheck(ops.sddmm_dot, (*structure, v, v.detach().clone(), 2, *transposed), test_utils=tests)
    torch.library.opcheck(ops.edge_softmax, (csr.offsets, s), test_utils=tests)
    torch.library.opcheck(ops.attention_aggregate, (*structure, s, v, *transposed), test_utils=tests)


def test_bad_arguments_raise_clear_errors():
    x, ei = graph(8)
    csr = ewt.CSR.from_edge_index(ei, x.size(0))
    with pytest.raises(ValueError, match="a and b"):
        ewt.sddmm_add(csr, x, x[:, :2])
    with pytest.raises(ValueError, match="x has 5 rows"):
        ewt.sddmm_dot(csr, x[:5], x[:5])
    with pytest.raises(ValueError, match="scores must be"):
        ewt.edge_softmax(csr, torch.zeros(3, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="float32 or float64"):
        edgewise.edge_softmax(np.array([0, 2]), np.zeros((2, 1), dtype=np.int32))
    with pytest.raises(ValueError, match="y must be float64"):
        edgewise.sddmm_dot(np.array([0, 1]), np.array([0]), np.zeros((1, 2)), np.zeros((1, 2), np.float32))
    with pytest.raises(ValueError, match="heads"):
        edgewise.sddmm_dot(np.array([0, 1]), np.array([0]), np.zeros((1, 3)), np.zeros((1, 3)), heads=2)
    with pytest.raises(ValueError, match="indices is required"):
        edgewise.edge_gather_sum(np.array([0, 1]), np.ones((1, 1)), x=np.ones((1, 1)))


# --- GATConv / GATv2Conv -------------------------------------------------------------------------


def ref_gat(layer, x, ei, v2):
    """GAT / GATv2 written per edge with plain torch ops (PyG semantics, no dropout)."""
    N, H, C = x.size(0), layer.heads, layer.out_channels
    if layer.add_self_loops:
        ei = ei[:, ei[0] != ei[1]]
        ei = torch.cat([ei, torch.arange(N).repeat(2, 1)], dim=1)
    src, dst = ei[0], ei[1]
    if v2:
        xl, xr = layer.lin_l(x).view(N, H, C), layer.lin_r(x).view(N, H, C)
        logits = (torch.nn.functional.leaky_relu(xl[src] + xr[dst], layer.negative_slope) * layer.att).sum(-1)
        values = xl
    else:
        lin_src = layer.lin if layer.lin is not None else layer.lin_src
        lin_dst = layer.lin if layer.lin is not None else layer.lin_dst
        xs, xd = lin_src(x).view(N, H, C), lin_dst(x).view(N, H, C)
        logits = (xs * layer.att_src).sum(-1)[src] + (xd * layer.att_dst).sum(-1)[dst]
        logits = torch.nn.functional.leaky_relu(logits, layer.negative_slope)
        values = xs
    alpha = ref_edge_softmax(logits, dst, N)
    out = torch.zeros(N, H, C, dtype=x.dtype).index_add(0, dst, alpha.unsqueeze(-1) * values[src])
    out = out.reshape(N, H * C) if layer.concat else out.mean(1)
    if layer.res is not None:
        out = out + layer.res(x)
    return out + layer.bias if layer.bias is not None else out


GAT_CASES = [
    ("GATConv", dict(heads=3)),
    ("GATConv", dict(heads=2, concat=False, bias=False)),
    ("GATConv", dict(heads=2, add_self_loops=False, negative_slope=0.1)),
    ("GATConv", dict(heads=2, residual=True, in_channels=(6, 6))),
    ("GATv2Conv", dict(heads=3)),
    ("GATv2Conv", dict(heads=2, concat=False, add_self_loops=False)),
    ("GATv2Conv", dict(heads=2, share_weights=True, residual=True)),
    ("GATv2Conv", dict(heads=1, bias=False)),
]


@pytest.mark.parametrize("name,kwargs", GAT_CASES)
def test_gat_layers_match_the_per_edge_reference(name, kwargs):
    kwargs = dict(kwargs)
    in_channels = kwargs.pop("in_channels", 6)
    x, ei = graph(10)
    torch.manual_seed(0)
    layer = getattr(ewnn, name)(in_channels, 5, **kwargs).double()
    with torch.no_grad():  # nonzero biases so that their placement is tested too
        for p in layer.parameters():
            p.add_(0.1 * torch.randn_like(p))
    torch.testing.assert_close(layer(x, ei), ref_gat(layer, x, ei, name == "GATv2Conv"))


def pyg_pair(name, kwargs, dtype):
    kwargs = dict(kwargs)
    in_channels = kwargs.pop("in_channels", 6)
    torch.manual_seed(1)
    theirs = getattr(pyg_nn, name)(in_channels, 5, **kwargs).to(dtype)
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(0.1 * torch.randn_like(p))
    ours = getattr(ewnn, name)(in_channels, 5, **kwargs).to(dtype)
    assert set(ours.state_dict()) == set(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


EDGE_CASES = [
    ("GATConv", dict(heads=2, edge_dim=3)),
    ("GATConv", dict(heads=2, edge_dim=3, fill_value=0.5, concat=False)),
    ("GATConv", dict(heads=2, edge_dim=3, fill_value="add")),
    ("GATConv", dict(heads=2, edge_dim=3, add_self_loops=False)),
    ("GATv2Conv", dict(heads=2, edge_dim=3)),
    ("GATv2Conv", dict(heads=3, edge_dim=3, fill_value=torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64))),
]


@needs_pyg
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name,kwargs", GAT_CASES + EDGE_CASES)
def test_gat_layers_match_pyg_outputs_and_gradients(name, kwargs, dtype):
    ours, theirs = pyg_pair(name, kwargs, dtype)
    x, ei = graph(11, dtype=dtype)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    extra1, extra2 = {}, {}
    if "edge_dim" in kwargs:
        attr = torch.randn(ei.size(1), kwargs["edge_dim"], dtype=dtype)
        extra1["edge_attr"], extra2["edge_attr"] = attr.clone().requires_grad_(), attr.clone().requires_grad_()
    got, want = ours(x1, ei, **extra1), theirs(x2, ei, **extra2)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else {}
    torch.testing.assert_close(got, want, **tol)
    g = torch.randn_like(got)
    got.backward(g)
    want.backward(g)
    torch.testing.assert_close(x1.grad, x2.grad, **tol)
    if extra1:
        torch.testing.assert_close(extra1["edge_attr"].grad, extra2["edge_attr"].grad, **tol)
    theirs_params = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        torch.testing.assert_close(p.grad, theirs_params[pname].grad, **tol, msg=pname)


@needs_pyg
@pytest.mark.parametrize("name", ["GATConv", "GATv2Conv"])
def test_attention_weights_are_returned_as_pyg_does(name):
    ours, theirs = pyg_pair(name, dict(heads=2), torch.float64)
    x, ei = graph(12)
    out, (ei_ours, alpha_ours) = ours(x, ei, return_attention_weights=True)
    _, (ei_theirs, alpha_theirs) = theirs(x, ei, return_attention_weights=True)
    assert torch.equal(ei_ours, ei_theirs)
    torch.testing.assert_close(alpha_ours, alpha_theirs)


def test_attention_dropout_only_while_training():
    x, ei = graph(13)
    layer = ewnn.GATConv(6, 4, heads=2, dropout=1.0).double()
    torch.nn.init.normal_(layer.bias)
    layer.eval()
    assert not torch.allclose(layer(x, ei), layer.bias.expand(x.size(0), -1))
    layer.train()  # every attention weight dropped: only the bias is left
    torch.testing.assert_close(layer(x, ei), layer.bias.expand(x.size(0), -1))
    layer.dropout = 0.5
    torch.manual_seed(3)
    a = layer(x, ei)
    torch.manual_seed(3)
    torch.testing.assert_close(layer(x, ei), a)


def test_gat_structure_is_cached_across_layers():
    x, ei = graph(14)
    from edgewise.torch.nn import conv

    conv._structures.clear()
    before = conv._structures.builds
    l1, l2 = ewnn.GATConv(6, 4, heads=2).double(), ewnn.GATv2Conv(8, 3).double()
    l2(l1(x, ei), ei)
    l1(x, ei)
    assert conv._structures.builds == before + 1


def test_gat_layers_reject_unsupported_arguments():
    layer = ewnn.GATConv(4, 4)
    x, ei = torch.randn(5, 4), torch.tensor([[0, 1], [1, 2]])
    with pytest.raises(ValueError, match="a pair"):
        layer((x, x, x), ei)
    with pytest.raises(ValueError, match="Static graphs not supported"):
        layer(x.unsqueeze(0), ei)
    with pytest.raises(ValueError, match="edge_index must be"):
        layer(x, ei[0])
    # Without edge_dim edge_attr plays no part (as in PyG).
    torch.testing.assert_close(layer(x, ei, torch.ones(2, 1)), layer(x, ei))
    with_edges = ewnn.GATConv(4, 4, edge_dim=2)
    with pytest.raises(ValueError, match=r"edge_attr must be \[E\] or \[E, D\] with E = 2"):
        with_edges(x, ei, torch.ones(3, 2))
    with pytest.raises(ValueError, match="fill_value must be"):
        ewnn.GATConv(4, 4, edge_dim=2, fill_value="median")(x, ei, torch.ones(2, 2))


def test_compiled_gat_model_matches_eager():
    x, ei = graph(15, dtype=torch.float32)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = ewnn.GATConv(6, 4, heads=2, add_self_loops=False)
            self.conv2 = ewnn.GATv2Conv(8, 3, add_self_loops=False)

        def forward(self, x):
            return self.conv2(torch.nn.functional.elu(self.conv1(x, ei)), ei).pow(2).sum()

    torch.manual_seed(0)
    model = Model()
    torch._dynamo.reset()
    got = torch.compile(model, fullgraph=True, backend="aot_eager")(x)
    got.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    want = model(x)
    want.backward()
    torch.testing.assert_close(got, want)
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(g, p.grad)
