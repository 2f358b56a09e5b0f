"""LinkNeighborLoader: PyG's LinkNeighborLoader arguments and batches, prepared by native threads."""

import math
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from ... import _edgewise
from ._neighbor_loader import NeighborLoader

# Arguments PyG's LinkNeighborLoader hands to its NeighborSampler.
_SAMPLER_ARGS = ("subgraph_type", "replace", "disjoint", "temporal_strategy", "time_attr", "weight_attr", "is_sorted",
                 "share_memory", "directed")
# Arguments only PyG's own LinkLoader understands: given one, the loader is PyG's.
_PYG_ONLY_ARGS = ("neighbor_sampler", "transform_sampler_output", "custom_cls")


class _Negatives:
    """PyG's NegativeSampling, checked: mode 'binary' (random node pairs labelled 0) or
    'triplet' (random destinations per positive), amount per positive, optional
    per-node weights for the sources / destinations drawn."""

    def __init__(self, op: str, mode: Any, amount: Any, src_weight: Any, dst_weight: Any, num_nodes: int) -> None:
        mode = str(getattr(mode, "value", mode))
        if mode not in ("binary", "triplet"):
            raise ValueError(f"{op}: neg_sampling mode '{mode}' must be 'binary' or 'triplet'")
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not math.isfinite(amount) or amount <= 0:
            raise ValueError(f"{op}: neg_sampling amount must be a positive number (got {amount!r})")
        if mode == "triplet":
            if amount != math.ceil(amount):
                raise ValueError(f"{op}: neg_sampling amount must be an integer for 'triplet' negative sampling "
                                 f"(got {amount})")
            amount = math.ceil(amount)
        self.mode = mode
        self.amount = amount
        self.weight = {"src": _check_weight(op, "src_weight", src_weight, num_nodes),
                       "dst": _check_weight(op, "dst_weight", dst_weight, num_nodes)}
        self.num_nodes = num_nodes

    def draw(self, count: int, endpoint: str, generator: torch.Generator) -> torch.Tensor:
        weight = self.weight[endpoint]
        if weight is None:
            return torch.randint(self.num_nodes, (count,), generator=generator)
        return torch.multinomial(weight, count, replacement=True, generator=generator)


def _check_weight(op: str, name: str, weight: Any, num_nodes: int) -> Optional[torch.Tensor]:
    if weight is None:
        return None
    w = torch.as_tensor(weight)
    if w.dim() != 1 or w.numel() != num_nodes or not w.is_floating_point():
        raise ValueError(f"{op}: neg_sampling {name} must be a 1-D floating-point tensor with one entry per node "
                         f"({num_nodes}), got {w.dtype} {list(w.shape)}")
    w = w.detach().to("cpu", torch.float64)
    if not bool((torch.isfinite(w) & (w >= 0)).all()) or float(w.sum()) <= 0:
        raise ValueError(f"{op}: neg_sampling {name} must be finite, >= 0 and not all zero")
    return w


def _negatives(op: str, neg_sampling: Any, neg_sampling_ratio: Any, num_nodes: int) -> Optional[_Negatives]:
    if neg_sampling_ratio is not None and neg_sampling_ratio != 0.0:  # PyG's older spelling
        return _Negatives(op, "binary", neg_sampling_ratio, None, None, num_nodes)
    if neg_sampling is None:
        return None
    if isinstance(neg_sampling, str):
        return _Negatives(op, neg_sampling, 1, None, None, num_nodes)
    if isinstance(neg_sampling, dict):
        unknown = sorted(set(neg_sampling) - {"mode", "amount", "src_weight", "dst_weight"})
        if unknown or "mode" not in neg_sampling:
            raise ValueError(f"{op}: neg_sampling as a dict takes 'mode', 'amount', 'src_weight' and 'dst_weight' "
                             f"(got {sorted(neg_sampling)})")
        return _Negatives(op, neg_sampling["mode"], neg_sampling.get("amount", 1), neg_sampling.get("src_weight"),
                          neg_sampling.get("dst_weight"), num_nodes)
    if hasattr(neg_sampling, "mode") and hasattr(neg_sampling, "amount"):  # torch_geometric's NegativeSampling
        return _Negatives(op, neg_sampling.mode, neg_sampling.amount, getattr(neg_sampling, "src_weight", None),
                          getattr(neg_sampling, "dst_weight", None), num_nodes)
    raise ValueError(f"{op}: neg_sampling must be 'binary', 'triplet', a dict or a NegativeSampling "
                     f"(got {type(neg_sampling).__name__})")


class LinkNeighborLoader(NeighborLoader):
    r"""Minibatches of sampled neighbourhoods around label edges, PyG's ``LinkNeighborLoader``
    on Edgewise's threads.

    Arguments follow ``torch_geometric.loader.LinkNeighborLoader``: ``edge_label_index``
    ([2, L] node pairs, default ``data.edge_index``), ``edge_label``, ``edge_label_time``
    (with ``time_attr``: temporal sampling, disjoint), ``neg_sampling`` (``"binary"``,
    ``"triplet"``, a dict or PyG's ``NegativeSampling``: ``mode``, ``amount``,
    ``src_weight``, ``dst_weight``) or ``neg_sampling_ratio``, ``input_id``, and
    everything :class:`NeighborLoader` takes about sampling, batches and threads
    (``batch_size`` label edges per batch).

    Each batch is what PyG's loader yields: the sample around the batch's endpoints
    (deduplicated and sorted, or one subgraph per endpoint with ``disjoint``) with
    data's attributes sliced to it, ``n_id``, ``e_id``, ``num_sampled_nodes``,
    ``num_sampled_edges``, ``batch`` (disjoint: the label edge of each node),
    ``input_id`` (the batch's positions in ``edge_label_index``), and
    ``edge_label_index`` (local ids) / ``edge_label`` (negatives 0, positives 1, or the
    given labels, shifted by one when they start at 0) / ``edge_label_time``, or for
    ``"triplet"`` ``src_index``, ``dst_pos_index``, ``dst_neg_index`` and ``seed_time``.
    Negatives are drawn uniformly (or by the weights; temporal: among nodes no newer
    than the label edge, as PyG) from a generator keyed by ``seed`` and the epoch, so an
    epoch is the same batches at any thread count. The batches' endpoints are found
    when an epoch starts; the threads then sample and gather ahead of the loop.

    Given ``neighbor_sampler``, ``transform_sampler_output`` or ``custom_cls``, it is
    PyG's own ``LinkNeighborLoader`` (with ``edgewise.torch.pyg.NeighborSampler`` unless
    a sampler is given; needs torch_geometric; batches prepared by PyG's DataLoader).
    ``HeteroData`` goes there too (typed link batches; the sampling runs on Edgewise's
    HeteroHopSampler, no pyg-lib needed).
    """

    def __new__(cls, data: Any = None, *args: Any, **kwargs: Any) -> Any:
        from ._hetero_neighbor_loader import is_hetero_data
        if is_hetero_data(data) or isinstance(data, tuple) or any(kwargs.get(k) is not None for k in _PYG_ONLY_ARGS):
            return _pyg_link_neighbor_loader(data, *args, **kwargs)
        return object.__new__(cls)

    def __init__(self, data: Any, num_neighbors: List[int], edge_label_index: Any = None, edge_label: Any = None,
                 edge_label_time: Any = None, replace: bool = False, subgraph_type: str = "directional",
                 disjoint: bool = False, temporal_strategy: str = "uniform", neg_sampling: Any = None,
                 neg_sampling_ratio: Any = None, time_attr: Optional[str] = None, weight_attr: Optional[str] = None,
                 transform: Optional[Callable] = None, batch_size: int = 1, shuffle: bool = False,
                 drop_last: bool = False, num_threads: Optional[int] = None, prefetch: int = 4,
                 seed: Optional[int] = None, directed: bool = True, overlap: bool = True, input_id: Any = None,
                 **kwargs: Any) -> None:
        op = type(self).__name__
        if (edge_label_time is not None) != (time_attr is not None):
            raise ValueError(f"{op}: received conflicting 'edge_label_time' and 'time_attr' arguments: "
                             f"'edge_label_time' is {'set' if edge_label_time is not None else 'not set'} while "
                             f"'time_attr' is {'set' if time_attr is not None else 'not set'}; both must be given "
                             f"for temporal sampling")
        super().__init__(data, num_neighbors, input_nodes=torch.empty(0, dtype=torch.int64), replace=replace,
                         subgraph_type=subgraph_type, disjoint=disjoint, temporal_strategy=temporal_strategy,
                         time_attr=time_attr, weight_attr=weight_attr, transform=transform, batch_size=batch_size,
                         shuffle=shuffle, drop_last=drop_last, num_threads=num_threads, prefetch=prefetch, seed=seed,
                         directed=directed, overlap=overlap, **kwargs)
        n = self.source.num_nodes
        self.edge_label_index = self._check_label_index(edge_label_index)
        num_labels = int(self.edge_label_index.size(1))
        self.negatives = _negatives(op, neg_sampling, neg_sampling_ratio, n)
        self.edge_label = self._check_per_label("edge_label", edge_label, num_labels, integer=False)
        if self.negatives is not None and self.negatives.mode == "triplet" and self.edge_label is not None:
            raise ValueError(f"{op}: 'edge_label' needs to be undefined for 'triplet'-based negative sampling; use "
                             f"the batch's src_index, dst_pos_index and dst_neg_index to tell positive and "
                             f"negative examples apart")
        if (self.negatives is not None and self.negatives.mode == "binary" and self.edge_label is not None
                and self.edge_label.numel() and bool(self.edge_label.min() == 0)):
            self.edge_label = self.edge_label + 1  # PyG: 0 now means "negative"
        self.edge_label_time = self._check_per_label("edge_label_time", edge_label_time, num_labels, integer=True)
        self.input_id = self._check_per_label("input_id", input_id, num_labels, integer=True)
        node_time = self.source.node_time(time_attr)[0]
        self.node_time = node_time.detach().to("cpu", torch.int64) if node_time is not None else None
        self._plan: Optional[_EpochPlan] = None

    def _check_label_index(self, edge_label_index: Any) -> torch.Tensor:
        op, n = self.op, self.source.num_nodes
        if edge_label_index is None:
            return self.source.edge_index.detach().to("cpu", torch.int64)
        if isinstance(edge_label_index, (tuple, list, str)):
            raise ValueError(f"{op}: edge_label_index of an edge type is for heterogeneous graphs; pass a [2, L] "
                             f"tensor of node ids")
        t = torch.as_tensor(edge_label_index)
        if t.dim() != 2 or t.size(0) != 2:
            raise ValueError(f"{op}: edge_label_index must be [2, L] (got {list(t.shape)})")
        if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
            raise ValueError(f"{op}: edge_label_index must hold node ids (integers), got {t.dtype}")
        t = t.detach().to("cpu", torch.int64)
        bad = (t < 0) | (t >= n)
        if bool(bad.any()):
            i, k = (int(v) for v in bad.nonzero()[0])
            raise ValueError(f"{op}: edge_label_index[{i}, {k}] ({int(t[i, k])}) must lie in [0, {n})")
        return t.contiguous()

    def _check_per_label(self, name: str, value: Any, num_labels: int, integer: bool) -> Optional[torch.Tensor]:
        if value is None:
            return None
        t = torch.as_tensor(value)
        if t.dim() == 0 or t.size(0) != num_labels or (integer and (t.dim() != 1 or t.is_floating_point())):
            kind = "a 1-D integer tensor" if integer else "a tensor"
            raise ValueError(f"{self.op}: {name} must be {kind} with one entry per label edge ({num_labels}), "
                             f"got {t.dtype} {list(t.shape)}")
        return t.detach().cpu()

    def __len__(self) -> int:
        num_labels = int(self.edge_label_index.size(1))
        return num_labels // self.batch_size if self.drop_last else -(-num_labels // self.batch_size)

    def _start_epoch(self, epoch: int) -> None:
        generator = torch.Generator().manual_seed((self.seed * 0x9E3779B97F4A7C15 + epoch) % (2**63))
        num_labels = int(self.edge_label_index.size(1))
        order = torch.randperm(num_labels, generator=generator) if self.shuffle else torch.arange(num_labels)
        num_batches = len(self)
        index = order[:min(num_labels, num_batches * self.batch_size)]
        num_pos = [min(self.batch_size, index.numel() - b * self.batch_size) for b in range(num_batches)]
        epoch_plan = _EpochPlan(self, index, num_pos, generator)
        if self.disjoint:  # one subgraph per endpoint: the seeds as they are
            seeds, offsets = epoch_plan.endpoints, epoch_plan.endpoint_offsets
            local = torch.arange(seeds.numel()) - torch.repeat_interleave(offsets[:-1], epoch_plan.sizes)
        else:
            seeds, offsets, local = self._deduplicate(epoch_plan.endpoints, epoch_plan.sizes)
        epoch_plan.local = local
        self._plan = epoch_plan
        self.pipeline.start_epoch(epoch, seeds=seeds, offsets=offsets, seed_time=epoch_plan.seed_time)

    def _deduplicate(self, endpoints: torch.Tensor, sizes: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor,
                                                                                   torch.Tensor]:
        """Every batch's endpoints deduplicated and sorted at once (PyG's per-batch
        unique(return_inverse=True)): one stable radix sort of batch * N + node keys.
        Returns the seeds, their batch offsets and each endpoint's local id."""
        n = max(self.source.num_nodes, 1)
        batch = torch.repeat_interleave(torch.arange(sizes.numel()), sizes)
        keys, perm = _edgewise.sort_by_key(batch * n + endpoints)
        first = torch.ones(keys.numel(), dtype=torch.bool)
        first[1:] = keys[1:] != keys[:-1]
        unique = keys[first]
        inverse = torch.empty_like(perm)
        inverse[perm] = first.cumsum(0) - 1
        counts = torch.bincount(unique // n, minlength=sizes.numel())
        offsets = torch.cat([counts.new_zeros(1), counts.cumsum(0)])
        return unique % n, offsets, inverse - offsets[batch]

    def _draw(self, count: int, endpoint: str, limit: Optional[torch.Tensor],
              generator: torch.Generator) -> torch.Tensor:
        """count negative endpoints; with node times, each no newer than its limit (PyG's
        greedy redraw, five rounds, then the oldest node)."""
        neg = self.negatives
        out = neg.draw(count, endpoint, generator)
        if self.node_time is None:
            return out
        node_time = self.node_time
        invalid = node_time[out] > limit
        for _ in range(5):
            num_invalid = int(invalid.sum())
            if num_invalid == 0:
                break
            redrawn = neg.draw(num_invalid, endpoint, generator)
            out[invalid] = redrawn
            invalid[invalid.clone()] = node_time[redrawn] > limit[invalid]
        else:
            out[invalid] = int(node_time.argmin())
        return out

    def _batch(self, out: Dict[str, Any]) -> Any:
        fields = self._sampled_fields(out)
        plan = self._plan
        b = int(out["index"])
        num_pos = plan.num_pos[b]
        if self.disjoint and fields["batch"] is not None:
            fields["batch"] = fields["batch"] % num_pos  # the label edge each node was sampled for
        fields.update(plan.label_fields(b))
        if "edge_label" in fields:
            none_keys: Tuple[str, ...] = ("edge_label", "edge_label_time")
        else:
            fields.pop("edge_label_index", None)
            fields.pop("edge_label_time", None)
            none_keys = ("seed_time",)
        return self._finish(fields, ("batch", "num_sampled_nodes", "num_sampled_edges") + none_keys)

    def __repr__(self) -> str:
        return f"{self.op}(num_neighbors={self.num_neighbors}, batch_size={self.batch_size}, batches={len(self)})"


class _EpochPlan:
    """One epoch's label edges, batch by batch, as PyG's edge_sample lays each batch out:
    the endpoints (sources then destinations, each batch's negatives after its
    positives) and their times, drawn for the whole epoch at once; label_fields gives a
    batch's label edges in local ids once local (each endpoint's) is known.

    Negative j of a batch belongs to its positive j % num_pos: it takes that label
    edge's time, as a limit on the nodes drawn and as its own seed time."""

    def __init__(self, loader: "LinkNeighborLoader", index: torch.Tensor, num_pos: List[int],
                 generator: torch.Generator) -> None:
        neg = loader.negatives
        self.loader = loader
        self.num_pos = num_pos
        self.pos_offsets = _offsets(num_pos)
        self.index = index
        self.time = loader.edge_label_time[index] if loader.edge_label_time is not None else None
        if neg is None:
            self.num_neg = [0] * len(num_pos)
        elif neg.mode == "binary":
            self.num_neg = [math.ceil(n * neg.amount) for n in num_pos]
        else:
            self.num_neg = [n * neg.amount for n in num_pos]
        self.neg_offsets = _offsets(self.num_neg)
        owner_time = self._owner_time()
        src, dst = loader.edge_label_index[0, index], loader.edge_label_index[1, index]
        total_neg = int(self.neg_offsets[-1])
        time = self.time
        num_neg = self.num_neg
        if neg is not None and neg.mode == "binary":
            src_neg = loader._draw(total_neg, "src", owner_time, generator)
            dst_neg = loader._draw(total_neg, "dst", owner_time, generator)
            parts, times = [src, src_neg, dst, dst_neg], [time, owner_time, time, owner_time]
            sizes = [num_pos, num_neg, num_pos, num_neg]
        elif neg is not None:
            parts = [src, dst, loader._draw(total_neg, "dst", owner_time, generator)]
            times, sizes = [time, time, owner_time], [num_pos, num_pos, num_neg]
        else:
            parts, times, sizes = [src, dst], [time, time], [num_pos, num_pos]
        self.endpoints = _interleave(parts, sizes)
        self.seed_time = _interleave(times, sizes).to(torch.int64) if time is not None else None
        self.sizes = torch.tensor(sizes, dtype=torch.int64).sum(0) if num_pos else torch.zeros(0, dtype=torch.int64)
        self.endpoint_offsets = torch.cat([self.sizes.new_zeros(1), self.sizes.cumsum(0)])
        self.owner_time = owner_time
        self.local = torch.empty(0, dtype=torch.int64)

    def _owner_time(self) -> Optional[torch.Tensor]:
        """Each negative's label-edge time (None without times or negatives)."""
        if self.time is None or not any(self.num_neg):
            return None if self.time is None else self.time.new_empty(0)
        num_pos = torch.tensor(self.num_pos, dtype=torch.int64)
        num_neg = torch.tensor(self.num_neg, dtype=torch.int64)
        batch = torch.repeat_interleave(torch.arange(len(self.num_pos)), num_neg)
        within = torch.arange(int(num_neg.sum())) - self.neg_offsets[:-1][batch]
        return self.time[self.pos_offsets[:-1][batch] + within % num_pos[batch]]

    def label_fields(self, b: int) -> Dict[str, Any]:
        """Batch b's input_id and label edges, in local ids, as PyG's batch holds them."""
        loader, neg = self.loader, self.loader.negatives
        n, k = self.num_pos[b], self.num_neg[b]
        pos = slice(int(self.pos_offsets[b]), int(self.pos_offsets[b + 1]))
        negs = slice(int(self.neg_offsets[b]), int(self.neg_offsets[b + 1]))
        local = self.local[int(self.endpoint_offsets[b]):int(self.endpoint_offsets[b + 1])]
        index = self.index[pos]
        fields: Dict[str, Any] = {"input_id": loader.input_id[index] if loader.input_id is not None else index}
        time = self.time[pos] if self.time is not None else None
        if neg is not None and neg.mode == "triplet":
            fields["src_index"] = local[:n]
            fields["dst_pos_index"] = local[n:2 * n]
            negatives = local[2 * n:]
            if loader.disjoint:  # PyG's disjoint triplets: the negatives of one positive are num_pos apart
                negatives = negatives.view(-1, n).t()
            fields["dst_neg_index"] = negatives.reshape(n, -1).squeeze(-1)
            fields["seed_time"] = time
            return fields
        label = loader.edge_label[index] if loader.edge_label is not None else None
        if neg is not None:
            if label is None:
                label = torch.ones(n)
            label = torch.cat([label, label.new_zeros((k,) + tuple(label.shape[1:]))])
            if time is not None:
                time = torch.cat([time, self.owner_time[negs]])
        fields["edge_label_index"] = local.view(2, -1)
        fields["edge_label"] = label
        fields["edge_label_time"] = time
        return fields


def _offsets(sizes: List[int]) -> torch.Tensor:
    return torch.cat([torch.zeros(1, dtype=torch.int64), torch.tensor(sizes, dtype=torch.int64).cumsum(0)])


def _interleave(parts: List[torch.Tensor], sizes: List[List[int]]) -> torch.Tensor:
    """Batch by batch, each part's slice for the batch in turn (parts[i] split by sizes[i])."""
    pieces = [part.split(size) for part, size in zip(parts, sizes)]
    flat = [piece[b] for b in range(len(sizes[0])) for piece in pieces]
    return torch.cat(flat) if flat else parts[0].new_empty(0)


def _pyg_link_neighbor_loader(data: Any, num_neighbors: Any, **kwargs: Any) -> Any:
    """PyG's LinkNeighborLoader, with edgewise.torch.pyg.NeighborSampler unless a sampler is given."""
    try:
        from torch_geometric.loader import LinkNeighborLoader as PygLinkNeighborLoader
    except ImportError as error:
        raise ImportError("edgewise.torch.loader.LinkNeighborLoader with HeteroData, neighbor_sampler, "
                          "transform_sampler_output or custom_cls is torch_geometric's LinkLoader: install "
                          "torch_geometric (pip install torch_geometric)") from error
    from ..pyg import NeighborSampler

    if isinstance(num_neighbors, dict):
        raise ValueError("LinkNeighborLoader: num_neighbors as a dict is for heterogeneous graphs, which this "
                         "loader does not sample; pass a list of ints")
    if kwargs.get("neighbor_sampler") is None:
        sampler_kwargs = {k: kwargs[k] for k in _SAMPLER_ARGS if k in kwargs}
        kwargs["neighbor_sampler"] = NeighborSampler(data, num_neighbors=num_neighbors, **sampler_kwargs)
    return PygLinkNeighborLoader(data, num_neighbors=num_neighbors, **kwargs)
