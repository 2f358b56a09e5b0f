"""DLPack in and out: torch tensors and other DLPack producers through the primitives.

Zero-copy is checked with tracemalloc, which sees every NumPy data allocation (the
only way the binding layer could copy a CPU input or allocate an output): a copied
input shows up as an allocation of its size, and an output handed to torch without a
copy stays allocated (by us) exactly as long as the torch tensor lives. The positive
control (a transposed input, which is copied once by design) shows the check can fail.

CUDA behaviour that needs no GPU is checked with a ctypes DLPack producer that claims
a CUDA tensor (its pointer is never dereferenced: every case fails validation first).
"""

import ctypes
import gc
import os
import tracemalloc

import numpy as np
import pytest

import edgewise

torch = pytest.importorskip("torch")

OPS = ["sum", "mean", "min", "max"]


def random_offsets(rng, S, mean):
    lengths = rng.integers(0, 2 * mean + 1, size=S)
    lengths[rng.random(S) < 0.2] = 0
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def assert_same(torch_result, numpy_result):
    assert isinstance(torch_result, torch.Tensor)
    np.testing.assert_array_equal(torch_result.numpy(), numpy_result)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("op", OPS)
def test_segment_and_scatter_reduce_torch_in_torch_out(rng, dtype, op):
    offsets = random_offsets(rng, 30, 4)
    M = int(offsets[-1])
    values = rng.integers(-9, 10, size=(M, 3)).astype(dtype)
    index = rng.integers(0, 12, size=M).astype(np.int64)
    with_arg = op in ("min", "max")
    want = edgewise.segment_reduce(values, offsets, op=op, return_arg=with_arg)
    got = edgewise.segment_reduce(torch.from_numpy(values), torch.from_numpy(offsets), op=op, return_arg=with_arg)
    for g, w in zip(got, want) if with_arg else [(got, want)]:
        assert_same(g, w)
    want = edgewise.scatter_reduce(values, index, 12, op=op, return_arg=with_arg)
    got = edgewise.scatter_reduce(torch.from_numpy(values), torch.from_numpy(index), 12, op=op, return_arg=with_arg)
    for g, w in zip(got, want) if with_arg else [(got, want)]:
        assert_same(g, w)
    assert (got[0] if with_arg else got).dtype == torch.from_numpy(values).dtype


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_spmm_and_backward_torch_in_torch_out(rng, dtype, index_dtype):
    S, N, C = 20, 15, 4
    offsets = random_offsets(rng, S, 3)
    E = int(offsets[-1])
    indices = rng.integers(0, N, size=E)
    x = torch.tensor(rng.uniform(-1, 1, size=(N, C)), dtype=dtype)
    w = torch.tensor(rng.uniform(0.5, 1.5, size=E), dtype=dtype)
    off_t, idx_t = torch.from_numpy(offsets), torch.tensor(indices, dtype=index_dtype)
    out, arg = edgewise.spmm(off_t, idx_t, x, w, op="max", return_arg=True)
    want, want_arg = edgewise.spmm(offsets, idx_t.numpy(), x.numpy(), w.numpy(), op="max", return_arg=True)
    assert out.dtype == dtype and arg.dtype == torch.int64
    assert_same(out, want)
    assert_same(arg, want_arg)
    grad_out = torch.tensor(rng.uniform(-1, 1, size=(S, C)), dtype=dtype)
    gw = edgewise.spmm_weight_backward(off_t, idx_t, x, grad_out, op="max", arg=arg)
    assert_same(gw, edgewise.spmm_weight_backward(offsets, idx_t.numpy(), x.numpy(), grad_out.numpy(), op="max",
                                                  arg=arg.numpy()))
    order = np.argsort(indices, kind="stable")
    t_offsets = np.concatenate([[0], np.cumsum(np.bincount(indices, minlength=N))]).astype(np.int64)
    dst = np.repeat(np.arange(S), np.diff(offsets))
    t_indices = torch.tensor(dst[order], dtype=index_dtype)
    t_edge_ids = torch.from_numpy(order.astype(np.int64))
    gx = edgewise.spmm_backward(torch.from_numpy(t_offsets), t_indices, grad_out, t_edge_ids, w, op="mean",
                                offsets=off_t)
    assert_same(gx, edgewise.spmm_backward(t_offsets, t_indices.numpy(), grad_out.numpy(), t_edge_ids.numpy(),
                                           w.numpy(), op="mean", offsets=offsets))
    gx = edgewise.spmm_arg_backward(torch.from_numpy(t_offsets), t_indices, t_edge_ids, grad_out, arg, w)
    assert_same(gx, edgewise.spmm_arg_backward(t_offsets, t_indices.numpy(), t_edge_ids.numpy(), grad_out.numpy(),
                                               arg.numpy(), w.numpy()))


def test_float64_torch_matches_a_float64_numpy_reference(rng):
    values = torch.tensor(rng.uniform(-1, 1, size=(300, 5)), dtype=torch.float64)
    index = torch.tensor(rng.integers(0, 7, size=300))
    got = edgewise.scatter_reduce(values, index, 7, op="mean")
    want = np.stack([values.numpy()[index.numpy() == s].mean(0) for s in range(7)])
    assert got.dtype == torch.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    fine = 1.0 + 2.0**-40  # float32 would round it to 1.0
    out = edgewise.segment_reduce(torch.tensor([fine, fine], dtype=torch.float64), torch.tensor([0, 2]))
    assert out.item() == 2 * fine


def numpy_bytes_during(fn):
    """(result, peak NumPy/Python bytes allocated while fn ran, bytes still held after)."""
    gc.collect()
    tracemalloc.start()
    try:
        result = fn()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak, current


def test_contiguous_torch_inputs_are_not_copied_and_outputs_are_our_buffer():
    M, C = 1 << 18, 4  # 4 MiB of float32 values
    values = torch.ones((M, C))
    offsets = torch.tensor([0, M // 2, M])
    out, peak, held = numpy_bytes_during(lambda: edgewise.segment_reduce(values, offsets, op="sum"))
    assert peak < values.numel() * 4 // 8, f"{peak} bytes allocated: the input was copied"
    assert held >= out.numel() * 4, "the torch result must hold our buffer, not a copy"
    np.testing.assert_array_equal(out.numpy(), np.full((2, C), M // 2, np.float32))
    # Positive control: a transposed (non-contiguous) CPU input is copied once, by design.
    wide = torch.ones((C, M)).t()
    out_t, peak_t, _ = numpy_bytes_during(lambda: edgewise.segment_reduce(wide, offsets, op="sum"))
    assert peak_t >= wide.numel() * 4
    assert torch.equal(out_t, out)


def test_output_memory_is_shared_with_torch_result():
    """The torch result views our buffer: freeing the tensor frees the buffer."""
    values = torch.ones((1 << 16, 8))
    gc.collect()
    before = edgewise.memory_stats("cpu")["current_bytes"]
    out = edgewise.scatter_reduce(values, torch.zeros(1 << 16, dtype=torch.int64), 1 << 14, op="sum")
    held_with = edgewise.memory_stats("cpu")["current_bytes"]
    out.add_(1)  # our memory, writable through the tensor
    del out
    gc.collect()
    held_without = edgewise.memory_stats("cpu")["current_bytes"]
    assert held_with - before >= (1 << 14) * 8 * 4
    assert held_with - held_without >= (1 << 14) * 8 * 4


def test_a_lone_buffer_of_any_size_is_cached_for_reuse():
    """Blocks are rounded up to the cache's granule; a process whose only large buffer is
    not a multiple of it still gets that block back (the bound on the cache counts
    blocks, not requested bytes)."""
    import subprocess
    import sys

    code = (
        "import edgewise, os\n"
        "a = edgewise._edgewise.host_buffer(1_000_003); address = a.ctypes.data; del a\n"
        "cached = edgewise.memory_stats()['cached_bytes']\n"
        "b = edgewise._edgewise.host_buffer(1_000_003)\n"
        "if os.environ.get('EDGEWISE_HOST_CACHE') != '0':\n"
        "    assert cached >= 1_000_003, cached\n"
        "    assert b.ctypes.data == address and b.ctypes.data % 64 == 0\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    # A large block freed while smaller ones fill the cache to its bound displaces them.
    code = (
        "import edgewise, os\n"
        "small = edgewise._edgewise.host_buffer(1 << 20); del small\n"
        "big = edgewise._edgewise.host_buffer(10 << 20); del big\n"
        "if os.environ.get('EDGEWISE_HOST_CACHE') != '0':\n"
        "    assert edgewise.memory_stats()['cached_bytes'] == 10 << 20, edgewise.memory_stats()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_large_outputs_reuse_cached_host_blocks():
    rows = 1 << 16
    x = np.arange(rows * 8, dtype=np.float32).reshape(rows, 8)  # a 2 MiB output: above the cache's minimum
    one_row_each = np.arange(rows + 1, dtype=np.int64)
    first = edgewise.segment_reduce(x, one_row_each, op="sum")
    address = first.ctypes.data
    assert address % 64 == 0
    del first
    gc.collect()
    if os.environ.get("EDGEWISE_HOST_CACHE") == "0":  # the sanitizer runs turn the cache off
        assert edgewise.memory_stats()["cached_bytes"] == 0
    else:
        assert edgewise.memory_stats()["cached_bytes"] >= x.nbytes
    second = edgewise.segment_reduce(x, one_row_each, op="sum")
    if os.environ.get("EDGEWISE_HOST_CACHE") != "0":
        assert second.ctypes.data == address, "a freed output block is handed out again"
    np.testing.assert_array_equal(second, x)


def test_memory_stats_names_a_bad_device():
    with pytest.raises(ValueError, match="device"):
        edgewise.memory_stats("tpu")


class OnlyDLPack:
    """A producer that is neither NumPy nor torch and has no __dlpack_device__."""

    def __init__(self, array):
        self.array = array
        self.calls = 0

    def __dlpack__(self, stream=None):
        self.calls += 1
        return self.array.__dlpack__()


def test_an_object_with_only_dlpack_works_and_gets_numpy_back(rng):
    values = rng.standard_normal((50, 3)).astype(np.float32)
    offsets = np.array([0, 20, 50])
    producer = OnlyDLPack(values)
    got = edgewise.segment_reduce(producer, OnlyDLPack(offsets), op="max")
    assert producer.calls == 1
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, edgewise.segment_reduce(values, offsets, op="max"))


def test_numpy_in_numpy_out_unchanged(rng):
    values = rng.standard_normal(10).astype(np.float32)
    assert isinstance(edgewise.segment_reduce(values, np.array([0, 10])), np.ndarray)


@pytest.mark.parametrize("dtype", [torch.float16, torch.int8, torch.bfloat16])
def test_wrong_dtype_names_the_argument(dtype):
    if dtype == torch.int8:  # the reductions take float16 and bfloat16
        with pytest.raises(ValueError, match="values"):
            edgewise.segment_reduce(torch.ones(4, dtype=dtype), torch.tensor([0, 4]))
        with pytest.raises(ValueError, match="values"):
            edgewise.scatter_reduce(torch.ones(4, dtype=dtype), torch.zeros(4, dtype=torch.int64), 1)
    with pytest.raises(ValueError, match="x must be float32 or float64"):
        edgewise.spmm(torch.tensor([0, 1]), torch.tensor([0]), torch.ones((1, 2), dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_types_reduce_in_float32_and_come_back_in_their_dtype(dtype):
    # bfloat16 has no NumPy dtype: it travels through DLPack both ways, on the CPU too.
    values = torch.tensor([[1.0, 2.0], [3.0, -4.0], [0.5, 8.0]], dtype=dtype)
    out = edgewise.segment_reduce(values, torch.tensor([0, 2, 3]), "sum")
    assert out.dtype == dtype and out.tolist() == [[4.0, -2.0], [0.5, 8.0]]
    out, arg = edgewise.scatter_reduce(values, torch.tensor([1, 1, 0]), 2, "max", return_arg=True)
    assert out.dtype == dtype and out.tolist() == [[0.5, 8.0], [3.0, 2.0]]
    assert arg.tolist() == [[2, 2], [1, 0]]
    with pytest.raises(ValueError, match="values must be C-contiguous"):
        edgewise.segment_reduce(torch.ones(4, 2, dtype=torch.bfloat16).t(), torch.tensor([0, 2]))


def test_float_arguments_must_share_one_dtype():
    with pytest.raises(ValueError, match="weights must be float32"):
        edgewise.spmm(torch.tensor([0, 1]), torch.tensor([0]), torch.ones((1, 2)), torch.ones(1, dtype=torch.float64))


def test_meta_tensor_and_grad_tensor_name_the_argument():
    with pytest.raises(ValueError, match="segment_reduce: values"):
        edgewise.segment_reduce(torch.ones(4, device="meta"), torch.tensor([0, 4]))
    with pytest.raises(ValueError, match="scatter_reduce: index"):
        edgewise.scatter_reduce(torch.ones(4), torch.zeros(4, dtype=torch.int64, device="meta"), 1)
    with pytest.raises(ValueError, match="spmm: x"):
        edgewise.spmm(torch.tensor([0, 1]), torch.tensor([0]), torch.ones((1, 2), requires_grad=True))


def test_not_an_array_is_an_error_naming_the_argument():
    with pytest.raises(ValueError, match="segment_reduce: offsets must be a numeric array"):
        edgewise.segment_reduce(np.ones(3, np.float32), object())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the fake CUDA producer covers the checks")
def test_cuda_tensors_run_on_the_device_and_come_back_as_cuda_tensors(rng):
    if edgewise.cuda_device_count() == 0:
        pytest.skip("edgewise was built without CUDA or sees no GPU")
    values = torch.tensor(rng.standard_normal((100, 4)), dtype=torch.float64, device="cuda")
    offsets = torch.tensor([0, 40, 100], device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        out, arg = edgewise.segment_reduce(values, offsets, op="max", return_arg=True)
    stream.synchronize()
    assert out.device.type == "cuda" and out.dtype == torch.float64
    want, want_arg = edgewise.segment_reduce(values.cpu().numpy(), offsets.cpu().numpy(), op="max", return_arg=True)
    np.testing.assert_array_equal(out.cpu().numpy(), want)
    np.testing.assert_array_equal(arg.cpu().numpy(), want_arg)
    with pytest.raises(ValueError, match="offsets is on cpu but values is on cuda:0"):
        edgewise.segment_reduce(values, offsets.cpu())
    with pytest.raises(ValueError, match="values must be C-contiguous"):
        edgewise.segment_reduce(values.t(), torch.tensor([0, 4], device="cuda"))


# --- a DLPack producer claiming CUDA memory (ctypes), for the checks that need no GPU ---

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor)))]
_CAPSULE_NAME = b"dltensor"
_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_KDL_CUDA = 2
_CODES = {"float": 2, "int": 0, "uint": 1}


class FakeCuda:
    """Claims a CUDA tensor of `shape` (pointer never dereferenced); records the stream asked for."""

    def __init__(self, shape, dtype="float32", strides=None):
        kind = dtype.rstrip("0123456789")
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._strides = (ctypes.c_int64 * len(shape))(*strides) if strides else None
        self._managed = _DLManagedTensor()
        t = self._managed.dl_tensor
        t.data = 0x1000
        t.device = _DLDevice(_KDL_CUDA, 0)
        t.ndim = len(shape)
        t.dtype = _DLDataType(_CODES[kind], int(dtype[len(kind):]), 1)
        t.shape = self._shape
        t.strides = self._strides if strides else None
        self.streams = []

    def __dlpack_device__(self):
        return (_KDL_CUDA, 0)

    def __dlpack__(self, stream=None, **kwargs):
        self.streams.append(stream)
        return _PyCapsule_New(ctypes.addressof(self._managed), _CAPSULE_NAME, None)


def test_mixed_devices_are_an_error_naming_both_arguments():
    with pytest.raises(ValueError, match="offsets is on cuda:0 but values is on cpu"):
        edgewise.segment_reduce(torch.ones(4), FakeCuda((2,), "int64"))
    with pytest.raises(ValueError, match="indices is on cuda:0 but offsets is on cpu"):
        edgewise.spmm(np.array([0, 1]), FakeCuda((1,), "int64"), np.ones((1, 2), np.float32))


def test_cuda_inputs_are_asked_for_a_stream_and_never_copied_or_cast():
    values = FakeCuda((4, 2), "float32", strides=(1, 4))  # a transposed layout
    with pytest.raises(ValueError, match="values must be C-contiguous"):
        edgewise.segment_reduce(values, FakeCuda((3,), "int64"))
    assert values.streams == [1], "no torch/CuPy framework: the legacy default stream (1) is requested"
    with pytest.raises(ValueError, match=r"offsets must be int64 \(got int32; CUDA arrays are never converted\)"):
        edgewise.segment_reduce(FakeCuda((4, 2)), FakeCuda((3,), "int32"))
    with pytest.raises(ValueError, match=r"values must be float32, float64, int32, uint32, int64, float16 or bfloat16 \(got int16\)"):
        edgewise.segment_reduce(FakeCuda((4, 2), "int16"), FakeCuda((3,), "int64"))


# --- the CPU-only entry points: CPU DLPack in (no copy), torch out where they return arrays ---

def test_sort_rle_offsets_and_search_take_torch_and_return_torch(rng):
    keys = rng.integers(0, 20, size=200).astype(np.int64)
    got = edgewise.sort_by_key(torch.from_numpy(keys))
    want = edgewise.sort_by_key(keys)
    for g, w in zip(got, want):
        assert_same(g, w)
    vals = rng.standard_normal(200).astype(np.float32)
    got = edgewise.sort_by_key(torch.from_numpy(keys), torch.from_numpy(vals))
    for g, w in zip(got, edgewise.sort_by_key(keys, vals)):
        assert_same(g, w)
    sorted_keys = np.sort(keys)
    for g, w in zip(edgewise.run_length_encode(torch.from_numpy(sorted_keys)), edgewise.run_length_encode(sorted_keys)):
        assert_same(g, w)
    chunks = [torch.from_numpy(sorted_keys[:70]), torch.from_numpy(sorted_keys[70:])]
    assert_same(edgewise.unique(chunks), edgewise.unique(sorted_keys))
    assert_same(edgewise.offsets_from_keys(torch.from_numpy(sorted_keys), 20), edgewise.offsets_from_keys(sorted_keys, 20))
    values = np.sort(rng.standard_normal(100).astype(np.float32))
    queries = np.sort(rng.standard_normal(30).astype(np.float32))
    positions, word = edgewise.galloping_search(torch.from_numpy(values), torch.from_numpy(queries))
    want_positions, want_word = edgewise.galloping_search(values, queries)
    assert_same(positions, want_positions)
    assert word == want_word


def test_graph_aggregate_samplers_and_segment_tree_take_torch(rng):
    n = 30
    ei = rng.integers(0, n, size=(2, 120)).astype(np.int64)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    g_np, g_torch = edgewise.Graph(ei, n), edgewise.Graph(torch.from_numpy(ei), n)
    np.testing.assert_array_equal(g_torch.offsets(), g_np.offsets())
    got = g_torch.aggregate(torch.from_numpy(x), op="max")
    assert_same(got, g_np.aggregate(x, op="max"))
    seeds = torch.tensor([1, 5, 7])
    a = edgewise.NeighborSampler(g_np, [2], seed=3).sample(seeds)
    b = edgewise.NeighborSampler(g_np, [2], seed=3).sample(seeds.numpy())
    np.testing.assert_array_equal(a["seed_nodes"], b["seed_nodes"])
    tree = edgewise.SegmentTree(8)
    tree.update(torch.tensor([1, 3]), torch.tensor([2.0, 6.0]))
    assert tree.total() == 8.0
    sampler = edgewise.SeedSampler(torch.ones(10), stratified=False)
    sampler.update_priorities(torch.tensor([0]), torch.tensor([5.0]))


def test_cpu_only_entry_points_reject_cuda_tensors_naming_the_argument():
    with pytest.raises(ValueError, match="Graph: edge_index is on cuda:0"):
        edgewise.Graph(FakeCuda((2, 3), "int64"), 4)
    with pytest.raises(ValueError, match="SegmentTree.update: priorities is on cuda:0"):
        edgewise.SegmentTree(4).update(np.array([0]), FakeCuda((1,), "float32"))
    with pytest.raises(ValueError, match="unique: keys is on cuda:0"):
        edgewise.unique(FakeCuda((3,), "int64"))
    # sort_by_key and offsets_from_keys take CUDA tensors, but never convert them.
    with pytest.raises(ValueError, match=r"offsets_from_keys: keys must be int64 \(got int8; CUDA arrays"):
        edgewise.offsets_from_keys(FakeCuda((3,), "int8"), 4)
    with pytest.raises(ValueError, match="sort_by_key: values is on cpu but keys is on cuda:0"):
        edgewise.sort_by_key(FakeCuda((3,), "int64"), np.ones(3))
