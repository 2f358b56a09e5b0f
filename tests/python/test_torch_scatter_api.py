"""edgewise.torch's torch_scatter API against torch_scatter 2.1.2's own algorithm
(torch_scatter_reference: its CPU loops transcribed) and against torch's native ops
(index_add_, scatter_reduce(include_self=False), segment_reduce, gather): every
function x dtype x dim x index form (1-D broadcast, leading, full shape; batched
indptr / index) x out=, edge cases, gradients (gradcheck in float64 for every
function) and the tie rule of min/max."""

import zlib

import pytest

torch = pytest.importorskip("torch")
ts = pytest.importorskip("edgewise.torch")

import torch_scatter_reference as ref  # noqa: E402

def seed_of(*parts):
    """A seed stable across processes (str hashes are salted per process)."""
    return zlib.crc32(repr(parts).encode()) % 2**31


DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32, torch.int64]
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
TOL = {torch.float16: 1e-2, torch.bfloat16: 2e-2, torch.float32: 1e-5, torch.float64: 1e-10}
SHAPE = (3, 5, 2)
S = 4  # outputs along dim; index values stay below S - 1, so the last output is always empty


def values(shape, dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
    return torch.randint(-5, 6, shape, generator=gen, dtype=torch.int64).to(dtype)


def assert_matches(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if got.is_floating_point():
        tol = TOL[got.dtype]
        torch.testing.assert_close(got.double(), want.double(), rtol=tol, atol=tol, equal_nan=True)
    else:
        assert torch.equal(got, want), (got, want)


def scatter_index(kind, dim, seed):
    """An index of the given form for src of SHAPE reduced along dim."""
    gen = torch.Generator().manual_seed(seed)
    d = dim % len(SHAPE)
    shape = {"1d": (SHAPE[d],), "lead": SHAPE[:d + 1], "full": SHAPE}[kind]
    return torch.randint(0, S - 1, shape, generator=gen)


SCATTER_FORMS = [("1d", 0), ("1d", 1), ("1d", -1), ("lead", 1), ("full", 0), ("full", 1), ("full", -1)]
SCATTER_FNS = {"sum": ts.scatter_sum, "add": ts.scatter_add, "mul": ts.scatter_mul, "mean": ts.scatter_mean}


@pytest.mark.parametrize("with_out", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind,dim", SCATTER_FORMS)
@pytest.mark.parametrize("reduce", ["sum", "mul", "mean", "min", "max"])
def test_scatter_family_matches_torch_scatter(reduce, kind, dim, dtype, with_out):
    seed = seed_of(reduce, kind, dim, dtype, with_out)
    src = values(SHAPE, dtype, seed)
    index = scatter_index(kind, dim, seed + 1)
    out_shape = list(SHAPE)
    out_shape[dim] = S
    out = values(out_shape, dtype, seed + 2) if with_out else None
    want, want_arg = ref.scatter(src, index, dim, out, S, reduce)
    got = ts.scatter(src, index, dim, None if out is None else out.clone(), S, reduce)
    assert_matches(got, want)
    if reduce in ("min", "max"):
        fn = ts.scatter_max if reduce == "max" else ts.scatter_min
        target = None if out is None else out.clone()
        got, arg = fn(src, index, dim, target, S)
        assert_matches(got, want)
        assert torch.equal(arg, want_arg)
        if target is not None:
            assert got is target, "the result is out itself, as torch_scatter"
    else:
        target = None if out is None else out.clone()
        got = SCATTER_FNS[reduce](src, index, dim, target, S)
        assert_matches(got, want)
        if target is not None:
            assert got is target


def indptr_for(batched, seed, segments=S, rows=SHAPE[1], lead=SHAPE[0]):
    """indptr over `rows` (gaps before the first and after the last segment included)."""
    gen = torch.Generator().manual_seed(seed)
    count = lead if batched else 1
    cuts = torch.sort(torch.randint(0, rows + 1, (count, segments + 1), generator=gen), dim=1).values
    return cuts if batched else cuts[0]


@pytest.mark.parametrize("with_out", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("reduce", ["sum", "mean", "min", "max"])
def test_segment_csr_family_matches_torch_scatter(reduce, batched, dtype, with_out):
    seed = seed_of("csr", reduce, batched, dtype, with_out)
    # 1-D indptr: segments along dim 0 of a [5, 3, 2] src; batched [3, S + 1]: along dim 1 of SHAPE.
    src = values(SHAPE if batched else (5, 3, 2), dtype, seed)
    indptr = indptr_for(batched, seed + 1, rows=5)
    want, want_arg = ref.segment_csr(src, indptr, None, reduce)
    out = values(want.shape, dtype, seed + 2) if with_out else None
    got = ts.segment_csr(src, indptr, out, reduce)
    assert_matches(got, want)
    if out is not None:
        assert got is out
    fn = {"sum": ts.segment_sum_csr, "mean": ts.segment_mean_csr, "min": ts.segment_min_csr,
          "max": ts.segment_max_csr}[reduce]
    got = fn(src, indptr)
    if reduce in ("min", "max"):
        got, arg = got
        assert torch.equal(arg, want_arg)
    assert_matches(got, want)
    if reduce == "sum":
        assert_matches(ts.segment_add_csr(src, indptr), want)


def sorted_index(batched, seed, rows=5, lead=SHAPE[0]):
    gen = torch.Generator().manual_seed(seed)
    shape = (lead, rows) if batched else (rows,)
    return torch.sort(torch.randint(0, S - 1, shape, generator=gen), dim=-1).values


@pytest.mark.parametrize("with_out", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("reduce", ["sum", "mean", "min", "max"])
def test_segment_coo_family_matches_torch_scatter(reduce, batched, dtype, with_out):
    seed = seed_of("coo", reduce, batched, dtype, with_out)
    src = values(SHAPE if batched else (5, 3, 2), dtype, seed)
    index = sorted_index(batched, seed + 1)
    out_shape = (SHAPE[0], S, SHAPE[2]) if batched else (S, 3, 2)
    out = values(out_shape, dtype, seed + 2) if with_out else None
    want, want_arg = ref.segment_coo(src, index, out, S, reduce)
    got = ts.segment_coo(src, index, None if out is None else out.clone(), S, reduce)
    assert_matches(got, want)
    fn = {"sum": ts.segment_sum_coo, "mean": ts.segment_mean_coo, "min": ts.segment_min_coo,
          "max": ts.segment_max_coo}[reduce]
    got = fn(src, index, None if out is None else out.clone(), S)
    if reduce in ("min", "max"):
        got, arg = got
        assert torch.equal(arg, want_arg)
    assert_matches(got, want)
    if reduce == "sum" and out is None:
        assert_matches(ts.segment_add_coo(src, index, dim_size=S), want)
        # Without dim_size: 1 + the largest last entry, as torch_scatter.
        assert ts.segment_coo(src, index).size(index.dim() - 1) == int(index[..., -1].max()) + 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batched", [False, True])
def test_gathers_match_torch_scatter(batched, dtype):
    seed = seed_of("gather", batched, dtype)
    indptr = indptr_for(batched, seed, segments=4, rows=6)
    indptr[..., -1] = 6  # torch_scatter sizes the output by the last batch's last entry
    src = values((SHAPE[0], 4, 2) if batched else (4, 3, 2), dtype, seed + 1)
    assert_matches(ts.gather_csr(src, indptr), ref.gather_csr(src, indptr))
    index = sorted_index(batched, seed + 2, rows=6)
    assert_matches(ts.gather_coo(src, index), ref.gather_coo(src, index))
    # out=: gather_coo overwrites it; gather_csr writes the covered rows only.
    out = values(ref.gather_coo(src, index).shape, dtype, seed + 3)
    got = ts.gather_coo(src, index, out)
    assert got is out
    assert_matches(out, ref.gather_coo(src, index))
    rows = 8
    out = values((SHAPE[0], rows, 2) if batched else (rows, 3, 2), dtype, seed + 4)
    want = ref.gather_csr(src, indptr, out_rows=rows)
    positions = torch.arange(rows).view((1, rows, 1) if batched else (rows, 1, 1))
    ip = indptr.view(-1, indptr.size(-1)) if batched else indptr.view(1, -1)
    first = ip[:, :1].view((-1, 1, 1) if batched else (1, 1, 1))
    last = ip[:, -1:].view((-1, 1, 1) if batched else (1, 1, 1))
    covered = (positions >= first) & (positions < last)
    want = torch.where(covered, want, out)
    got = ts.gather_csr(src, indptr, out)
    assert got is out
    assert_matches(out, want)


# --- against torch's own ops, larger inputs ------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_against_torch_native_ops(dtype):
    gen = torch.Generator().manual_seed(7)
    M, C, N = 3000, 16, 257
    src = values((M, C), dtype, 8)
    index = torch.randint(0, N, (M,), generator=gen)
    expanded = index.view(-1, 1).expand(M, C)
    wide = src.double() if dtype.is_floating_point else src
    want = torch.zeros(N, C, dtype=wide.dtype).index_add_(0, index, wide).to(dtype)
    assert_matches(ts.scatter(src, index, 0, dim_size=N), want)
    for reduce in ("amax", "amin"):
        want = torch.zeros(N, C, dtype=dtype).scatter_reduce(0, expanded, src, reduce, include_self=False)
        assert_matches(ts.scatter(src, index, 0, dim_size=N, reduce=reduce[1:]), want)
    # dim -1 of the transposed problem
    assert_matches(ts.scatter(src.t(), index, -1, dim_size=N, reduce="max"),
                   torch.zeros(C, N, dtype=dtype).scatter_reduce(1, expanded.t(), src.t(), "amax", include_self=False))
    lengths = torch.bincount(index, minlength=N)
    order = torch.argsort(index, stable=True)
    grouped = src[order]
    indptr = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)])
    if dtype.is_floating_point:
        for reduce in ("sum", "mean", "max", "min"):
            want = torch.segment_reduce(grouped.double(), reduce, lengths=lengths, unsafe=True).to(dtype)
            want = torch.where(lengths.view(-1, 1) > 0, want, torch.zeros_like(want))  # torch fills empty with +-inf
            assert_matches(ts.segment_csr(grouped, indptr, reduce=reduce), want)
            assert_matches(ts.segment_coo(grouped, index[order], dim_size=N, reduce=reduce), want)
    out = ts.gather_csr(torch.arange(N, dtype=torch.float64), indptr)
    assert torch.equal(out, index[order].double())
    assert_matches(ts.gather_coo(src, index[order].clamp(max=M - 1)), src.gather(0, index[order].clamp(max=M - 1)
                                                                                     .view(-1, 1).expand(M, C)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("C", [1, 3, 16])
def test_gathers_large_against_torch_gather(dtype, C):
    """Inputs spanning many blocks of the CPU row-copy kernels: dim 0 and dim -1, one
    index / indptr for every row and one per row (rows no segment covers are 0), int32
    index, and a bad entry in a per-row index named as the operators name it."""
    seed = seed_of("gather-large", dtype, C)
    gen = torch.Generator().manual_seed(seed)
    S, E, head = 300, 40000, 5
    src = values((S, C), dtype, seed)
    index = torch.randint(0, S, (E,), generator=gen)
    want = src.gather(0, index.view(-1, 1).expand(E, C))
    assert torch.equal(ts.gather_coo(src, index), want)
    assert torch.equal(ts.gather_coo(src, index.int()), want)
    assert torch.equal(ts.gather_coo(src.t(), index.view(1, -1)), want.t())
    per_row = torch.randint(0, S, (C, E), generator=gen)
    assert torch.equal(ts.gather_coo(src.t(), per_row), src.t().gather(1, per_row))
    bad = per_row.clone()
    bad[C - 1, E // 2] = S
    with pytest.raises(ValueError, match=rf"gather_coo: index holds {S}, outside \[0, {S}\)"):
        ts.gather_coo(src.t(), bad)

    # CSR: `head` uncovered rows, then the segments of the sorted index.
    indptr = torch.cat([torch.zeros(1, dtype=torch.int64), torch.bincount(index, minlength=S).cumsum(0)]) + head
    spread = src.gather(0, index.sort().values.view(-1, 1).expand(E, C))
    want = torch.cat([torch.zeros(head, C, dtype=dtype), spread])
    assert torch.equal(ts.gather_csr(src, indptr), want)
    assert torch.equal(ts.gather_csr(src.t(), indptr.view(1, -1)), want.t())
    # One indptr per row of src.t(), row c ending c rows early (its tail uncovered).
    rows = head + E
    ends = rows - torch.arange(C - 1, -1, -1).view(-1, 1)
    per_row = torch.minimum(indptr.view(1, -1), ends)
    positions = torch.arange(rows).view(1, -1).expand(C, rows).contiguous()
    segment = torch.searchsorted(per_row, positions, right=True) - 1
    covered = (positions >= per_row[:, :1]) & (positions < per_row[:, -1:])
    want = torch.where(covered, src.t().gather(1, segment.clamp(0, S - 1)), torch.zeros((), dtype=dtype))
    assert torch.equal(ts.gather_csr(src.t(), per_row), want)
    bad = indptr.clone()
    bad[S // 2] = bad[S // 2 + 1] + 1
    with pytest.raises(ValueError, match="gather_csr: indptr must be nondecreasing"):
        ts.gather_csr(src, bad)


# --- edge cases -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_empty_inputs_and_empty_outputs(dtype):
    empty = torch.empty(0, 3, dtype=dtype)
    none = torch.empty(0, dtype=torch.int64)
    for reduce, fill in (("sum", 0), ("mean", 0), ("mul", 1), ("min", 0), ("max", 0)):
        got = ts.scatter(empty, none, 0, dim_size=2, reduce=reduce)
        assert got.shape == (2, 3) and bool((got == fill).all()), (reduce, got)
    values_, arg = ts.scatter_max(empty, none, 0, dim_size=2)
    assert bool((arg == 0).all()), "arg = src.size(dim) = 0 where nothing arrives"
    assert ts.scatter(empty, none, 0).shape == (0, 3), "no dim_size, empty index: 0 outputs (torch_scatter)"
    got, arg = ts.segment_max_csr(torch.ones(4, 2, dtype=dtype), torch.tensor([0, 0, 4, 4]))
    assert got[0].tolist() == [0, 0] and arg[0].tolist() == [4, 4] and arg[2].tolist() == [4, 4]
    assert ts.segment_csr(empty, torch.tensor([0, 0])).tolist() == [[0, 0, 0]]
    assert ts.gather_csr(empty, torch.tensor([0])).shape == (0, 3)
    assert ts.scatter(torch.ones(3, 0, dtype=dtype), torch.tensor([0, 1, 0]), 0).shape == (2, 0)


def test_one_element_one_huge_group_and_skew():
    gen = torch.Generator().manual_seed(3)
    src = torch.randn(50_000, 4, generator=gen)
    hub = torch.zeros(50_000, dtype=torch.int64)
    hub[::97] = 1 + torch.randint(0, 10, (hub[::97].numel(),), generator=gen)  # one hub + power-law-ish rest
    want = torch.zeros(11, 4, dtype=torch.float64).index_add_(0, hub, src.double())
    torch.testing.assert_close(ts.scatter(src, hub, 0, dim_size=11).double(), want, rtol=1e-4, atol=1e-3)
    one = ts.scatter_max(torch.tensor([[2.5]]), torch.tensor([0]), 0)
    assert one[0].tolist() == [[2.5]] and one[1].tolist() == [[0]]


def test_non_contiguous_expanded_inputs_and_int32_index():
    gen = torch.Generator().manual_seed(4)
    base = torch.randn(6, 5, 4, generator=gen)
    src = base.transpose(0, 2)  # [4, 5, 6], non-contiguous
    index = torch.randint(0, 3, (5,), generator=gen)
    want, _ = ref.scatter(src, index, 1, None, 3, "mean")
    assert_matches(ts.scatter_mean(src, index.to(torch.int32), 1, dim_size=3), want)
    expanded = torch.randn(1, 5, 1, generator=gen).expand(4, 5, 6)
    want, want_arg = ref.scatter(expanded, index, 1, None, 3, "max")
    got, arg = ts.scatter_max(expanded, index.to(torch.int32), 1, dim_size=3)
    assert_matches(got, want)
    assert torch.equal(arg, want_arg)
    indptr = torch.tensor([0, 2, 5], dtype=torch.int32)
    assert_matches(ts.segment_csr(src, indptr.view(1, -1).expand(4, 3)), ref.segment_csr(src, indptr.view(1, -1), None,
                                                                                          "sum")[0])


def test_ties_nan_and_infinities():
    # ties: the first element wins (torch_scatter's strict comparison), and gets the gradient
    src = torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0], requires_grad=True)
    index = torch.tensor([0, 0, 0, 1, 0])
    out, arg = ts.scatter_max(src, index)
    assert out.tolist() == [3.0, 2.0] and arg.tolist() == [1, 3]
    out.sum().backward()
    assert src.grad.tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]
    # NaN propagates through min / max (torch's amax / amin rule; a documented difference:
    # torch_scatter skips NaN); infinities compare as numbers
    nan = float("nan")
    values_, arg = ts.scatter_max(torch.tensor([1.0, nan, 5.0, float("inf")]), torch.tensor([0, 0, 1, 1]))
    assert torch.isnan(values_[0]) and arg.tolist() == [1, 3] and values_[1] == float("inf")
    want = torch.zeros(2).scatter_reduce(0, torch.tensor([0, 0, 1, 1]), torch.tensor([1.0, nan, 5.0, float("inf")]),
                                         "amax", include_self=False)
    torch.testing.assert_close(values_, want, equal_nan=True)


def test_integer_means_floor_in_scatter_and_truncate_in_segments():
    src = torch.tensor([-3, 0, -7, 2], dtype=torch.int64)
    assert ts.scatter_mean(src, torch.tensor([0, 0, 1, 1])).tolist() == [-2, -3]  # floor, torch_scatter's scatter_mean
    assert ts.segment_csr(src, torch.tensor([0, 2, 4]), reduce="mean").tolist() == [-1, -2]  # C++ truncation
    assert ts.segment_coo(src, torch.tensor([0, 0, 1, 1]), reduce="mean").tolist() == [-1, -2]


# --- gradients ------------------------------------------------------------------------------------


def _double(shape, seed, positive=False):
    t = values(shape, torch.float64, seed)
    return (t.abs() + 0.5 if positive else t).requires_grad_()


GRAD_FUNCTIONS = {
    "scatter_sum": lambda s, i, d: ts.scatter_sum(s, i, d, dim_size=S),
    "scatter_add": lambda s, i, d: ts.scatter_add(s, i, d, dim_size=S),
    "scatter_mul": lambda s, i, d: ts.scatter_mul(s, i, d, dim_size=S),
    "scatter_mean": lambda s, i, d: ts.scatter_mean(s, i, d, dim_size=S),
    "scatter_min": lambda s, i, d: ts.scatter_min(s, i, d, dim_size=S)[0],
    "scatter_max": lambda s, i, d: ts.scatter_max(s, i, d, dim_size=S)[0],
    "scatter(max)": lambda s, i, d: ts.scatter(s, i, d, dim_size=S, reduce="max"),
    "scatter_std": lambda s, i, d: ts.scatter_std(s, i, d, dim_size=S),
    "scatter_logsumexp": lambda s, i, d: ts.scatter_logsumexp(s, i, d, dim_size=S),
    "scatter_softmax": lambda s, i, d: ts.scatter_softmax(s, i, d, dim_size=S),
    "scatter_log_softmax": lambda s, i, d: ts.scatter_log_softmax(s, i, d, dim_size=S),
}


@pytest.mark.parametrize("kind,dim", [("1d", 1), ("full", -1)])
@pytest.mark.parametrize("name", sorted(GRAD_FUNCTIONS))
def test_gradcheck_scatter_functions(name, kind, dim):
    src = _double(SHAPE, 11, positive=name == "scatter_mul")
    index = scatter_index(kind, dim, 12)
    if name == "scatter_std":  # a one-element group's std is sqrt at 0: not differentiable (NaN in torch_scatter too)
        index = torch.zeros_like(index)  # one group of every row, the rest empty
    assert torch.autograd.gradcheck(lambda s: GRAD_FUNCTIONS[name](s, index, dim), (src,))


@pytest.mark.parametrize("batched", [False, True])
def test_gradcheck_segment_and_gather_functions(batched):
    src = _double(SHAPE if batched else (5, 3, 2), 13)
    indptr = indptr_for(batched, 14, rows=5)
    index = sorted_index(batched, 15)
    functions = [
        lambda s: ts.segment_sum_csr(s, indptr), lambda s: ts.segment_add_csr(s, indptr),
        lambda s: ts.segment_mean_csr(s, indptr), lambda s: ts.segment_min_csr(s, indptr)[0],
        lambda s: ts.segment_max_csr(s, indptr)[0], lambda s: ts.segment_csr(s, indptr, reduce="max"),
        lambda s: ts.segment_sum_coo(s, index, dim_size=S), lambda s: ts.segment_add_coo(s, index, dim_size=S),
        lambda s: ts.segment_mean_coo(s, index, dim_size=S), lambda s: ts.segment_min_coo(s, index, dim_size=S)[0],
        lambda s: ts.segment_max_coo(s, index, dim_size=S)[0], lambda s: ts.segment_coo(s, index, reduce="mean"),
    ]
    for fn in functions:
        assert torch.autograd.gradcheck(fn, (src,))
    small = _double((SHAPE[0], S, 2) if batched else (S, 3, 2), 16)
    spread = indptr_for(batched, 17, segments=S, rows=6)
    spread[..., -1] = 6
    assert torch.autograd.gradcheck(lambda s: ts.gather_csr(s, spread), (small,))
    assert torch.autograd.gradcheck(lambda s: ts.gather_coo(s, sorted_index(batched, 18, rows=6)), (small,))


def test_gradients_with_out_flow_to_src_and_out():
    src = _double((6, 2), 19)
    index = torch.tensor([0, 1, 0, 2, 1, 0])
    # every output reached: with out, an empty group's logsumexp has a NaN gradient (torch_scatter's too)
    base = _double((3, 2), 20)
    assert torch.autograd.gradcheck(lambda s, o: ts.scatter_sum(s, index, 0, o.clone()), (src, base))
    assert torch.autograd.gradcheck(lambda s, o: ts.scatter_mean(s, index, 0, o.clone()), (src, base))
    assert torch.autograd.gradcheck(lambda s, o: ts.scatter_logsumexp(s, index, 0, o.clone()), (src, base))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_types_have_gradients(dtype):
    src32 = values(SHAPE, torch.float32, 21).requires_grad_()
    src = src32.detach().to(dtype).requires_grad_()
    index = scatter_index("1d", 1, 22)
    functions = [lambda s: ts.scatter_sum(s, index, 1, dim_size=S), lambda s: ts.scatter_mean(s, index, 1, dim_size=S),
                 lambda s: ts.scatter_max(s, index, 1, dim_size=S)[0], lambda s: ts.scatter_softmax(s, index, 1),
                 lambda s: ts.segment_csr(s, torch.tensor([0, 1, 3]), reduce="mean")]
    for fn in functions:
        g = values(fn(src32).shape, torch.float32, 23)
        (fn(src) * g.to(dtype)).sum().backward()
        (fn(src32) * g).sum().backward()
        torch.testing.assert_close(src.grad.float(), src32.grad, rtol=TOL[dtype] * 4, atol=TOL[dtype] * 4)
        src.grad = src32.grad = None


@pytest.mark.parametrize("fn", ["scatter_sum", "scatter_mean", "segment_sum_coo"])
def test_results_may_be_modified_in_place_under_autograd(fn):
    # Results are not autograd views of an operator's output: in-place ops on them
    # (PyG's gcn_norm does deg.pow_(-0.5)) work and give torch's gradients.
    torch = pytest.importorskip("torch")
    src = torch.rand(6, 3, dtype=torch.float64, requires_grad=True)
    index = torch.tensor([0, 0, 1, 2, 2, 2])
    if fn == "segment_sum_coo":
        out = ts.segment_sum_coo(src, index, dim_size=4)
    else:
        out = getattr(ts, fn)(src, index, dim=0, dim_size=4)
    out.pow_(2)
    grad = torch.autograd.grad(out.sum(), src)[0]
    plain = torch.zeros(4, 3, dtype=torch.float64).index_add(0, index, src)
    if fn == "scatter_mean":
        plain = plain / torch.bincount(index, minlength=4).clamp(min=1).unsqueeze(1)
    expected = torch.autograd.grad(plain.pow(2).sum(), src)[0]
    torch.testing.assert_close(grad, expected)
