"""Argument checks shared by the public functions of edgewise.torch.

Every check raises before anything is computed or written (a caller's ``out`` is
never half-changed), and every message starts with the public function's name and
names the argument: ``ValueError`` for bad values, shapes, dtypes and devices,
``IndexError`` for ``dim`` out of range (as torch itself raises).
"""

import numbers
import os

import torch
from torch import Tensor

# The value dtypes of the reductions (the kernels' EW_REDUCE_ELEMENT_TYPES, as torch
# names them; uint32 has no autograd or arithmetic in torch, so it stays a binding type).
VALUE_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32, torch.int64)
_VALUE_NAMES = "float16, bfloat16, float32, float64, int32 or int64"
_INDEX_PASSED_AS_IS = (torch.int32, torch.int64)
_DEVICE_TYPES = ("cpu", "cuda")
_INT64_MAX = 2**63 - 1


def _type_name(value):
    return type(value).__name__


def tensor(value, name: str, op: str, min_dim: int = 1) -> Tensor:
    """``value`` as a tensor with at least ``min_dim`` dimensions on a CPU or CUDA device."""
    if not isinstance(value, Tensor):
        raise ValueError(f"{op}: {name} must be a torch.Tensor (got {_type_name(value)})")
    if value.dim() < min_dim:
        raise ValueError(f"{op}: {name} must have at least {min_dim} dimension{'s' * (min_dim > 1)} "
                         f"(got a {value.dim()}-D tensor of shape {tuple(value.shape)})")
    if value.device.type not in _DEVICE_TYPES:
        raise ValueError(f"{op}: {name} is on device '{value.device}'; Edgewise runs on CPU and CUDA tensors")
    return value


def values(src, name: str, op: str, floating_only: bool = False) -> Tensor:
    """A value tensor of a dtype the kernels reduce."""
    src = tensor(src, name, op)
    allowed = VALUE_DTYPES[:4] if floating_only else VALUE_DTYPES
    if src.dtype not in allowed:
        names = "float16, bfloat16, float32 or float64" if floating_only else _VALUE_NAMES
        raise ValueError(f"{op}: {name} must be {names} (got {src.dtype})")
    return src


def index(idx, name: str, op: str, like: Tensor, min_dim: int = 1) -> Tensor:
    """An integer index tensor on ``like``'s device: int32 / int64 as they are, other
    integer dtypes widened to int64; float, bool and complex rejected (never truncated)."""
    idx = tensor(idx, name, op, min_dim)
    if idx.dtype.is_floating_point or idx.dtype.is_complex or idx.dtype == torch.bool:
        raise ValueError(f"{op}: {name} must be an integer tensor (got {idx.dtype})")
    same_device(idx, name, like, op)
    return idx if idx.dtype in _INDEX_PASSED_AS_IS else idx.to(torch.int64)


def same_device(t: Tensor, name: str, like: Tensor, op: str, like_name: str = "src"):
    if t.device != like.device:
        raise ValueError(f"{op}: {name} is on {t.device} but {like_name} is on {like.device} "
                         "(mixed devices are an error, not a copy)")


def dim(d, ndim: int, op: str) -> int:
    """``d`` wrapped into [0, ndim), or IndexError as torch raises it."""
    if isinstance(d, bool) or not isinstance(d, numbers.Integral):
        raise ValueError(f"{op}: dim must be an int (got {_type_name(d)} {d!r})")
    d = int(d)
    if not -ndim <= d < ndim:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                         f"but got {d})")
    return d % ndim


def size(value, name: str, op: str):
    """An output size argument: a non-negative int (a SymInt under torch.compile)."""
    if isinstance(value, torch.SymInt):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{op}: {name} must be an int (got {_type_name(value)} {value!r})")
    value = int(value)
    if value < 0 or value > _INT64_MAX:
        raise ValueError(f"{op}: {name} ({value}) must lie in [0, 2^63)")
    return value


def _host_bytes():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


_HOST_BYTES = _host_bytes()


def _device_bytes(device: torch.device):
    """The memory of ``device`` in bytes, or None where it cannot be asked."""
    if device.type != "cuda":
        return _HOST_BYTES
    try:
        return torch.cuda.mem_get_info(device)[1]
    except (RuntimeError, AttributeError):
        return None


def output_fits(shape, dtype: torch.dtype, device: torch.device, what: str, op: str):
    """An output of ``shape`` must fit the device's memory: a size no machine can hold
    is an error naming where it came from, not an allocator failure later."""
    if torch.compiler.is_compiling() or any(isinstance(s, torch.SymInt) for s in shape):
        return  # traced: sizes may be symbolic, and the eager call checks them
    elements = 1
    for s in shape:
        elements *= int(s)
    nbytes = elements * dtype.itemsize
    limit = _device_bytes(device)
    if elements > _INT64_MAX or (limit is not None and nbytes > limit):
        held = f"{limit / 2**30:.1f} GiB" if limit is not None else "what an int64 can count"
        raise ValueError(f"{op}: {what} gives an output of shape {tuple(int(s) for s in shape)} "
                         f"({nbytes / 2**30:.1f} GiB), more than {device} holds ({held})")


def out_tensor(out, shape, like: Tensor, op: str) -> Tensor:
    """``out`` must match the result exactly: shape, dtype and device (no broadcasting,
    no casting); checked before anything is written."""
    if not isinstance(out, Tensor):
        raise ValueError(f"{op}: out must be a torch.Tensor (got {_type_name(out)})")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{op}: out has shape {tuple(out.shape)} but the result has shape {tuple(shape)}")
    if out.dtype != like.dtype:
        raise ValueError(f"{op}: out has dtype {out.dtype} but src has {like.dtype} (out is never cast)")
    same_device(out, "out", like, op)
    return out


def reduce_name(reduce, allowed, op: str) -> str:
    if reduce not in allowed:
        raise ValueError(f"{op}: reduce must be one of {', '.join(repr(a) for a in allowed)} (got {reduce!r})")
    return "sum" if reduce == "add" else reduce
