"""torch.jit.script of edgewise.torch.nn layers compiles PyG's own layer in their place,
built with the same arguments and holding the same parameter tensors."""

import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")
from torch import Tensor  # noqa: E402
from torch_geometric.nn.conv import gat_conv, gatv2_conv  # noqa: E402
from torch_geometric.typing import Adj, OptTensor  # noqa: E402

import edgewise.torch.nn as ewnn  # noqa: E402

C, C_OUT = 8, 6


def _graph():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(9, C, generator=g)
    edge_index = torch.randint(0, 9, (2, 30), generator=g)
    edge_attr = torch.randn(30, 3, generator=g)
    return x, edge_index, edge_attr


class Wrapper(torch.nn.Module):
    """How PyG's own tests script a layer: called from a module with typed arguments."""

    def __init__(self, conv):
        super().__init__()
        self.conv = conv

    def forward(self, x: Tensor, edge_index: Adj) -> Tensor:
        return self.conv(x, edge_index)


class EdgeWrapper(Wrapper):
    def forward(self, x: Tensor, edge_index: Adj, edge_attr: OptTensor = None) -> Tensor:
        return self.conv(x, edge_index, edge_attr)


LAYERS = {
    "GCNConv": lambda: ewnn.GCNConv(C, C_OUT),
    "SAGEConv": lambda: ewnn.SAGEConv(C, C_OUT, aggr="max"),
    "GINConv": lambda: ewnn.GINConv(torch.nn.Sequential(torch.nn.Linear(C, 16), torch.nn.ReLU(),
                                                        torch.nn.Linear(16, C_OUT)), train_eps=True),
    "GINEConv": lambda: ewnn.GINEConv(torch.nn.Linear(C, C_OUT), edge_dim=3),
}


def _script(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.jit.script's deprecation notice
        return torch.jit.script(module)


@pytest.mark.parametrize("name", list(LAYERS))
def test_scripted_layer_is_pygs_and_computes_the_same(name):
    x, edge_index, edge_attr = _graph()
    torch.manual_seed(0)
    layer = LAYERS[name]()
    before = {k: v.clone() for k, v in layer.state_dict().items()}
    attr = edge_attr if name == "GINEConv" else None
    eager = layer(x, edge_index, attr) if attr is not None else layer(x, edge_index)
    wrapper = EdgeWrapper(layer) if attr is not None else Wrapper(layer)
    for scripted in (_script(layer), _script(wrapper).conv):
        assert scripted.original_name == name
        out = scripted(x, edge_index, attr) if attr is not None else scripted(x, edge_index)
        torch.testing.assert_close(out, eager, rtol=1e-5, atol=1e-6)
        # The same parameter tensors: training either trains both.
        ours = dict(layer.named_parameters())
        for key, parameter in scripted.named_parameters():
            assert parameter.data_ptr() == ours[key].data_ptr(), key
    # Scripting changed nothing of the layer (PyG's constructor resets the modules it is given).
    for key, value in layer.state_dict().items():
        torch.testing.assert_close(value, before[key], rtol=0, atol=0)


def test_scripted_gradients_reach_the_layers_parameters():
    x, edge_index, _ = _graph()
    layer = ewnn.SAGEConv(C, C_OUT)
    _script(layer)(x, edge_index).square().sum().backward()
    assert layer.lin_l.weight.grad is not None and layer.lin_l.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("name,pyg_module", [("GATConv", gat_conv), ("GATv2Conv", gatv2_conv)])
def test_attention_layers_script_exactly_where_pygs_own_do(name, pyg_module):
    """PyG's GATConv / GATv2Conv do not script under every torch (torch_geometric 2.8 with
    torch 2.15: its return_attention_weights branch fails to compile); Edgewise's then
    fail the same way, and where PyG's script, Edgewise's do and compute the same."""
    x, edge_index, _ = _graph()
    torch.manual_seed(0)
    layer = getattr(ewnn, name)(C, C_OUT, heads=2)
    try:
        _script(Wrapper(getattr(pyg_module, name)(C, C_OUT, heads=2)))
        pyg_scripts = True
    except RuntimeError:
        pyg_scripts = False
    if not pyg_scripts:
        with pytest.raises(RuntimeError):
            _script(Wrapper(layer))
        return
    scripted = _script(Wrapper(layer))
    torch.testing.assert_close(scripted(x, edge_index), layer(x, edge_index), rtol=1e-5, atol=1e-6)


def test_lazy_layers_name_what_to_do():
    with pytest.raises(RuntimeError, match="lazy in_channels=-1.*input width"):
        _script(ewnn.GCNConv(-1, C_OUT))
