"""Shapes of the torch_scatter API reduced to one canonical form.

Every function reduces (or gathers) along one dimension ``dim`` of ``src``. Around
it ``src`` is viewed as ``[A, D, B]``: A the product of the leading dimensions, D
the size of ``dim``, B the product of the trailing ones. An index (or indptr) that
torch_scatter broadcasts becomes ``[Ai, D, Bi]`` (``[Ai, S + 1]`` for an indptr)
with Ai in {1, A} and Bi in {1, B}: 1 where it is the same for every leading (or
trailing) position, so a 1-D index is never materialised per row. The operators in
``_reduce_ops`` work on these forms; results come back as ``[A, S, B]`` and are
reshaped to ``src``'s shape with ``dim`` resized.
"""

import math

import torch
from torch import Tensor


class Layout:
    """``src``'s shape split around ``dim``."""

    __slots__ = ("shape", "dim", "lead", "trail", "A", "D", "B")

    def __init__(self, shape, dim: int):
        self.shape = tuple(shape)
        self.dim = dim
        self.lead = self.shape[:dim]
        self.trail = self.shape[dim + 1:]
        self.A = math.prod(self.lead)
        self.D = self.shape[dim]
        self.B = math.prod(self.trail)

    def as3(self, t: Tensor) -> Tensor:
        """A tensor shaped like src (any size along dim) as [A, size, B]."""
        return t.reshape(self.A, t.size(self.dim), self.B)

    def shape_with(self, size) -> tuple:
        """src's shape with dim resized."""
        return self.lead + (size,) + self.trail

    def from3(self, t3: Tensor) -> Tensor:
        """[A, size, B] back to src's shape with dim resized. Not a view for autograd
        (``_unsafe_view``), so callers may modify results in place (PyG's gcn_norm
        does ``deg.pow_``) as they do torch_scatter's."""
        shape = self.shape_with(t3.size(1))
        if t3.is_contiguous():
            return torch.ops.aten._unsafe_view(t3, shape)
        return t3.reshape(shape)


def _describe(t: Tensor) -> str:
    return f"shape {tuple(t.shape)}"


def align(index: Tensor, view: tuple, layout: Layout, name: str, op: str, full_dim: bool = True) -> Tensor:
    """``index`` reshaped to ``view`` (one entry per src dimension, each 1 or src's
    size; torch_scatter's broadcast), as [Ai, D, Bi]. ``full_dim``: the extent along
    dim may also be 1 (torch_scatter expands it) or must be src's."""
    shape = layout.shape
    for j, (have, want) in enumerate(zip(view, shape)):
        if have != 1 and have != want:
            raise ValueError(f"{op}: {name} of {_describe(index)} does not broadcast to src's shape {shape} "
                             f"along dimension {j} ({have} vs {want})")
    d = layout.dim
    if not full_dim and view[d] != shape[d]:
        raise ValueError(f"{op}: {name} has {view[d]} entries along dimension {d} but src has {shape[d]}")
    lead_varies = any(v != 1 for v in view[:d])
    trail_varies = any(v != 1 for v in view[d + 1:])
    wanted = tuple(
        shape[j] if (j == d or (j < d and lead_varies) or (j > d and trail_varies)) else 1 for j in range(len(shape))
    )
    expanded = index.reshape(view).expand(wanted)
    return expanded.reshape(layout.A if lead_varies else 1, layout.D, layout.B if trail_varies else 1)


def scatter_view(index: Tensor, layout: Layout, op: str) -> tuple:
    """torch_scatter's broadcast of an index to src (torch_scatter.utils.broadcast): a
    1-D index lines up with dim; any other lines up with src's leading dimensions and
    gains trailing ones."""
    ndim = len(layout.shape)
    if index.dim() > ndim:
        raise ValueError(f"{op}: index has {index.dim()} dimensions but src only {ndim}")
    if index.dim() == 1:
        return (1,) * layout.dim + (index.numel(),) + (1,) * (ndim - layout.dim - 1)
    return tuple(index.shape) + (1,) * (ndim - index.dim())


def leading_view(t: Tensor, layout: Layout) -> tuple:
    """The view of an index that lines up with src's leading dimensions and ends at dim
    (segment_coo's index, gather_coo's index): its shape plus trailing ones."""
    ndim = len(layout.shape)
    return tuple(t.shape) + (1,) * (ndim - t.dim())


def align_indptr(indptr: Tensor, layout: Layout, name: str, op: str) -> Tensor:
    """An indptr [..., S + 1] whose leading dimensions are 1 or src's, as [Ai, S + 1]."""
    d = layout.dim
    for j in range(d):
        have, want = indptr.size(j), layout.shape[j]
        if have != 1 and have != want:
            raise ValueError(f"{op}: {name} of {_describe(indptr)} does not broadcast to src's leading "
                             f"dimensions {layout.lead} (dimension {j}: {have} vs {want})")
    lead_varies = any(indptr.size(j) != 1 for j in range(d))
    if not lead_varies:
        return indptr.reshape(1, indptr.size(-1))
    return indptr.expand(layout.lead + (indptr.size(-1),)).reshape(layout.A, indptr.size(-1))
