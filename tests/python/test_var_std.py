"""var / std (PyG's VarAggregation / StdAggregation) and mul through the NumPy
bindings and the torch ops: values against PyG's aggregations (or a plain-torch
transcription of them), gradients with torch.autograd.gradcheck in float64."""

import numpy as np
import pytest

import edgewise

torch = pytest.importorskip("torch")
ewt = pytest.importorskip("edgewise.torch")

try:
    from torch_geometric.nn.aggr import StdAggregation, VarAggregation
except Exception:  # PyG is optional: the transcription below still runs
    StdAggregation = VarAggregation = None


def pyg_like(src, index, dim_size, reduce):
    """PyG's formulas: var = E[x^2] - E[x]^2; std = sqrt(clamp(var, 1e-5)), masked at sqrt(1e-5)."""
    if VarAggregation is not None:
        aggr = VarAggregation() if reduce == "var" else StdAggregation()
        return aggr(src, index, dim_size=dim_size)
    cnt = src.new_zeros(dim_size).index_add(0, index, src.new_ones(index.size(0))).clamp(min=1).unsqueeze(1)
    mean = src.new_zeros(dim_size, src.size(1)).index_add(0, index, src) / cnt
    mean2 = src.new_zeros(dim_size, src.size(1)).index_add(0, index, src * src) / cnt
    var = mean2 - mean * mean
    if reduce == "var":
        return var
    out = var.clamp(min=1e-5).sqrt()
    return out.masked_fill(out <= 1e-5 ** 0.5, 0.0)


def sorted_groups(seed, S=12, M=60, C=3, dtype=torch.float32):
    gen = torch.Generator().manual_seed(seed)
    index = torch.randint(0, S - 2, (M,), generator=gen).sort().values  # the last 2 outputs are empty
    index[:2] = index[0]  # a duplicate
    src = torch.randn(M, C, generator=gen, dtype=dtype)
    src[1] = src[0]
    indptr = torch.zeros(S + 1, dtype=torch.int64)
    indptr[1:] = torch.bincount(index, minlength=S).cumsum(0)
    return src, index, indptr


def test_reduce_ops_lists_the_new_ops():
    assert {"mul", "var", "std"} <= set(edgewise.reduce_ops())


@pytest.mark.parametrize("reduce", ["var", "std"])
def test_values_match_pyg(reduce):
    src, index, indptr = sorted_groups(1)
    want = pyg_like(src, index, 12, reduce)
    torch.testing.assert_close(ewt.ops.scatter(src, index, dim=0, dim_size=12, reduce=reduce), want,
                               rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ewt.ops.segment_csr(src, indptr, reduce=reduce), want, rtol=1e-5, atol=1e-5)
    # The NumPy binding computes the same.
    got = edgewise.segment_reduce(src.numpy(), indptr.numpy(), op=reduce)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)


def test_integers_are_rejected_by_name():
    values = np.arange(6, dtype=np.int32).reshape(3, 2)
    with pytest.raises(ValueError, match=r"std.*int32"):
        edgewise.segment_reduce(values, np.array([0, 3]), op="std")


@pytest.mark.parametrize("reduce", ["var", "std", "mul"])
def test_gradients_in_double(reduce):
    src, index, indptr = sorted_groups(2, dtype=torch.float64)
    if reduce == "mul":
        src = src.abs() + 0.5  # y / m: keep factors away from 0
    src.requires_grad_()
    torch.autograd.gradcheck(lambda s: ewt.ops.segment_csr(s, indptr, reduce=reduce), (src,))
    torch.autograd.gradcheck(lambda s: ewt.ops.scatter(s, index, dim=0, dim_size=12, reduce=reduce), (src,))


@pytest.mark.parametrize("reduce", ["var", "std", "mul"])
def test_spmm_gradients_in_double_with_edge_weights(reduce):
    gen = torch.Generator().manual_seed(3)
    N, E = 9, 30
    ei = torch.randint(0, N - 1, (2, E), generator=gen)  # node N-1 receives nothing
    x = (torch.rand(N, 2, generator=gen, dtype=torch.float64) + 0.5).requires_grad_()
    w = (torch.rand(E, generator=gen, dtype=torch.float64) + 0.5).requires_grad_()
    torch.autograd.gradcheck(lambda xx, ww: ewt.ops.spmm(ei, xx, ww, reduce=reduce), (x, w))
    if reduce != "mul" and VarAggregation is not None:
        want = pyg_like(x[ei[0]] * w.unsqueeze(1), ei[1], N, reduce)
        torch.testing.assert_close(ewt.ops.spmm(ei, x, w, reduce=reduce), want, rtol=1e-10, atol=1e-10)
