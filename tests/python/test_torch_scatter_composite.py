"""scatter_std, scatter_logsumexp, scatter_softmax and scatter_log_softmax against
torch_scatter 2.1.2's formulas (torch_scatter_reference, on its loop kernels): every
floating dtype, dims, index forms, out=, and the numerics those formulas promise
(stable softmax for huge inputs; empty and all -inf groups)."""

import pytest

torch = pytest.importorskip("torch")
ts = pytest.importorskip("edgewise.torch")

import torch_scatter_reference as ref  # noqa: E402
from test_torch_scatter_api import (  # noqa: E402
    FLOATS, S, SCATTER_FORMS, SHAPE, assert_matches, scatter_index, seed_of, values)

COMPOSITES = {
    "std": (lambda src, index, dim: ts.scatter_std(src, index, dim, dim_size=S),
            lambda src, index, dim: ref.scatter_std(src, index, dim, dim_size=S)),
    "std_biased": (lambda src, index, dim: ts.scatter_std(src, index, dim, dim_size=S, unbiased=False),
                   lambda src, index, dim: ref.scatter_std(src, index, dim, dim_size=S, unbiased=False)),
    "logsumexp": (lambda src, index, dim: ts.scatter_logsumexp(src, index, dim, dim_size=S),
                  lambda src, index, dim: ref.scatter_logsumexp(src, index, dim, dim_size=S)),
    "softmax": (lambda src, index, dim: ts.scatter_softmax(src, index, dim, dim_size=S),
                lambda src, index, dim: ref.scatter_softmax(src, index, dim, dim_size=S)),
    "log_softmax": (lambda src, index, dim: ts.scatter_log_softmax(src, index, dim, dim_size=S),
                    lambda src, index, dim: ref.scatter_log_softmax(src, index, dim, dim_size=S)),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind,dim", SCATTER_FORMS)
@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_composites_match_torch_scatter(name, kind, dim, dtype):
    seed = seed_of(name, kind, dim, dtype)
    src = values(SHAPE, dtype, seed)
    index = scatter_index(kind, dim, seed + 1)
    ours, theirs = COMPOSITES[name]
    want = theirs(src.double(), index, dim).to(dtype)  # the formulas in float64, rounded once
    assert_matches(ours(src, index, dim), want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_std_and_logsumexp_with_out_as_torch_scatter(dtype):
    src = values((6, 2), dtype, 31)
    index = torch.tensor([0, 1, 0, 2, 1, 0])
    base = values((4, 2), dtype, 32).abs()
    out = base.clone()
    got = ts.scatter_std(src, index, 0, out=out)
    want_out = base.double().clone()
    want = ref.scatter_std(src.double(), index, 0, out=want_out)
    assert_matches(got, want.to(dtype))
    assert_matches(out, want_out.to(dtype))  # out holds out + sum of squared deviations, as torch_scatter leaves it
    out = base.clone()
    got = ts.scatter_logsumexp(src, index, 0, out=out)
    assert got is out
    assert_matches(out, ref.scatter_logsumexp(src.double(), index, 0, out=base.double()).to(dtype))


def test_integer_std_is_computed_in_the_default_float_dtype():
    src = torch.tensor([1, 3, 2, 8])
    got = ts.scatter_std(src, torch.tensor([0, 0, 1, 1]))
    assert got.dtype == torch.get_default_dtype()
    torch.testing.assert_close(got, ref.scatter_std(src.float(), torch.tensor([0, 0, 1, 1])))


def test_softmax_is_stable_for_huge_inputs():
    src = torch.tensor([1000.0, 1001.0, -1000.0, -1002.0, 3e38, 3e38])
    index = torch.tensor([0, 0, 1, 1, 2, 2])
    got = ts.scatter_softmax(src, index)
    assert bool(torch.isfinite(got).all())
    torch.testing.assert_close(got, torch.tensor([0.2689, 0.7311, 0.8808, 0.1192, 0.5, 0.5]), atol=1e-4, rtol=0)
    torch.testing.assert_close(ts.scatter_log_softmax(src, index), got.log(), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(ts.scatter_logsumexp(src, index)[:2],
                               torch.stack([src[:2].logsumexp(0), src[2:4].logsumexp(0)]))


def test_logsumexp_of_empty_all_minus_inf_and_nan_groups_as_torch_scatter():
    inf = float("inf")
    src = torch.tensor([-inf, -inf, 1.0, float("nan"), 2.0])
    index = torch.tensor([1, 1, 2, 2, 3])
    got = ts.scatter_logsumexp(src, index, dim_size=4)
    # torch_scatter 2.1.2 ends with nan_to_num_(neginf=0): empty (0) and all -inf (1)
    # groups give 0; a NaN element counts as absent (its scatter_max never lets NaN win).
    want = ref.scatter_logsumexp(src, index, dim_size=4)
    torch.testing.assert_close(got, want)
    assert got.tolist()[:3] == [0.0, 0.0, 1.0] and got[3].item() == pytest.approx(2.0)


def test_softmax_rows_sum_to_one_per_group_on_a_large_random_problem():
    gen = torch.Generator().manual_seed(41)
    src = torch.randn(20_000, 8, generator=gen) * 30
    index = torch.randint(0, 300, (20_000,), generator=gen)
    got = ts.scatter_softmax(src, index, 0)
    sums = torch.zeros(300, 8).index_add_(0, index, got)
    reached = torch.bincount(index, minlength=300) > 0
    torch.testing.assert_close(sums[reached], torch.ones_like(sums[reached]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_fused_softmax_kernel_agrees_with_the_autograd_path(name, dim, dtype):
    """Without autograd (s)oftmax runs as one scatter_softmax kernel; with it, as torch
    ops around the max / sum kernels: both give the same values, extremes included."""
    gen = torch.Generator().manual_seed(43)
    src = (torch.randn(3000, 6, generator=gen) * 20).to(dtype)
    src[5, 2], src[9, 4], src[11, 0] = float("-inf"), float("nan"), 1e4
    if dim == -1:
        src = src.t().contiguous()
    index = torch.randint(0, 200, (3000,), generator=gen) // 2 * 2  # odd groups empty
    fn = getattr(ts, "scatter_" + name)
    fused = fn(src, index, dim, dim_size=200)
    traced = fn(src.clone().requires_grad_(), index, dim, dim_size=200).detach()
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else dict(rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(fused, traced, equal_nan=True, **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("dim", [0, -1])
def test_fused_logsumexp_kernel_agrees_with_the_autograd_path(dim, dtype):
    """Without autograd logsumexp runs as one scatter_logsumexp kernel call (groups with
    a NaN: the general path, which counts NaNs as absent); with it, as torch ops."""
    gen = torch.Generator().manual_seed(47)
    src = (torch.randn(3000, 6, generator=gen) * 20).to(dtype)
    index = torch.randint(0, 200, (3000,), generator=gen) // 2 * 2  # odd groups empty
    src[index == 4] = float("-inf")  # an all -inf group
    if dim == -1:
        src = src.t().contiguous()
    traced = ts.scatter_logsumexp(src.clone().requires_grad_(), index, dim, dim_size=200).detach()
    torch.testing.assert_close(ts.scatter_logsumexp(src, index, dim, dim_size=200), traced)
    with_nan = src.clone()
    (with_nan[7] if dim == 0 else with_nan[:, 7]).fill_(float("nan"))
    traced = ts.scatter_logsumexp(with_nan.clone().requires_grad_(), index, dim, dim_size=200).detach()
    torch.testing.assert_close(ts.scatter_logsumexp(with_nan, index, dim, dim_size=200), traced)
