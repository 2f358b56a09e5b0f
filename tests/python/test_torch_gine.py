"""edgewise.torch.nn.GINEConv against a per-edge plain-torch reference and, when installed, PyG."""

import pytest

torch = pytest.importorskip("torch")
ewt = pytest.importorskip("edgewise.torch")

from edgewise.torch import nn as ewnn  # noqa: E402

try:
    import torch_geometric.nn as pyg_nn
except Exception:  # PyG is optional: the plain-torch reference still runs
    pyg_nn = None


def graph(seed, N=25, E=90, F=5, D=3):
    """Isolated last 3 nodes, duplicate edges and self loops; float64."""
    gen = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, N - 3, (2, E), generator=gen)
    ei[:, :4] = torch.tensor([[1, 1, 6, 6], [1, 1, 2, 2]])
    x = torch.randn(N, F, generator=gen, dtype=torch.float64)
    attr = torch.randn(E, D, generator=gen, dtype=torch.float64)
    return x, ei, attr


def mlp(F):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(F, 6), torch.nn.ReLU(), torch.nn.Linear(6, 4)).double()


@pytest.mark.parametrize("edge_dim", [3, None])
def test_gineconv_matches_the_per_edge_reference(edge_dim):
    x, ei, attr = graph(1)
    if edge_dim is None:
        attr = torch.randn(ei.size(1), x.size(1), dtype=torch.float64)
    layer = ewnn.GINEConv(mlp(x.size(1)), eps=0.4, train_eps=True, edge_dim=edge_dim).double()
    edge = layer.lin(attr) if layer.lin is not None else attr
    msg = torch.relu(x[ei[0]] + edge)
    want = layer.nn(torch.zeros_like(x).index_add(0, ei[1], msg) + 1.4 * x)
    torch.testing.assert_close(layer(x, ei, attr), want)


@pytest.mark.skipif(pyg_nn is None, reason="torch_geometric is not installed")
@pytest.mark.parametrize("train_eps,edge_dim", [(False, 3), (True, 3), (True, None)])
def test_gineconv_matches_pyg_outputs_and_gradients(train_eps, edge_dim):
    x, ei, attr = graph(2)
    if edge_dim is None:
        attr = torch.randn(ei.size(1), x.size(1), dtype=torch.float64)
    theirs = pyg_nn.GINEConv(mlp(x.size(1)), eps=0.2, train_eps=train_eps, edge_dim=edge_dim).double()
    ours = ewnn.GINEConv(mlp(x.size(1)), eps=0.0, train_eps=train_eps, edge_dim=edge_dim).double()
    assert set(ours.state_dict()) == set(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    inputs = [(x.clone().requires_grad_(), attr.clone().requires_grad_()) for _ in range(2)]
    got, want = ours(inputs[0][0], ei, inputs[0][1]), theirs(inputs[1][0], ei, inputs[1][1])
    torch.testing.assert_close(got, want)
    g = torch.randn_like(got)
    got.backward(g)
    want.backward(g)
    torch.testing.assert_close(inputs[0][0].grad, inputs[1][0].grad)
    torch.testing.assert_close(inputs[0][1].grad, inputs[1][1].grad)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        torch.testing.assert_close(p.grad, theirs_params[name].grad, msg=name)


def test_gineconv_gradcheck_and_bad_edge_attr():
    x, ei, attr = graph(3, N=8, E=20, F=3, D=2)
    layer = ewnn.GINEConv(mlp(3), train_eps=True, edge_dim=2).double()
    x.requires_grad_()
    attr.requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b: layer(a, ei, b), (x, attr))
    with pytest.raises(ValueError, match="edge_attr must be"):
        layer(x, ei, attr[:-1])
    plain = ewnn.GINEConv(mlp(3)).double()
    with pytest.raises(ValueError, match="edge_dim"):
        plain(x, ei, attr)
    with pytest.raises(ValueError, match="(?i)could not infer"):
        ewnn.GINEConv(torch.nn.ReLU(), edge_dim=2)
