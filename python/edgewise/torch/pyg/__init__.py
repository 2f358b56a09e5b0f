"""Edgewise as PyG's backend: ``accelerate()`` routes PyG's own computational entry
points to Edgewise's kernels, so a model built from PyG's layers runs faster
unchanged.

    import edgewise.torch.pyg
    edgewise.torch.pyg.accelerate()        # or: with edgewise.torch.pyg.accelerated(): ...

What it replaces (in every loaded ``torch_geometric`` module that holds the name,
and in modules loaded later through ``torch_geometric.utils``):

- ``torch_geometric.utils.scatter`` (sum / mean / min / max), ``segment`` (1-D
  ``ptr``), ``softmax`` (index form), ``spmm`` (torch.sparse CSR / CSC / coalesced
  COO adjacency) and EdgeIndex's sparse-dense product (``EdgeIndex.matmul``,
  ``spmm(EdgeIndex, x)``) by Edgewise's kernels, with PyG's semantics and
  gradients; every aggregation module and layer that calls them follows.
- ``MessagePassing.propagate`` (PyG's own and the per-layer generated ones): when a
  layer's message is a gather, optionally scaled by a scalar per edge (GCNConv,
  SAGEConv, GINConv, GraphConv, ...), and the call is an ordinary one, the whole
  message + aggregation runs as one fused gather-reduce over a CSR built once per
  graph (cached by contents, never served for another graph); see ``_propagate``.

- ``HeteroLinear``, ``HeteroDictLinear`` and ``RGCNConv`` (``forward``): typed
  products as one ``segment_matmul`` / ``grouped_matmul`` call, RGCNConv's
  per-relation aggregation as one dense product and one fused gather-reduce
  (``_hetero``); ``to_hetero`` / ``HeteroConv`` models follow through the layers they
  hold.
- ``SAGEConv.forward``: ``lin_l(aggregated) + lin_r(x_dst)`` as one product and one
  in-place product (``_sage``): one fresh [N, out] tensor instead of three.
- ``torch_geometric.sampler.NeighborSampler._sample`` for homogeneous graphs: PyG's
  own ``NeighborLoader`` / ``LinkNeighborLoader`` sample on Edgewise's HopSampler
  (pyg-lib's semantics), so they run where neither pyg-lib nor torch-sparse is
  installed. ``NeighborSampler`` here is that sampler as a PyG ``BaseSampler``.

What it leaves alone: hooks, ``explain``, ``decomposed_layers``, SparseTensor
inputs, EdgeIndex sparse-sparse products, reductions "mul" / "any", dtypes or devices the kernels do not
take: all go to PyG's code unchanged. ``deaccelerate()`` restores every replaced
name (by identity). Both are idempotent and thread-safe.
"""

import contextlib
import sys
import threading
import warnings

from . import _functional, _hetero, _propagate, _sage, _sampler

# PyG releases this was tested with (major.minor: 2.6.1 and 2.7.0 by tools/test_pyg_versions.sh,
# 2.8.1 in CI); others get a warning and no change.
TESTED_PYG_VERSIONS = ("2.6", "2.7", "2.8")

_lock = threading.RLock()
_replaced = []  # (owner, attribute, original, replacement) in the order applied
_UTILS = (
    ("torch_geometric.utils._scatter", "scatter", _functional.make_scatter),
    ("torch_geometric.utils._segment", "segment", _functional.make_segment),
    ("torch_geometric.utils._spmm", "spmm", _functional.make_spmm),
    ("torch_geometric.edge_index", "_spmm", _functional.make_edge_index_spmm),
)


def _pyg():
    try:
        import torch_geometric
        import torch_geometric.nn  # noqa: F401  (loads every layer module, so all get patched)
    except ImportError:
        return None
    return torch_geometric


def _version_tested(version: str) -> bool:
    return any(version == v or version.startswith(v + ".") for v in TESTED_PYG_VERSIONS)


def _set(owner, attribute, original, replacement):
    setattr(owner, attribute, replacement)
    _replaced.append((owner, attribute, original, replacement))


def _replace_everywhere(original, replacement):
    """Every loaded torch_geometric module attribute that *is* original."""
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "torch_geometric" or name.startswith("torch_geometric.")):
            continue
        for attribute, value in list(vars(module).items()):
            if value is original:
                _set(module, attribute, original, replacement)


def _wrap_class_propagate(cls, message_passing, plain):
    current = cls.__dict__.get("propagate")
    if current is None or hasattr(current, "__edgewise_original__"):
        return
    from torch_geometric import EdgeIndex

    _set(cls, "propagate", current, _propagate.wrap(current, cls, message_passing, plain, EdgeIndex))


def _all_subclasses(cls):
    seen, stack = [], [cls]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in seen:
                seen.append(sub)
                stack.append(sub)
    return seen


def _plain_aggregations(torch_geometric):
    from torch_geometric.nn import aggr

    return frozenset((aggr.SumAggregation, aggr.MeanAggregation, aggr.MaxAggregation, aggr.MinAggregation))


def accelerate() -> bool:
    """Route PyG's scatter / segment / softmax / spmm and MessagePassing.propagate to
    Edgewise. True when active; False (with a warning, nothing changed) when PyG is
    missing or its version was not tested."""
    with _lock:
        if _propagate.state.active:
            return True
        torch_geometric = _pyg()
        if torch_geometric is None:
            warnings.warn("edgewise.torch.pyg.accelerate(): torch_geometric is not installed; nothing changed",
                          stacklevel=2)
            return False
        if not _version_tested(torch_geometric.__version__):
            warnings.warn(f"edgewise.torch.pyg.accelerate(): torch_geometric {torch_geometric.__version__} was not "
                          f"tested (tested: {', '.join(TESTED_PYG_VERSIONS)}); nothing changed", stacklevel=2)
            return False
        from torch_geometric.nn.conv import MessagePassing
        from torch_geometric.utils import num_nodes as num_nodes_module
        import torch_geometric.utils._softmax as softmax_module

        for module_name, attribute, make in _UTILS:
            original = getattr(sys.modules[module_name], attribute)
            _replace_everywhere(original, make(original))
        softmax = softmax_module.softmax
        _replace_everywhere(softmax, _functional.make_softmax(softmax, num_nodes_module.maybe_num_nodes))

        plain = _plain_aggregations(torch_geometric)
        for cls in [MessagePassing] + _all_subclasses(MessagePassing):
            _wrap_class_propagate(cls, MessagePassing, plain)
        # Classes instantiated later get their generated propagate then: wrap it there.
        original_templates = MessagePassing._set_jittable_templates

        def _set_jittable_templates(self, *args, **kwargs):
            original_templates(self, *args, **kwargs)
            if _propagate.state.active:
                with _lock:
                    _wrap_class_propagate(type(self), MessagePassing, plain)

        _set(MessagePassing, "_set_jittable_templates", original_templates, _set_jittable_templates)
        # Neighbour sampling (NeighborLoader, LinkNeighborLoader; Data and HeteroData) on
        # Edgewise: PyG's loaders then work on an install without pyg-lib or torch-sparse.
        import torch_geometric.sampler.neighbor_sampler as neighbor_sampler_module

        pyg_sampler = neighbor_sampler_module.NeighborSampler
        original_sample = pyg_sampler.__dict__["_sample"]
        _set(pyg_sampler, "_sample", original_sample, _sampler.make_neighbor_sample(original_sample))
        import torch_geometric.typing as pyg_typing

        for flag in _sampler.SAMPLING_FEATURES:  # weighted and edge-time sampling: HopSampler has both
            _set(pyg_typing, flag, getattr(pyg_typing, flag, False), True)
        # Typed layers: one segment_matmul / grouped_matmul / fused relational aggregation.
        from torch_geometric.nn.conv import RGCNConv
        from torch_geometric.nn.dense.linear import HeteroDictLinear, HeteroLinear

        for cls, make in ((HeteroLinear, _hetero.make_hetero_linear_forward),
                          (HeteroDictLinear, _hetero.make_hetero_dict_linear_forward),
                          (RGCNConv, _hetero.make_rgcn_forward)):
            original_forward = cls.__dict__["forward"]
            _set(cls, "forward", original_forward, make(original_forward))
        # SAGEConv: its two linear maps as one product plus one in-place product.
        from torch_geometric.nn.conv import SAGEConv

        original_forward = SAGEConv.__dict__["forward"]
        _set(SAGEConv, "forward", original_forward, _sage.make_sage_forward(original_forward))
        _propagate.state.active = True
        return True


def deaccelerate() -> None:
    """Restore every name accelerate() replaced (no-op when not active)."""
    with _lock:
        if not _propagate.state.active:
            return
        _propagate.state.active = False
        # Functions only: flags (True) are shared objects, found by identity everywhere.
        replacements = {id(r): o for _, _, o, r in _replaced if callable(r)}
        for owner, attribute, original, replacement in reversed(_replaced):
            if owner.__dict__.get(attribute) is replacement:
                setattr(owner, attribute, original)
        # Modules imported while active copied replacements from torch_geometric.utils.
        for name, module in list(sys.modules.items()):
            if module is None or not name.startswith("torch_geometric"):
                continue
            for attribute, value in list(vars(module).items()):
                if id(value) in replacements and any(value is r for _, _, _, r in _replaced if callable(r)):
                    setattr(module, attribute, replacements[id(value)])
        _replaced.clear()
        # The structure cache stays: it is keyed by contents, so never stale, and a
        # model toggled in and out of acceleration keeps its CSR.


def is_accelerated() -> bool:
    """Whether accelerate() is in effect."""
    return _propagate.state.active


@contextlib.contextmanager
def accelerated():
    """accelerate() for the block; restored afterwards unless it was already active."""
    was_active = is_accelerated()
    accelerate()
    try:
        yield
    finally:
        if not was_active:
            deaccelerate()


__all__ = ["accelerate", "deaccelerate", "accelerated", "is_accelerated", "NeighborSampler", "TESTED_PYG_VERSIONS"]


def __getattr__(name):
    if name == "NeighborSampler":  # a subclass of PyG's: made on first use
        return _sampler.neighbor_sampler_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
