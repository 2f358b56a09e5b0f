"""Forward-mode AD meets operators that have no forward formula: torch's custom
operators would drop an input's tangent without a word, so edgewise.torch's entry
points refuse it, naming themselves, and the paths that can hand a call back to
plain torch code (dropout, the PyG backend) do so and keep the tangent."""

import pytest

torch = pytest.importorskip("torch")
ewt = pytest.importorskip("edgewise.torch")

import torch.autograd.forward_ad as fwAD  # noqa: E402

from edgewise.torch import nn as ewnn  # noqa: E402

EDGE_INDEX = torch.tensor([[0, 1, 2, 3, 3, 1], [1, 2, 3, 0, 2, 0]])


def _dual(*shape):
    return fwAD.make_dual(torch.randn(*shape, dtype=torch.float64), torch.randn(*shape, dtype=torch.float64))


def _plain(*shape):
    return torch.randn(*shape, dtype=torch.float64)


# name -> call(csr, d): d makes the one input that carries a tangent (or not).
CALLS = {
    "spmm": lambda csr, d: ewt.spmm(EDGE_INDEX, d(4, 3)),
    "spmm (weights)": lambda csr, d: ewt.spmm(EDGE_INDEX, _plain(4, 3), edge_weight=d(6)),
    "sddmm_add": lambda csr, d: ewt.sddmm_add(csr, _plain(4, 2), d(4, 2)),
    "sddmm_dot": lambda csr, d: ewt.sddmm_dot(csr, d(4, 2, 3), _plain(4, 2, 3)),
    "edge_softmax": lambda csr, d: ewt.edge_softmax(csr, d(6, 2)),
    "attention_aggregate": lambda csr, d: ewt.attention_aggregate(csr, _plain(6, 2), d(4, 2, 3)),
    "segment_matmul": lambda csr, d: ewt.segment_matmul(d(5, 3), torch.tensor([0, 2, 5]), _plain(2, 3, 4)),
    "grouped_matmul": lambda csr, d: ewt.grouped_matmul([_plain(2, 3)], [d(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_tangent_into_an_operator_is_an_error_naming_it(name):
    csr = ewt.CSR.from_edge_index(EDGE_INDEX, 4)
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match=rf"{name.split()[0]} has no forward-mode AD formula"):
            CALLS[name](csr, _dual)
        CALLS[name](csr, _plain)  # no tangent: it runs, in a dual level too


def test_a_layer_under_forward_ad_says_which_operator():
    layer = ewnn.GCNConv(3, 2).double()
    with fwAD.dual_level(), pytest.raises(NotImplementedError, match="forward-mode AD"):
        layer(_dual(4, 3), EDGE_INDEX)


def test_dropout_keeps_the_tangent_through_torch():
    torch.manual_seed(0)
    x = torch.randn(200, 8)
    tangent = torch.randn(200, 8)
    with fwAD.dual_level():
        out = ewnn.functional.dropout(fwAD.make_dual(x, tangent), 0.5, training=True)
        primal, out_tangent = fwAD.unpack_dual(out)
    assert out_tangent is not None
    kept = primal != 0
    assert 0 < kept.float().mean() < 1
    torch.testing.assert_close(out_tangent[kept], tangent[kept] * 2)  # the same mask and scale
    assert bool((out_tangent[~kept] == 0).all())


def test_pyg_layers_under_accelerate_keep_the_tangent():
    pyg = pytest.importorskip("torch_geometric")
    from edgewise.torch import pyg as ewpyg

    torch.manual_seed(0)
    conv = pyg.nn.GCNConv(3, 2).double()
    x, tangent = _plain(4, 3), _plain(4, 3)
    with fwAD.dual_level():
        want = fwAD.unpack_dual(conv(fwAD.make_dual(x, tangent), EDGE_INDEX)).tangent
    with ewpyg.accelerated(), fwAD.dual_level():
        got = fwAD.unpack_dual(conv(fwAD.make_dual(x, tangent), EDGE_INDEX)).tangent
    assert got is not None
    torch.testing.assert_close(got, want)
