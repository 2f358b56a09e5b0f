"""edgewise.torch operators against plain-torch references of torch_scatter / PyG semantics."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ewt = pytest.importorskip("edgewise.torch")

import edgewise  # noqa: E402


def float64_supported():
    try:
        edgewise.segment_reduce(np.zeros((1, 1)), np.array([0, 1]), "sum")
        return True
    except (ValueError, TypeError):
        return False


needs_float64 = pytest.mark.skipif(not float64_supported(), reason="edgewise bindings lack float64")


# --- plain-torch references ----------------------------------------------------------------------


def ref_scatter(src, index, size, reduce):
    """torch_scatter.scatter along dim 0 (2-D src): empty outputs 0."""
    C = src.size(1)
    if reduce in ("sum", "mean"):
        out = src.new_zeros(size, C).index_add(0, index, src)
        if reduce == "mean":
            count = src.new_zeros(size).index_add(0, index, src.new_ones(index.numel()))
            out = out / count.clamp(min=1).unsqueeze(1)
        return out
    amax = {"max": "amax", "min": "amin"}[reduce]
    return src.new_zeros(size, C).scatter_reduce(0, index.unsqueeze(1).expand(-1, C), src, amax, include_self=False)


def ref_arg(src, index, size, values):
    """Lowest row reaching each output's extreme value; src.size(0) where nothing arrives."""
    M, C = src.shape
    idx = index.unsqueeze(1).expand(-1, C)
    wins = src == values.gather(0, idx) if M else torch.zeros(0, C, dtype=torch.bool)
    rows = torch.where(wins, torch.arange(M).unsqueeze(1).expand(-1, C), torch.full((M, C), M))
    return torch.full((size, C), M, dtype=torch.int64).scatter_reduce(0, idx, rows, "amin", include_self=True)


def lengths_of(indptr):
    return indptr[1:] - indptr[:-1]


def random_indptr(gen, S, M):
    cuts = torch.sort(torch.randint(0, M + 1, (max(S - 1, 0),), generator=gen)).values
    return torch.cat([torch.tensor([0]), cuts, torch.tensor([M])]) if S > 0 else torch.tensor([0])


CASES = [(0, 3, 4), (5, 0, 3), (1, 1, 1), (40, 3, 7), (300, 16, 50)]  # (M rows, C, S outputs)
REDUCES = ["sum", "mean", "min", "max"]


@pytest.mark.parametrize("M,C,S", CASES)
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_matches_reference_values_and_grads(M, C, S, reduce):
    gen = torch.Generator().manual_seed(M * 31 + C * 7 + S)
    src = torch.randn(M, C, generator=gen, requires_grad=True)
    index = torch.randint(0, S, (M,), generator=gen) if S else torch.zeros(0, dtype=torch.int64)
    got = ewt.scatter(src, index, dim=0, dim_size=S, reduce=reduce)
    src_ref = src.detach().clone().requires_grad_()
    want = ref_scatter(src_ref, index, S, reduce)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    grad = torch.randn(S, C, generator=gen)
    (got * grad).sum().backward()
    (want * grad).sum().backward()
    torch.testing.assert_close(src.grad, src_ref.grad, rtol=1e-5, atol=1e-6)
    if reduce in ("min", "max"):
        fn = ewt.scatter_max if reduce == "max" else ewt.scatter_min
        values, arg = fn(src.detach(), index, 0, dim_size=S)
        torch.testing.assert_close(values, want.detach())
        assert torch.equal(arg, ref_arg(src.detach(), index, S, want.detach()))


@pytest.mark.parametrize("M,C,S", CASES)
@pytest.mark.parametrize("reduce", REDUCES)
def test_segment_csr_matches_reference_values_and_grads(M, C, S, reduce):
    gen = torch.Generator().manual_seed(1000 + M * 31 + C * 7 + S)
    if S == 0 and M > 0:
        S = 1
    src = torch.randn(M, C, generator=gen, requires_grad=True)
    indptr = random_indptr(gen, S, M)
    index = torch.repeat_interleave(torch.arange(S), lengths_of(indptr))
    got = ewt.segment_csr(src, indptr, reduce=reduce)
    src_ref = src.detach().clone().requires_grad_()
    want = ref_scatter(src_ref, index, S, reduce)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    grad = torch.randn(S, C, generator=gen)
    (got * grad).sum().backward()
    (want * grad).sum().backward()
    torch.testing.assert_close(src.grad, src_ref.grad, rtol=1e-5, atol=1e-6)
    if reduce in ("min", "max"):
        fn = ewt.segment_max_csr if reduce == "max" else ewt.segment_min_csr
        values, arg = fn(src.detach(), indptr)
        assert torch.equal(arg, ref_arg(src.detach(), index, S, want.detach()))


def test_empty_segments_give_zero_and_arg_src_size():
    src = torch.tensor([[3.0], [-1.0]])
    indptr = torch.tensor([0, 0, 2, 2])
    values, arg = ewt.segment_max_csr(src, indptr)
    assert values.flatten().tolist() == [0.0, 3.0, 0.0]
    assert arg.flatten().tolist() == [2, 0, 2]
    values, arg = ewt.scatter_min(src, torch.tensor([2, 2]), 0, dim_size=4)
    assert values.flatten().tolist() == [0.0, 0.0, -1.0, 0.0]
    assert arg.flatten().tolist() == [2, 2, 1, 2]


def test_scatter_along_inner_dim_with_broadcast_index():
    gen = torch.Generator().manual_seed(5)
    src = torch.randn(3, 10, 2, generator=gen)
    index = torch.randint(0, 4, (10,), generator=gen)
    for reduce in REDUCES:
        got = ewt.scatter(src, index, dim=1, dim_size=4, reduce=reduce)
        want = torch.stack([ref_scatter(src[b], index, 4, reduce) for b in range(3)])
        torch.testing.assert_close(got, want)
        # torch_scatter broadcasts an index shaped [1, 10, 1] the same way.
        torch.testing.assert_close(ewt.scatter(src, index.view(1, 10, 1), dim=1, dim_size=4, reduce=reduce), want)
    # Default dim -1 and inferred dim_size, 1-D src.
    v = torch.tensor([1.0, 2.0, 5.0])
    assert ewt.scatter(v, torch.tensor([0, 2, 0])).tolist() == [6.0, 0.0, 2.0]


def test_scatter_into_out_follows_torch_scatter():
    src = torch.tensor([[1.0], [4.0], [-2.0]])
    index = torch.tensor([0, 0, 2])
    out = torch.tensor([[10.0], [1.0], [0.0]])
    res = ewt.scatter(src, index, 0, out=out.clone(), reduce="sum")
    assert res.flatten().tolist() == [15.0, 1.0, -2.0]
    o = torch.tensor([[3.0], [1.0], [0.0]])
    values, arg = ewt.scatter_max(src, index, 0, out=o)
    assert values is o and o.flatten().tolist() == [4.0, 1.0, 0.0]
    assert arg.flatten().tolist() == [1, 3, 3]  # -2 does not beat 0 already there
    res = ewt.scatter(src, index, 0, out=torch.tensor([[1.0], [7.0], [0.0]]), reduce="mean")
    assert res.flatten().tolist() == [3.0, 7.0, -2.0]  # (1 + 1 + 4) / 2, as torch_scatter


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="reduce"):
        ewt.scatter(torch.ones(2, 1), torch.tensor([0, 1]), 0, reduce="prod")
    with pytest.raises(ValueError, match="index"):
        ewt.scatter(torch.ones(2, 1), torch.tensor([0, 1, 1]), 0)
    with pytest.raises(ValueError, match="indptr"):
        ewt.segment_csr(torch.ones(2, 1), torch.tensor([[0, 2]]))
    with pytest.raises(ValueError, match="edge_index"):
        ewt.spmm(torch.tensor([0, 1]), torch.ones(2, 3))
    with pytest.raises(ValueError):
        ewt.spmm(torch.tensor([[0], [5]]), torch.ones(2, 3))  # node id out of range


def ref_spmm(edge_index, x, w, reduce, N):
    src, dst = edge_index
    msg = x[src] if w is None else x[src] * w.unsqueeze(1)
    return ref_scatter(msg, dst, N, reduce)


@pytest.mark.parametrize("N,E,C", [(4, 0, 3), (1, 1, 2), (30, 120, 5), (200, 900, 16)])
@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("weighted", [False, True])
def test_spmm_matches_gather_scatter_reference(N, E, C, reduce, weighted):
    gen = torch.Generator().manual_seed(N + E + C + len(reduce) + weighted)
    edge_index = torch.randint(0, N, (2, E), generator=gen)
    x = torch.randn(N, C, generator=gen, requires_grad=True)
    w = torch.rand(E, generator=gen).add(0.5).requires_grad_() if weighted else None
    got = ewt.spmm(edge_index, x, w, reduce=reduce)
    x_ref = x.detach().clone().requires_grad_()
    w_ref = w.detach().clone().requires_grad_() if weighted else None
    want = ref_spmm(edge_index, x_ref, w_ref, reduce, N)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    grad = torch.randn(N, C, generator=gen)
    (got * grad).sum().backward()
    (want * grad).sum().backward()
    torch.testing.assert_close(x.grad, x_ref.grad, rtol=1e-5, atol=1e-5)
    if weighted and E:
        torch.testing.assert_close(w.grad, w_ref.grad, rtol=1e-4, atol=1e-5)


def test_spmm_accepts_a_prebuilt_csr_and_1d_x():
    edge_index = torch.tensor([[0, 1, 2, 2], [1, 2, 0, 1]])
    csr = ewt.CSR.from_edge_index(edge_index, 3)
    x = torch.tensor([1.0, 10.0, 100.0])
    assert ewt.spmm(csr, x).tolist() == [100.0, 101.0, 10.0]
    assert ewt.spmm(edge_index, x, reduce="max").tolist() == [100.0, 100.0, 10.0]


@pytest.mark.parametrize("bipartite", [False, True])
def test_csr_transpose_is_made_only_when_a_gradient_needs_it(bipartite):
    gen = torch.Generator().manual_seed(4)
    n_src, n_dst = (9, 5) if bipartite else (7, 7)
    edge_index = torch.stack([torch.randint(0, n_src, (30,), generator=gen),
                              torch.randint(0, n_dst, (30,), generator=gen)])
    csr = ewt.CSR.from_edge_index(edge_index, n_dst, n_src if bipartite else None)
    x = torch.randn(n_src, 4, generator=gen)
    expected = torch.zeros(n_dst, 4).index_add_(0, edge_index[1], x[edge_index[0]])
    for reduce in ("sum", "max"):
        ewt.spmm(csr, x, reduce=reduce)
    assert csr._transpose is None  # no gradient asked for: never built
    xg = x.clone().requires_grad_()
    out = ewt.spmm(csr, xg)
    torch.testing.assert_close(out, expected)
    assert csr._transpose is not None and csr.num_sources == n_src
    assert csr.t_offsets.numel() == n_src + 1 and int(csr.t_offsets[-1]) == 30
    # Gradient through the transpose: d(sum(out * g))/dx[u] = sum of g over u's out-edges.
    g = torch.randn(n_dst, 4, generator=gen)
    (out * g).sum().backward()
    torch.testing.assert_close(xg.grad, torch.zeros(n_src, 4).index_add_(0, edge_index[0], g[edge_index[1]]))


@needs_float64
def test_gradcheck_float64():
    gen = torch.Generator().manual_seed(3)
    src = torch.randn(12, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    index = torch.randint(0, 5, (12,), generator=gen)
    indptr = torch.tensor([0, 3, 3, 7, 12])
    edge_index = torch.randint(0, 6, (2, 20), generator=gen)
    x = torch.randn(6, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    w = torch.rand(20, dtype=torch.float64, generator=gen).add(0.5).requires_grad_()
    for reduce in REDUCES:
        assert torch.autograd.gradcheck(lambda s: ewt.scatter(s, index, 0, dim_size=5, reduce=reduce), (src,))
        assert torch.autograd.gradcheck(lambda s: ewt.segment_csr(s, indptr, reduce=reduce), (src,))
        assert torch.autograd.gradcheck(lambda a, b: ewt.spmm(edge_index, a, b, reduce=reduce), (x, w))


def test_operators_pass_torch_library_opcheck():
    gen = torch.Generator().manual_seed(9)
    src = torch.randn(2, 10, 3, generator=gen, requires_grad=True)  # canonical [A, D, B]
    index = torch.randint(0, 4, (1, 10, 1), generator=gen)
    full_index = torch.randint(0, 4, (2, 10, 3), generator=gen)
    sorted_index = index.sort(dim=1).values
    indptr = torch.tensor([[0, 2, 2, 10]])
    csr = ewt.CSR.from_edge_index(torch.randint(0, 5, (2, 12), generator=gen), 5)
    x = torch.randn(5, 3, generator=gen, requires_grad=True)
    tests = ("test_schema", "test_faketensor", "test_aot_dispatch_dynamic")
    ops = torch.ops.edgewise
    structure = (csr.offsets, csr.sources)
    transposed = (csr.t_offsets, csr.t_targets, csr.t_edge_ids)
    # Each index form and each gradient rule once (opcheck's dynamic AOT pass is slow).
    for idx, is_sorted, reduce in ((index, False, "sum"), (full_index, False, "mean"), (sorted_index, True, "mul"),
                                   (index, False, "max"), (full_index, False, "std")):
        torch.library.opcheck(ops.scatter_reduce, (src, idx, 4, reduce, is_sorted, "t"), test_utils=tests)
    for reduce in ("sum", "max"):
        torch.library.opcheck(ops.segment_reduce, (src, indptr, reduce, "t"), test_utils=tests)
        torch.library.opcheck(ops.spmm, (*structure, x, None, *transposed, reduce), test_utils=tests)
    torch.library.opcheck(ops.scatter_reduce_arg, (src, full_index, 4, "max", False, "t"), test_utils=tests)
    torch.library.opcheck(ops.scatter_reduce_arg, (src, sorted_index, 4, "min", True, "t"), test_utils=tests)
    torch.library.opcheck(ops.segment_reduce_arg, (src, indptr, "max", "t"), test_utils=tests)
    torch.library.opcheck(ops.spmm_arg, (*structure, x, None, *transposed, "max"), test_utils=tests)
    torch.library.opcheck(ops.spmm_and_rows, (*structure, x, None, *transposed, "mean", 3), test_utils=tests)
    small = torch.randn(2, 3, 3, generator=gen, requires_grad=True)
    torch.library.opcheck(ops.gather_coo, (small, torch.tensor([[0, 2, 2, 1]]), "t"), test_utils=tests)
    torch.library.opcheck(ops.gather_csr, (small, torch.tensor([[0, 1, 4, 4]]), "t"),
                          test_utils=("test_schema", "test_faketensor"))


def test_torch_compile_fullgraph_traces_the_operators():
    gen = torch.Generator().manual_seed(11)
    N, E, C = 20, 60, 4
    edge_index = torch.randint(0, N, (2, E), generator=gen)
    index = torch.randint(0, 6, (N,), generator=gen)
    indptr = torch.tensor([0, 5, 5, 12, N])
    w = torch.rand(E, generator=gen)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(C, C)

        def forward(self, x):
            h = self.lin(x)
            a = ewt.spmm(edge_index, h, w, reduce="sum", num_nodes=N) + ewt.spmm(edge_index, h, reduce="max", num_nodes=N)
            b = ewt.scatter(a, index, 0, dim_size=6, reduce="mean")
            c, _ = ewt.segment_max_csr(a, indptr)
            return b.sum() + c.sum() + ewt.segment_csr(a, indptr, reduce="sum").pow(2).sum()

    torch.manual_seed(0)
    model = Model()
    x = torch.randn(N, C, generator=gen)
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    got = compiled(x)
    got.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    want = model(x)
    want.backward()
    torch.testing.assert_close(got, want)
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(g, p.grad)


def test_import_edgewise_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, edgewise; assert 'torch' not in sys.modules, 'import edgewise pulled in torch'"
    subprocess.run([sys.executable, "-c", code], check=True)
