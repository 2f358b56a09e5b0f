"""Every Python entry point that takes a device refuses an unusable CUDA device up
front with ValueError "no CUDA device is available (<reason>)", never a driver
error (RuntimeError quoting cudaErrorInsufficientDriver) from deep inside.

Runs in both builds: without CUDA the reason says "built without CUDA"; in a
CUDA build on a machine without a GPU it carries the driver's reason. Only where
a GPU is present is the no-device case not checked (one past the last device is
checked instead)."""

import pytest

import edgewise as ew

HAS_GPU = ew.cuda_device_count() > 0

ENTRY_POINTS = {
    "SegmentTree": lambda device: ew.SegmentTree(4, device=device),
    "train": lambda device: ew.train("synthetic", model="gcn", epochs=1, device=device),
}


def expected_message():
    if not ew.cuda_built():
        return r"no CUDA device is available \(edgewise was built without CUDA\)"
    return r"no CUDA device is available \(.+\)"


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "gpu"])
def test_cuda_without_a_device_is_a_value_error(name, device):
    if HAS_GPU:
        pytest.skip("a GPU is present: the no-device error cannot occur here")
    with pytest.raises(ValueError, match=expected_message()):
        ENTRY_POINTS[name](device)


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_a_cuda_index_past_the_last_device_is_a_value_error(name):
    past = f"cuda:{ew.cuda_device_count()}"
    message = "does not exist" if HAS_GPU else expected_message()
    with pytest.raises(ValueError, match=message):
        ENTRY_POINTS[name](past)


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_an_unknown_device_name_is_a_value_error(name):
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        ENTRY_POINTS[name]("tpu")
