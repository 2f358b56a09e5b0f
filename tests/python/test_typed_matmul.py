"""segment_matmul and grouped_matmul (edgewise.torch, pyg-lib's names and signatures)
against a loop of torch.matmul: seeded random inputs over empty types, one-row types,
T = 1 and power-law segment sizes, float32 / float64 / bfloat16, gradients of every
input, biases, outputs left out of the loss, the torch.library contract (opcheck), the
float16 fallback and bad input named."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import edgewise  # noqa: E402
import edgewise.torch as ew  # noqa: E402

RTOL = {torch.float32: 1e-5, torch.float64: 1e-12}


def _lengths(rng, regime, types):
    if regime == "uniform":
        return rng.integers(0, 20, types)
    if regime == "empty_types":
        lengths = rng.integers(0, 20, types)
        lengths[rng.random(types) < 0.5] = 0
        return lengths
    if regime == "one_row":
        return np.ones(types, dtype=np.int64)
    if regime == "power_law":
        return np.minimum((rng.pareto(1.2, types) * 8).astype(np.int64), 5000)
    if regime == "one_huge":
        lengths = np.zeros(types, dtype=np.int64)
        lengths[types // 2] = 6000
        return lengths
    raise AssertionError(regime)


def _loop(x, ptr, w):
    bounds = ptr.tolist()
    return torch.cat([x[bounds[t]:bounds[t + 1]] @ w[t] for t in range(w.size(0))])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("regime", ["uniform", "empty_types", "one_row", "power_law", "one_huge"])
@pytest.mark.parametrize("types,k,m", [(1, 16, 8), (8, 3, 5), (64, 32, 32), (200, 7, 65)])
def test_segment_matmul_against_loop(dtype, regime, types, k, m):
    rng = np.random.default_rng(hash((regime, types, k, m)) % 2**32)
    lengths = _lengths(rng, regime, types)
    ptr = torch.from_numpy(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
    n = int(ptr[-1])
    gen = torch.Generator().manual_seed(int(rng.integers(1 << 30)))
    x = torch.randn(n, k, dtype=dtype, generator=gen, requires_grad=True)
    w = torch.randn(types, k, m, dtype=dtype, generator=gen, requires_grad=True)
    g = torch.randn(n, m, dtype=dtype, generator=gen)
    out = ew.segment_matmul(x, ptr, w)
    expected = _loop(x, ptr, w)
    torch.testing.assert_close(out, expected, rtol=RTOL[dtype], atol=RTOL[dtype] * k)
    gx, gw = torch.autograd.grad(out, (x, w), g)
    ex, ew_ = torch.autograd.grad(expected, (x, w), g)
    torch.testing.assert_close(gx, ex, rtol=RTOL[dtype], atol=RTOL[dtype] * m)
    torch.testing.assert_close(gw, ew_, rtol=RTOL[dtype], atol=RTOL[dtype] * max(n, 1))


def test_segment_matmul_empty_and_zero_types():
    x = torch.randn(0, 4, requires_grad=True)
    w = torch.randn(3, 4, 5, requires_grad=True)
    out = ew.segment_matmul(x, torch.zeros(4, dtype=torch.int64), w)
    assert out.shape == (0, 5)
    (gw,) = torch.autograd.grad(out.sum(), (w,))
    assert torch.equal(gw, torch.zeros_like(w))
    # T = 0 types over N = 0 rows.
    assert ew.segment_matmul(torch.randn(0, 4), torch.zeros(1, dtype=torch.int64), torch.randn(0, 4, 5)).shape == (0, 5)


def test_segment_matmul_ptr_dtypes_and_layouts():
    x = torch.randn(10, 6)
    w = torch.randn(2, 6, 3)
    expected = _loop(x, torch.tensor([0, 4, 10]), w)
    for ptr in (torch.tensor([0, 4, 10], dtype=torch.int32), torch.tensor([0, 4, 10])):
        torch.testing.assert_close(ew.segment_matmul(x, ptr, w), expected)
    # Non-contiguous inputs (a transposed view) are read correctly.
    xt = torch.randn(6, 10).t()
    torch.testing.assert_close(ew.segment_matmul(xt, torch.tensor([0, 4, 10]), w),
                               _loop(xt.contiguous(), torch.tensor([0, 4, 10]), w))


def _bf16_close(got, exact):
    """got (bfloat16) is exact (float64) rounded once: within a bfloat16 ulp, plus float's sum error."""
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got.double(), exact, rtol=2.0 ** -8, atol=1e-4)


@pytest.mark.parametrize("regime", ["uniform", "empty_types", "one_row", "one_huge"])
@pytest.mark.parametrize("types,k,m", [(1, 16, 8), (8, 64, 64), (64, 32, 16), (200, 7, 65)])
def test_segment_matmul_bfloat16_rounds_float_sums_once(regime, types, k, m):
    rng = np.random.default_rng(hash(("bf16", regime, types, k, m)) % 2**32)
    ptr = torch.from_numpy(np.concatenate([[0], np.cumsum(_lengths(rng, regime, types))]).astype(np.int64))
    gen = torch.Generator().manual_seed(int(rng.integers(1 << 30)))
    n = int(ptr[-1])
    x = torch.randn(n, k, generator=gen).bfloat16().requires_grad_()
    w = torch.randn(types, k, m, generator=gen).bfloat16().requires_grad_()
    g = torch.randn(n, m, generator=gen).bfloat16()
    out = ew.segment_matmul(x, ptr, w)
    x64, w64 = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    exact = _loop(x64, ptr, w64)
    _bf16_close(out, exact)
    gx, gw = torch.autograd.grad(out, (x, w), g)
    ex, ew_ = torch.autograd.grad(exact, (x64, w64), g.double())
    _bf16_close(gx, ex)
    _bf16_close(gw, ew_)


def test_segment_matmul_float16_falls_back_to_the_loop():
    x = torch.randn(9, 4).half()
    w = torch.randn(3, 4, 2).half()
    ptr = torch.tensor([0, 2, 2, 9])
    assert torch.equal(ew.segment_matmul(x, ptr, w), _loop(x, ptr, w))


@pytest.mark.parametrize("ptr,message", [
    ([1, 4, 6], "ptr[0] must be 0"),
    ([0, 5, 4], "ptr must be nondecreasing"),
    ([0, 4, 5], "must equal inputs.size(0)"),
    ([0, 6], "ptr must have T + 1 = 3"),
])
def test_segment_matmul_bad_ptr(ptr, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")
                       .replace("+", r"\+")):
        ew.segment_matmul(torch.randn(6, 3), torch.tensor(ptr), torch.randn(2, 3, 4))


def test_segment_matmul_bad_shapes_and_dtypes():
    ptr = torch.tensor([0, 3, 6])
    with pytest.raises(ValueError, match="K = inputs.size"):
        ew.segment_matmul(torch.randn(6, 3), ptr, torch.randn(2, 4, 4))
    with pytest.raises(ValueError, match="other must be 3-D"):
        ew.segment_matmul(torch.randn(6, 3), ptr, torch.randn(3, 4))
    with pytest.raises(ValueError, match="inputs must be 2-D"):
        ew.segment_matmul(torch.randn(6), ptr, torch.randn(2, 1, 4))
    with pytest.raises(ValueError, match="other has dtype torch.float64"):
        ew.segment_matmul(torch.randn(6, 3), ptr, torch.randn(2, 3, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="ptr must be a 1-D integer tensor"):
        ew.segment_matmul(torch.randn(6, 3), ptr.float(), torch.randn(2, 3, 4))


def test_binding_names_bad_arguments_and_leaves_nothing_half_done():
    x = np.ones((6, 3), np.float32)
    with pytest.raises(ValueError, match="ptr must be nondecreasing"):
        edgewise.segment_matmul(x, np.array([0, 4, 3, 6]), np.ones((3, 3, 2), np.float32))
    with pytest.raises(ValueError, match="weight has 2 types but ptr has 4 elements"):
        edgewise.segment_matmul(x, np.array([0, 1, 3, 6]), np.ones((2, 3, 2), np.float32))
    with pytest.raises(ValueError, match="do not chain"):
        edgewise.grouped_matmul([x], [np.ones((4, 2), np.float32)])
    out = edgewise.segment_matmul_weight_grad(x, np.array([0, 0, 6]), np.ones((6, 2), np.float32))
    assert out.shape == (2, 3, 2) and (out[0] == 0).all() and (out[1] == 6).all()
    # The by-address form edgewise.torch uses on the CPU still checks shapes and overlaps.
    w = np.ones((3, 2), np.float32)
    o = np.full((6, 2), -1.0, np.float32)
    rows = np.array([[x.ctypes.data, w.ctypes.data, o.ctypes.data]], np.int64)
    edgewise._edgewise.grouped_matmul_at(rows, np.array([[6, 2, 3]]), "float32")
    assert (o == 3).all()
    with pytest.raises(ValueError, match="overlaps the input a"):
        edgewise._edgewise.grouped_matmul_at(np.array([[x.ctypes.data, w.ctypes.data, x.ctypes.data]], np.int64),
                                             np.array([[6, 2, 3]]), "float32")
    with pytest.raises(ValueError, match="dtype must be float32, float64 or bfloat16"):
        edgewise._edgewise.grouped_matmul_at(rows, np.array([[6, 2, 3]]), "float16")
    with pytest.raises(ValueError, match=r"shapes must be \[P, 3\]"):
        edgewise._edgewise.grouped_matmul_at(rows, np.array([[6, 2]]), "float32")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_grouped_matmul_against_loop(dtype):
    gen = torch.Generator().manual_seed(5)
    shapes = [(5, 16, 32), (3, 32, 64), (0, 4, 4), (1, 1, 1), (700, 20, 9), (6, 0, 3)]
    xs = [torch.randn(n, k, dtype=dtype, generator=gen, requires_grad=True) for n, k, _ in shapes]
    ws = [torch.randn(k, m, dtype=dtype, generator=gen, requires_grad=True) for _, k, m in shapes]
    bs = [torch.randn(m, dtype=dtype, generator=gen, requires_grad=True) if i % 2 else None
          for i, (_, _, m) in enumerate(shapes)]
    outs = ew.grouped_matmul(xs, ws, bs)
    expected = [x @ w + (0 if b is None else b) for x, w, b in zip(xs, ws, bs)]
    for out, exp in zip(outs, expected):
        torch.testing.assert_close(out, exp, rtol=RTOL[dtype], atol=RTOL[dtype] * 32)
    # Only some outputs in the loss: the others get zero gradients.
    loss = sum(o.square().sum() for i, o in enumerate(outs) if i != 1)
    loss_ref = sum(o.square().sum() for i, o in enumerate(expected) if i != 1)
    leaves = xs + ws + [b for b in bs if b is not None]
    got = torch.autograd.grad(loss, leaves, allow_unused=True)
    want = torch.autograd.grad(loss_ref, leaves, allow_unused=True)
    for a, b in zip(got, want):
        if b is None:
            assert a is None or torch.count_nonzero(a) == 0
        else:
            torch.testing.assert_close(a, b, rtol=RTOL[dtype] * 10, atol=RTOL[dtype] * 700)


def test_grouped_matmul_edge_cases_and_errors():
    assert ew.grouped_matmul([], []) == []
    w = torch.randn(4, 3)
    out = ew.grouped_matmul([torch.randn(2, 4)], [w.t().contiguous().t()])  # non-contiguous other
    assert out[0].shape == (2, 3)
    with pytest.raises(ValueError, match="one length"):
        ew.grouped_matmul([torch.randn(2, 4)], [])
    with pytest.raises(ValueError, match=r"inputs\[1\] \[2, 5\] and others\[1\] \[4, 3\] do not chain"):
        ew.grouped_matmul([torch.randn(2, 4), torch.randn(2, 5)], [w, w])
    with pytest.raises(ValueError, match=r"others\[0\] has dtype torch.float64"):
        ew.grouped_matmul([torch.randn(2, 4)], [w.double()])
    with pytest.raises(ValueError, match="biases must have one entry per product"):
        ew.grouped_matmul([torch.randn(2, 4)], [w], [])
    half = ew.grouped_matmul([torch.randn(2, 4).half()], [w.half()])
    assert half[0].dtype == torch.float16


def test_grouped_matmul_bfloat16():
    gen = torch.Generator().manual_seed(6)
    shapes = [(5, 16, 32), (3, 32, 64), (0, 4, 4), (1, 1, 1), (700, 20, 9), (6, 0, 3), (9000, 8, 16)]
    xs = [torch.randn(n, k, generator=gen).bfloat16().requires_grad_() for n, k, _ in shapes]
    ws = [torch.randn(k, m, generator=gen).bfloat16().requires_grad_() for _, k, m in shapes]
    outs = ew.grouped_matmul(xs, ws)
    x64 = [x.detach().double().requires_grad_() for x in xs]
    w64 = [w.detach().double().requires_grad_() for w in ws]
    exact = [x @ w for x, w in zip(x64, w64)]
    for out, exp in zip(outs, exact):
        _bf16_close(out, exp)
    grads = [torch.randn(o.shape, generator=gen).bfloat16() for o in outs]
    got = torch.autograd.grad(outs, xs + ws, grads)
    want = torch.autograd.grad(exact, x64 + w64, [g.double() for g in grads])
    for a, b in zip(got, want):
        _bf16_close(a, b)


def test_ops_satisfy_the_torch_library_contract():
    x = torch.randn(9, 4, requires_grad=True)
    w = torch.randn(3, 4, 5, requires_grad=True)
    ptr = torch.tensor([0, 2, 2, 9])
    torch.library.opcheck(torch.ops.edgewise.segment_matmul.default, (x, ptr, w))
    xs = [torch.randn(3, 4, requires_grad=True), torch.randn(5, 2, requires_grad=True)]
    ws = [torch.randn(4, 6, requires_grad=True), torch.randn(2, 1, requires_grad=True)]
    torch.library.opcheck(torch.ops.edgewise.grouped_matmul.default, (xs, ws))


def test_segment_matmul_compiles():
    w = torch.randn(2, 4, 3)
    ptr = torch.tensor([0, 3, 7])

    def f(x):
        return ew.segment_matmul(x, ptr, w).relu().sum()

    x = torch.randn(7, 4)
    compiled = torch.compile(f, backend="aot_eager")
    torch.testing.assert_close(compiled(x), f(x))
