"""The torch_scatter API's operators run their bodies directly (without torch's
dispatcher) only where nothing could see the difference: no gradient, no subclass,
no trace, mode or transform. Everywhere else the registered operator runs."""

import pytest

torch = pytest.importorskip("torch")
ewt = pytest.importorskip("edgewise.torch")

from edgewise.torch import _bridge, _reduce_ops  # noqa: E402

OPERATORS = ["scatter_reduce", "scatter_reduce_arg", "segment_reduce", "segment_reduce_arg", "gather_csr",
             "gather_coo"]


def _x(requires_grad=False):
    return torch.randn(6, 3, dtype=torch.float64, requires_grad=requires_grad)


def test_plain_tensors_without_gradient_run_directly():
    assert _bridge.plain_call((_x(), torch.tensor([0, 1]), 3, "sum"))
    with torch.no_grad():
        assert _bridge.plain_call((_x(requires_grad=True),))
    with torch.inference_mode():
        assert _bridge.plain_call((_x(),))


def test_gradients_subclasses_modes_and_transforms_go_through_the_operator():
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.overrides import TorchFunctionMode

    assert not _bridge.plain_call((_x(requires_grad=True),))
    assert not _bridge.plain_call((torch.nn.Parameter(_x()),))
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(_x())
        assert not _bridge.plain_call((fake,))

    class Passthrough(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Passthrough():
        assert not _bridge.plain_call((_x(),))
    seen = []
    torch.func.vmap(lambda row: seen.append(_bridge.plain_call((row,))) or row)(_x())
    assert seen == [False]
    import torch.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        dual = fwAD.make_dual(_x(), torch.ones(6, 3, dtype=torch.float64))
        assert not _bridge.plain_call((dual,))
        # No forward-mode formula: an error, never a result without its tangent.
        with pytest.raises(NotImplementedError, match="forward-mode AD"):
            ewt.scatter_sum(dual, torch.tensor([0, 0, 1, 1, 2, 2]), dim=0)


def _dispatched(name, fn, *args):
    """Whether calling fn(*args) ran the registered operator edgewise::name (torch's
    profiler records every dispatched operator; a body run directly records none)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn(*args)
    return any(event.name == f"edgewise::{name}" for event in prof.events())


@pytest.mark.parametrize("name", OPERATORS)
def test_the_api_calls_the_body_or_the_registered_operator(name):
    """Each wrapper keeps the registered operator, and uses it exactly when the call
    is not plain (a gradient here)."""
    wrapper = getattr(_reduce_ops, name)
    assert isinstance(wrapper.operator, torch._library.custom_ops.CustomOpDef)
    src, index = _x(), torch.tensor([[0, 0, 1, 1, 2, 2]])
    args = {
        "scatter_reduce": (src.view(1, 6, 3), index.view(1, 6, 1), 3, "sum", False, "t"),
        "scatter_reduce_arg": (src.view(1, 6, 3), index.view(1, 6, 1), 3, "max", False, "t"),
        "segment_reduce": (src.view(1, 6, 3), torch.tensor([[0, 2, 6]]), "sum", "t"),
        "segment_reduce_arg": (src.view(1, 6, 3), torch.tensor([[0, 2, 6]]), "max", "t"),
        "gather_csr": (src[:2].reshape(1, 2, 3), torch.tensor([[0, 2, 6]]), "t"),
        "gather_coo": (src[:3].reshape(1, 3, 3), index, "t"),
    }[name]
    assert not _dispatched(name, wrapper, *args)
    graded = (args[0].detach().requires_grad_(),) + args[1:]
    assert _dispatched(name, wrapper, *graded)


def test_a_torch_without_the_mode_probes_never_runs_directly(monkeypatch):
    monkeypatch.setattr(_bridge, "_MODE_PROBES", None)
    assert not _bridge.plain_call((_x(),))
    assert ewt.scatter_sum(_x(), torch.tensor([0, 0, 1, 1, 2, 2]), dim=0).shape == (3, 3)


def test_direct_and_dispatched_results_are_equal():
    src = torch.randn(50, 4, dtype=torch.float64)
    index = torch.randint(0, 7, (50,))
    for fn in (ewt.scatter_sum, ewt.scatter_mean, ewt.scatter_max, ewt.scatter_min):
        with torch.no_grad():
            direct = fn(src, index, dim=0, dim_size=8)
        dispatched = fn(src.clone().requires_grad_(), index, dim=0, dim_size=8)
        for a, b in zip(direct if isinstance(direct, tuple) else (direct,),
                        dispatched if isinstance(dispatched, tuple) else (dispatched,)):
            torch.testing.assert_close(a, b.detach(), rtol=0, atol=0)
