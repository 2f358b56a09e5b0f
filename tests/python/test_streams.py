"""The `stream` argument of the array bindings: validated on any machine, handed to the
inputs' producers (__dlpack__(stream=...)) and used for the op; with a GPU, ordering
against torch work on a side stream."""

import numpy as np
import pytest
import torch

import edgewise
from test_dlpack import FakeCuda

OFFSETS = np.array([0, 1, 3])
INDICES = np.array([0, 1, 0])
X = np.arange(6, dtype=np.float32).reshape(2, 3)

# Every binding that takes `stream`, called on small valid CPU inputs.
CPU_CALLS = {
    "spmm": lambda **kw: edgewise.spmm(OFFSETS, INDICES, X, **kw),
    "spmm_backward": lambda **kw: edgewise.spmm_backward(OFFSETS, INDICES, X, **kw),
    "spmm_arg_backward": lambda **kw: edgewise.spmm_arg_backward(
        OFFSETS, INDICES, np.arange(3), X, np.zeros((2, 3), np.int64), **kw),
    "spmm_weight_backward": lambda **kw: edgewise.spmm_weight_backward(OFFSETS, INDICES, X, X, **kw),
    "sddmm_dot": lambda **kw: edgewise.sddmm_dot(OFFSETS, INDICES, X, X, **kw),
    "sddmm_add": lambda **kw: edgewise.sddmm_add(OFFSETS, INDICES, X, X, **kw),
    "edge_gather_sum": lambda **kw: edgewise.edge_gather_sum(OFFSETS, np.ones(3, np.float32), INDICES, X, **kw),
    "edge_softmax": lambda **kw: edgewise.edge_softmax(OFFSETS, np.ones(3, np.float32), **kw),
    "edge_softmax_backward": lambda **kw: edgewise.edge_softmax_backward(
        OFFSETS, np.ones(3, np.float32), np.ones(3, np.float32), **kw),
    "segment_reduce": lambda **kw: edgewise.segment_reduce(X, np.array([0, 2]), **kw),
    "scatter_reduce": lambda **kw: edgewise.scatter_reduce(X, np.array([1, 0]), 2, **kw),
    "sort_by_key": lambda **kw: edgewise.sort_by_key(np.array([2, 1, 2]), **kw),
    "offsets_from_keys": lambda **kw: edgewise.offsets_from_keys(np.array([0, 0, 1]), 2, **kw),
}


class TorchLikeStream:
    cuda_stream = 777


class CupyLikeStream:
    ptr = 888


class ProtocolStream:
    def __cuda_stream__(self):
        return (0, 999)


def same(a, b):
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(CPU_CALLS))
def test_stream_none_is_the_default(name):
    call = CPU_CALLS[name]
    same(call(stream=None), call())


@pytest.mark.parametrize("name", sorted(CPU_CALLS))
@pytest.mark.parametrize("bad", ["1", 1.0, True, object()])
def test_a_stream_of_the_wrong_type_is_a_type_error_naming_it(name, bad):
    with pytest.raises(TypeError, match=rf"{name}: stream must be None, an int"):
        CPU_CALLS[name](stream=bad)


@pytest.mark.parametrize("name", sorted(CPU_CALLS))
def test_a_negative_stream_is_a_value_error(name):
    with pytest.raises(ValueError, match=rf"{name}: stream \(-3\) must be >= 0"):
        CPU_CALLS[name](stream=-3)


@pytest.mark.parametrize("name", sorted(CPU_CALLS))
@pytest.mark.parametrize("stream", [1, 12345, TorchLikeStream()])
def test_cpu_arrays_take_no_stream(name, stream):
    with pytest.raises(ValueError, match=rf"{name}: stream is for CUDA arrays, and the arrays of this call are on cpu"):
        CPU_CALLS[name](stream=stream)


def test_a_stream_too_large_for_a_pointer_is_a_value_error():
    with pytest.raises(ValueError, match="spmm: stream .* is out of range"):
        CPU_CALLS["spmm"](stream=1 << 80)


@pytest.mark.parametrize("stream, requested", [
    (None, 1),  # no framework: the legacy default stream
    (0, 1),  # torch's cuda_stream of the default stream
    (1, 1),
    (2, 2),  # per-thread default stream
    (12345, 12345),
    (TorchLikeStream(), 777),
    (CupyLikeStream(), 888),
    (ProtocolStream(), 999),
])
def test_cuda_inputs_are_requested_on_the_given_stream(stream, requested):
    # Non-contiguous values fail after they were requested, before anything runs.
    values = FakeCuda((4, 2), "float32", strides=(1, 4))
    offsets = FakeCuda((3,), "int64")
    with pytest.raises(ValueError, match="values must be C-contiguous"):
        edgewise.segment_reduce(values, offsets, stream=stream)
    assert values.streams == [requested]
    x = FakeCuda((4, 2), "float32", strides=(1, 4))
    with pytest.raises(ValueError, match="x must be C-contiguous"):
        edgewise.spmm(FakeCuda((3,), "int64"), FakeCuda((4,), "int32"), x, stream=stream)
    assert x.streams == [requested]


def test_the_stream_is_checked_before_any_input_is_requested():
    values = FakeCuda((4, 2))
    with pytest.raises(TypeError, match="stream must be"):
        edgewise.segment_reduce(values, FakeCuda((3,), "int64"), stream="default")
    assert values.streams == []


# --- with a GPU: the op orders itself after torch work on the stream it runs on ---

def _cuda_or_skip():
    if not torch.cuda.is_available() or edgewise.cuda_device_count() == 0:
        pytest.skip("no GPU here (or edgewise built without CUDA): the stream ordering is checked on a GPU")


def _spmm_inputs(rng, n=4096, e=200_000, c=64):
    dst = np.sort(rng.integers(0, n, size=e))
    offsets = np.searchsorted(dst, np.arange(n + 1)).astype(np.int64)
    indices = rng.integers(0, n, size=e).astype(np.int32)
    x = rng.standard_normal((n, c)).astype(np.float32)
    want = edgewise.spmm(offsets, indices, x)
    return offsets, indices, x, want


def test_gpu_spmm_on_a_side_stream_sees_the_work_queued_there(rng):
    _cuda_or_skip()
    offsets, indices, x, want = _spmm_inputs(rng)
    side = torch.cuda.Stream()
    d_off = torch.from_numpy(offsets).cuda()
    d_idx = torch.from_numpy(indices).cuda()
    host_x = torch.from_numpy(x).pin_memory()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):  # the caller's current stream
        torch.cuda._sleep(50_000_000)  # keeps the side stream busy: unordered work would read stale x
        d_x = host_x.to("cuda", non_blocking=True)
        got = edgewise.spmm(d_off, d_idx, d_x)
    side.synchronize()
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-5, atol=1e-5)
    # The same with the stream named explicitly while the current stream is the default one.
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        d_x2 = (host_x.to("cuda", non_blocking=True) * 2)
    got2 = edgewise.spmm(d_off, d_idx, d_x2, stream=side)
    torch.cuda.synchronize()
    np.testing.assert_allclose(got2.cpu().numpy(), 2 * want, rtol=1e-5, atol=1e-4)


def test_gpu_torch_ops_run_on_the_current_torch_stream(rng):
    _cuda_or_skip()
    from edgewise.torch import ops
    offsets, indices, x, _ = _spmm_inputs(rng, n=1024, e=50_000, c=16)
    src = torch.from_numpy(x)
    index = torch.from_numpy(indices[: len(x)].astype(np.int64) % 128)
    want = ops.scatter_sum(src, index, dim=0, dim_size=128)
    side = torch.cuda.Stream()
    d_index = index.cuda()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        d_src = src.pin_memory().to("cuda", non_blocking=True)
        got = ops.scatter_sum(d_src, d_index, dim=0, dim_size=128)
    side.synchronize()
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-4, atol=1e-4)
