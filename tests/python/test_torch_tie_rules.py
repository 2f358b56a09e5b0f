"""Which gradient min/max give on tied inputs (issue 25): edgewise.torch.nn layers and
spmm mirror PyG / torch's scatter_reduce amax (the gradient split evenly among the
tied messages); the torch_scatter functions that return an arg (scatter_max,
segment_max_csr, scatter(reduce="max")) give it all to the first tied element, as
torch_scatter does. Inputs are built to tie (0/1 features, as Cora's bag of words).
torch's rule counts the zero it reduces onto as one more share where the max is 0
(tie rule split_zero_base in the kernels); the references below include that."""

import pytest

torch = pytest.importorskip("torch")
ts = pytest.importorskip("edgewise.torch")
from edgewise.torch import nn as ewnn  # noqa: E402

try:
    import torch_geometric.nn as pyg_nn
except Exception:  # PyG is optional; the plain-torch references below still run
    pyg_nn = None


def tied_graph(seed, N=60, E=400, F=12):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randint(0, 2, (N, F), generator=gen).double()  # 0/1 features: ties everywhere
    edge_index = torch.randint(0, N, (2, E), generator=gen)
    edge_index[:, :30] = edge_index[:, 30:60]  # duplicate edges: identical messages
    return x, edge_index


def amax_reference(x, edge_index, weight=None, reduce="amax"):
    """torch's scatter_reduce(include_self=False): PyG's max aggregation on the CPU."""
    src, dst = edge_index
    msg = x[src] if weight is None else x[src] * weight.unsqueeze(1)
    index = dst.unsqueeze(1).expand_as(msg)
    return x.new_zeros(x.shape).scatter_reduce(0, index, msg, reduce, include_self=False)


@pytest.mark.skipif(pyg_nn is None, reason="torch_geometric not installed")
@pytest.mark.parametrize("project", [False, True])
def test_sageconv_max_gradients_match_pyg_on_ties(project):
    x, edge_index = tied_graph(1)
    torch.manual_seed(0)
    ours = ewnn.SAGEConv(x.size(1), 8, aggr="max", project=project).double()
    theirs = pyg_nn.SAGEConv(x.size(1), 8, aggr="max", project=project).double()
    theirs.load_state_dict(ours.state_dict())
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    g = torch.randn(x.size(0), 8, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    out1, out2 = ours(x1, edge_index), theirs(x2, edge_index)
    torch.testing.assert_close(out1, out2)
    (out1 * g).sum().backward()
    (out2 * g).sum().backward()
    torch.testing.assert_close(x1.grad, x2.grad, rtol=1e-10, atol=1e-12)
    for p1, p2 in zip(ours.parameters(), theirs.parameters()):
        torch.testing.assert_close(p1.grad, p2.grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduce", ["max", "min"])
@pytest.mark.parametrize("weighted", [False, True])
def test_spmm_min_max_split_ties_like_scatter_reduce(reduce, weighted):
    x, edge_index = tied_graph(3)
    gen = torch.Generator().manual_seed(4)
    w = torch.randint(1, 3, (edge_index.size(1),), generator=gen).double() if weighted else None  # 1 or 2: still ties
    g = torch.randn(x.shape, dtype=torch.float64, generator=gen)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    w1 = None if w is None else w.clone().requires_grad_()
    w2 = None if w is None else w.clone().requires_grad_()
    got = ts.spmm(edge_index, x1, w1, reduce=reduce)
    want = amax_reference(x2, edge_index, w2, "a" + reduce)
    torch.testing.assert_close(got, want)
    (got * g).sum().backward()
    (want * g).sum().backward()
    torch.testing.assert_close(x1.grad, x2.grad)
    if weighted:
        torch.testing.assert_close(w1.grad, w2.grad)


def test_torch_scatter_functions_give_the_first_tied_element_everything():
    src = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 0.0], [1.0, 2.0]], requires_grad=True)
    index = torch.tensor([0, 0, 0, 1])
    for fn in (lambda s: ts.scatter_max(s, index, 0)[0], lambda s: ts.scatter(s, index, 0, reduce="max"),
               lambda s: ts.segment_max_csr(s, torch.tensor([0, 3, 4]))[0],
               lambda s: ts.segment_max_coo(s, index)[0]):
        src.grad = None
        fn(src).sum().backward()
        assert src.grad.tolist() == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    # torch's own scatter_reduce onto zeros (what PyG and so the nn layers run) splits
    # the same ties, and counts the zero it started from where the max is 0:
    split = [[0.5, 0.25], [0.5, 0.25], [0.0, 0.25], [1.0, 1.0]]
    src.grad = None
    expanded = index.view(-1, 1).expand(4, 2)
    torch.zeros(2, 2).scatter_reduce(0, expanded, src, "amax", include_self=False).sum().backward()
    assert src.grad.tolist() == split
    src.grad = None
    torch.ops.edgewise.scatter_reduce(src.view(1, 4, 2), index.view(1, 4, 1), 2, "max", False, "t").sum().backward()
    assert src.grad.tolist() == split


def _cora_path():
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (os.environ.get("EDGEWISE_DATA_DIR"), os.path.join(here, "..", "..", "..", "shared", "datasets"),
                   "/work/shared/datasets"):
        if folder and os.path.isfile(os.path.join(folder, "cora.npz")):
            return os.path.join(folder, "cora.npz")
    return None


@pytest.mark.skipif(pyg_nn is None or _cora_path() is None, reason="needs torch_geometric and cora.npz")
def test_sageconv_max_on_cora_gives_pygs_input_gradient():
    """The issue's case: Cora's raw 0/1 bag-of-words features through SAGEConv(aggr="max")."""
    import edgewise

    data = edgewise.load_dataset(_cora_path())
    indptr, indices, entries, shape = data["features"]
    x = torch.sparse_csr_tensor(torch.from_numpy(indptr).long(), torch.from_numpy(indices).long(),
                                torch.from_numpy(entries).double(), size=tuple(shape)).to_dense()
    x = x[:, x.sum(0).argsort(descending=True)[:256]].contiguous()  # the 256 most common words: ties, and quick
    edge_index = torch.from_numpy(data["edge_index"])
    torch.manual_seed(5)
    ours = ewnn.SAGEConv(x.size(1), 16, aggr="max").double()
    theirs = pyg_nn.SAGEConv(x.size(1), 16, aggr="max").double()
    theirs.load_state_dict(ours.state_dict())
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    ours(x1, edge_index).pow(2).sum().backward()
    theirs(x2, edge_index).pow(2).sum().backward()
    torch.testing.assert_close(x1.grad, x2.grad, rtol=1e-9, atol=1e-12)
