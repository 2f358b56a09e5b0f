"""The one place where torch tensors cross into the edgewise bindings and back.

CPU tensors travel as NumPy views (no copy for contiguous tensors of the dtype the
binding expects; bfloat16, which NumPy lacks, as the tensor itself through DLPack);
tensors on other devices are handed over as they are, for
bindings that take DLPack objects, and results that are not NumPy arrays come back
through ``torch.from_dlpack``. Switching the CPU path to DLPack is a change here only.
"""

import functools

import numpy as np
import torch

from .. import _edgewise


def to_engine(value):
    """A binding argument from a tensor (other values pass through). bfloat16, which
    NumPy lacks, goes through DLPack on the CPU too."""
    if not isinstance(value, torch.Tensor):
        return value
    value = value.detach()
    if value.device.type == "cpu" and value.dtype != torch.bfloat16:
        return value.contiguous().numpy()
    return value.contiguous()


def from_engine(value):
    """A tensor from a binding result (tuples element-wise)."""
    if isinstance(value, tuple):
        return tuple(from_engine(v) for v in value)
    if isinstance(value, torch.Tensor):  # DLPack bindings answer in the caller's framework
        return value
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value)
    if hasattr(value, "__dlpack__"):
        return torch.from_dlpack(value)
    return value


def call(name, *args, device=None, **kwargs):
    """Run binding ``name`` on tensors; results are moved to ``device`` when given."""
    fn = getattr(_edgewise, name)
    result = from_engine(fn(*(to_engine(a) for a in args), **{k: to_engine(v) for k, v in kwargs.items()}))
    if device is None:
        return result
    if isinstance(result, tuple):
        return tuple(r.to(device) for r in result)
    return result.to(device)


def call_list(name, *args, **kwargs):
    """call() for bindings that take sequences of tensors and return a list of arrays."""

    def convert(value):
        return [to_engine(v) for v in value] if isinstance(value, (list, tuple)) else to_engine(value)

    fn = getattr(_edgewise, name)
    return [from_engine(r) for r in fn(*(convert(a) for a in args), **{k: convert(v) for k, v in kwargs.items()})]


def has_binding(name):
    return hasattr(_edgewise, name)


def empty(shape, dtype, device) -> torch.Tensor:
    """An uninitialised tensor; on the CPU from Edgewise's host block cache, so a large
    temporary that is freed and asked for again each call is not page-faulted in anew
    (torch's CPU allocator returns large blocks to the system: 64 MB of fresh pages
    cost more than the op that fills them)."""
    device = torch.device(device)
    if device.type != "cpu" or torch.compiler.is_compiling():
        return torch.empty(shape, dtype=dtype, device=device)
    shape = tuple(int(s) for s in shape)
    count = 1
    for extent in shape:
        count *= extent
    if count == 0:
        return torch.empty(shape, dtype=dtype)
    raw = torch.from_numpy(_edgewise.host_buffer(count * dtype.itemsize))
    return raw.view(dtype).view(shape)


def transposed(t2: torch.Tensor) -> torch.Tensor:
    """[R, K] -> a contiguous [K, R] copy (a cached buffer on the CPU). The CPU copy
    goes in blocks of columns that stay in cache: one strided copy of a [16, 1M] float
    tensor took 20 ms here, blocks of 2^18 elements 6 ms."""
    R, K = t2.shape
    if t2.device.type != "cpu" or torch.compiler.is_compiling() or (torch.is_grad_enabled() and t2.requires_grad):
        return t2.t().contiguous()
    out = empty((K, R), t2.dtype, t2.device)
    # Blocks along the longer side, each ~2^18 elements, so both the strided reads and
    # the strided writes of a block stay in cache.
    if K >= R:
        step = max(1, (1 << 18) // max(R, 1))
        for j in range(0, K, step):
            out[j:j + step].copy_(t2[:, j:j + step].t())
    else:
        step = max(1, (1 << 18) // max(K, 1))
        for i in range(0, R, step):
            out[:, i:i + step].copy_(t2[i:i + step].t())
    return out


def plain_call(args) -> bool:
    """Whether an operator's body may run without torch's dispatcher: no tensor argument
    needs a gradient or is a subclass (FakeTensor, Parameter, functional tensors), and
    nothing traces or transforms the call (torch.compile, a torch function or dispatch
    mode, a functorch transform such as vmap, forward-mode AD). Then the operator would
    run that body and nothing else."""
    if _MODE_PROBES is None:
        return False
    grad = torch.is_grad_enabled()
    for a in args:
        if isinstance(a, torch.Tensor) and (type(a) is not torch.Tensor or (grad and a.requires_grad)):
            return False
    dispatch_modes, function_mode, transforms = _MODE_PROBES
    return not (torch.compiler.is_compiling() or dispatch_modes() or function_mode() or transforms() is not None or
                _forward_ad_level() >= 0)


def _mode_probes():
    """torch's (private) answers to "is a dispatch mode, a torch function mode or a
    functorch transform active?"; None where this torch lacks one: then nothing runs
    directly."""
    C = torch._C
    try:
        return C._len_torch_dispatch_stack, C._is_torch_function_mode_enabled, C._functorch.peek_interpreter_stack
    except AttributeError:
        return None


_MODE_PROBES = _mode_probes()


def _refuse_tangents(name, args):
    """The operators have no forward-mode formula, and torch's custom operators drop an
    input's tangent silently: a tangent is an error instead."""
    unpack = torch.autograd.forward_ad.unpack_dual
    for a in args:
        if isinstance(a, torch.Tensor) and unpack(a).tangent is not None:
            raise NotImplementedError(f"edgewise.torch's {name} has no forward-mode AD formula (an input carries a "
                                      f"tangent, which would be lost); use reverse mode (backward / torch.func.grad)")


def _flat(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from a
        else:
            yield a


def refuse_tangents(name, *args):
    """For an operator's Python entry point: NotImplementedError naming `name` where a
    tensor among args (or in a list among them) carries a forward-mode tangent."""
    if _forward_ad_level() >= 0:
        _refuse_tangents(name, list(_flat(args)))


def carries_tangent(*args) -> bool:
    """Whether a tensor among args carries a forward-mode tangent (for paths that can
    hand the call back to plain torch code instead of refusing it)."""
    if _forward_ad_level() < 0:
        return False
    unpack = torch.autograd.forward_ad.unpack_dual
    return any(isinstance(a, torch.Tensor) and unpack(a).tangent is not None for a in _flat(args))


def _forward_ad_level() -> int:
    # Inside forward_ad.dual_level() a tensor may carry a tangent that the body would drop
    # (the operator raises instead). 0 where torch no longer says: never direct then.
    return getattr(torch.autograd.forward_ad, "_current_level", 0)


def direct(operator, body):
    """operator (a torch.library custom op, edgewise::<body's name without its leading
    underscore>) as a function that runs `body`, the operator's own implementation,
    directly where plain_call allows. `.operator` is the registered operator."""
    name = body.__name__.lstrip("_")
    # The overload is called from the closure: torch.compile before torch 2.5 cannot
    # trace an attribute read on a function (call.operator).
    overload = getattr(torch.ops.edgewise, name).default

    @functools.wraps(body)
    def call(*args):
        if plain_call(args):
            return body(*args)
        if _forward_ad_level() >= 0:
            _refuse_tangents(name, args)
        return overload(*args)

    call.operator = operator
    return call
