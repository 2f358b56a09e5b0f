"""Per-graph structure (CSR, GCN normalisation) cached for a given edge_index tensor.

An entry is served only for the very tensor it was built from, unchanged: the key
holds the tensor's identity (a weak reference, so a freed tensor whose id is reused
never matches), its version counter (bumped by in-place ops), shape, dtype and
device, and a copy of its contents is compared exactly (writes that bypass the
version counter, e.g. through ``.data`` or a NumPy view, are caught there).
Under torch.compile the structure is rebuilt inside the graph instead.
"""

import threading
import weakref

import torch


class _Entry:
    __slots__ = ("ref", "version", "contents", "value")

    def __init__(self, tensor, value):
        self.ref = weakref.ref(tensor)
        self.version = tensor._version
        self.contents = tensor.detach().clone()
        self.value = value

    def serves(self, tensor):
        return (
            self.ref() is tensor
            and self.version == tensor._version
            and self.contents.shape == tensor.shape
            and self.contents.dtype == tensor.dtype
            and self.contents.device == tensor.device
            and torch.equal(self.contents, tensor)
        )


class GraphCache:
    """At most ``capacity`` graphs, least recently used dropped first."""

    def __init__(self, capacity=2):
        self.capacity = capacity
        self._entries = {}  # (id(tensor), variant) -> _Entry
        self.builds = 0  # how many times a structure was built (tests read it)

    def get(self, edge_index, variant, build):
        """The structure ``build()`` gives for edge_index, cached under ``variant``."""
        if torch.compiler.is_compiling():
            return build()
        key = (id(edge_index), variant)
        entry = self._entries.pop(key, None)
        if entry is None or not entry.serves(edge_index):
            self.builds += 1
            entry = _Entry(edge_index, build())
        self._entries[key] = entry  # most recent last
        while len(self._entries) > self.capacity:
            del self._entries[next(iter(self._entries))]
        return entry.value

    def clear(self):
        self._entries.clear()


def _nbytes(value) -> int:
    """Bytes held by the tensors of a cached structure (a tensor or a tuple of them)."""
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value)
    return 0


class ContentGraphCache:
    """Structures keyed by an edge list's contents rather than its identity.

    For callers whose edge list is a fresh tensor on every call with the same
    contents (PyG's GCNConv adds self loops inside forward): a hit needs the same
    shape, dtype, device and ``variant`` and element-wise equal contents (a full
    compare against a private copy, so it is never served for another graph).
    Under torch.compile the structure is rebuilt inside the graph instead.

    Holds the ``capacity`` most recent graphs, and more while their copies and
    structures together stay under ``budget_bytes``: a heterogeneous model touches
    one graph per edge type each layer, and a cache smaller than its edge types
    would rebuild every one of them on every forward.
    """

    def __init__(self, capacity=4, budget_bytes=4 << 30, max_entries=1024):
        self.capacity = capacity
        self.budget_bytes = budget_bytes
        self.max_entries = max_entries
        self._entries = []  # [(key, contents, value, nbytes)], most recent last
        self._lock = threading.Lock()
        self.builds = 0

    def get(self, edge_index, variant, build):
        if torch.compiler.is_compiling():
            return build()
        key = (tuple(edge_index.shape), edge_index.dtype, edge_index.device, variant)
        with self._lock:
            for position, (entry_key, contents, value, _) in enumerate(self._entries):
                if entry_key == key and torch.equal(contents, edge_index):
                    self._entries.append(self._entries.pop(position))
                    return value
        value = build()
        contents = edge_index.detach().clone()
        with self._lock:
            self.builds += 1
            self._entries.append((key, contents, value, _nbytes(contents) + _nbytes(value)))
            self._evict()
        return value

    def _evict(self):
        held = sum(entry[3] for entry in self._entries)
        while len(self._entries) > self.capacity and (held > self.budget_bytes or
                                                      len(self._entries) > self.max_entries):
            held -= self._entries.pop(0)[3]

    def clear(self):
        with self._lock:
            self._entries.clear()
