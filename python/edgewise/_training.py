"""edgewise.train(): full-batch node classification on a named dataset or on in-memory
graph data (a dict, a PyG ``Data`` or any object with the same attributes), with a
per-epoch callback, Ctrl-C handling and a progress display."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Mapping
from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np

from . import _edgewise

__all__ = ["train", "TrainResult"]

# (mask attribute, index attribute, the engine's key) per split: PyG names the masks,
# OGB the index arrays.
_SPLITS = (
    ("train_mask", "train_idx", "train_idx"),
    ("val_mask", "valid_idx", "valid_idx"),
    ("test_mask", "test_idx", "test_idx"),
)


@dataclasses.dataclass(repr=False)
class TrainResult:
    """What :func:`edgewise.train` returns.

    Attributes:
        dataset: the dataset's name ("in-memory" for graph data without a ``name``).
        test_acc, valid_acc, train_acc: accuracies at ``best_epoch``.
        best_epoch: the selected epoch (``select="best-valid"``: highest validation
            accuracy; ``"last"``: the last epoch run).
        epoch_ms_median: median time of one training step (forward, backward, update).
        total_seconds: wall time of the training loop.
        history: one dict per epoch run: epoch, loss, train_acc, valid_acc,
            valid_loss, test_acc, epoch_ms (the records ``on_epoch`` received).
        logits: class scores [N, K] (float32) of the model after the last epoch run,
            in evaluation mode (no dropout). Note: that is the last model, not the
            one of ``best_epoch``.
        embeddings: node embeddings [N, hidden] (float32) of the same model: the
            last hidden layer's output (after its ReLU), which the output layer reads.
        interrupted: True when Ctrl-C (KeyboardInterrupt) stopped training; the
            other fields then describe the epochs completed before it.
        stopped_early: True when ``patience`` or ``on_epoch`` returning False ended
            training before ``epochs``.

    ``result["test_acc"]`` works as well as ``result.test_acc`` (the dict that
    train() returned before stays readable).
    """

    dataset: str
    test_acc: float
    valid_acc: float
    train_acc: float
    best_epoch: int
    epoch_ms_median: float
    total_seconds: float
    history: List[Dict[str, float]]
    logits: np.ndarray
    embeddings: np.ndarray
    interrupted: bool = False
    stopped_early: bool = False

    def __getitem__(self, key: str) -> Any:
        """The field ``key`` (mapping-style access, as for the dict train() used to return)."""
        if key not in self.keys():
            raise KeyError(key)
        return getattr(self, key)

    def keys(self) -> List[str]:
        """The field names, in declaration order."""
        return [f.name for f in dataclasses.fields(self)]

    def __repr__(self) -> str:
        # A summary: the history and the [N, K] arrays would flood a notebook cell.
        return (f"TrainResult(dataset={self.dataset!r}, test_acc={self.test_acc:.4f}, "
                f"valid_acc={self.valid_acc:.4f}, best_epoch={self.best_epoch}, epochs_run={len(self.history)}, "
                f"logits={self.logits.shape}, embeddings={self.embeddings.shape}, "
                f"interrupted={self.interrupted}, stopped_early={self.stopped_early})")


def _as_numpy(value: Any, field: str) -> np.ndarray:
    """The one place array-likes become NumPy: ndarrays as they are, torch tensors
    (any device) through ``detach().cpu()``, anything else through numpy.asarray."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # torch.Tensor, without importing torch
        try:
            return np.asarray(value.detach().cpu())
        except (TypeError, RuntimeError, ValueError) as e:
            raise TypeError(f"train: {field}: cannot read the {type(value).__name__} as a NumPy array "
                            f"(dtype {getattr(value, 'dtype', '?')}, layout {getattr(value, 'layout', '?')}): {e}") from e
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"train: {field}: cannot read a {type(value).__name__} as an array: {e}") from e
    if array.dtype == object:
        raise TypeError(f"train: {field} must be a numeric array (got a {type(value).__name__} of mixed objects)")
    return array


def _field(data: Any, name: str) -> Any:
    """data[name] for a mapping, data.name otherwise; None when absent."""
    if isinstance(data, Mapping):
        return data.get(name)
    return getattr(data, name, None)


def _require_integer(array: np.ndarray, field: str, what: str) -> None:
    if array.dtype.kind not in "iu" and array.size:
        raise TypeError(f"train: {field} must hold integer {what} (got dtype {array.dtype})")


def _first(mask: np.ndarray) -> tuple:
    """Position of the first True of a boolean array, as a tuple of ints."""
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), mask.shape))


def _split(data: Any, mask_name: str, idx_name: str, num_nodes: int):
    """(ascending node ids, the field they came from), or (None, None) when absent."""
    mask, idx = _field(data, mask_name), _field(data, idx_name)
    if mask is not None and idx is not None:
        raise ValueError(f"train: give {mask_name} or {idx_name}, not both")
    if mask is not None:
        m = _as_numpy(mask, mask_name)
        if m.dtype != np.bool_:
            raise TypeError(f"train: {mask_name} must be boolean (got dtype {m.dtype}); "
                            f"pass node ids as {idx_name} instead")
        if m.shape != (num_nodes,):
            raise ValueError(f"train: {mask_name} must have shape [num_nodes] = ({num_nodes},) "
                             f"(got {tuple(m.shape)})")
        return np.flatnonzero(m).astype(np.int64), mask_name
    if idx is not None:
        i = _as_numpy(idx, idx_name)
        _require_integer(i, idx_name, "node ids")
        if i.ndim != 1:
            raise ValueError(f"train: {idx_name} must be 1-D (got shape {tuple(i.shape)})")
        i = i.astype(np.int64, copy=False)
        bad = (i < 0) | (i >= num_nodes)
        if bad.any():
            k = _first(bad)[0]
            raise ValueError(f"train: {idx_name}[{k}] = {int(i[k])} is not a node id in [0, {num_nodes})")
        ids = np.sort(i)
        repeated = ids[1:] == ids[:-1]
        if repeated.any():
            raise ValueError(f"train: {idx_name} lists node {int(ids[1:][repeated][0])} more than once")
        return ids, idx_name
    return None, None


def graph_arrays(data: Any, *, need_valid: bool = True) -> Dict[str, Any]:
    """Checks in-memory graph data and returns what the engine trains on.

    ``data``: a mapping or an object with ``x`` [N, F] (real), ``edge_index``
    [2, E] (integer node ids: row 0 sources, row 1 destinations), ``y`` [N] or
    [N, 1] (integer classes in [0, num_classes)), one of ``train_mask`` /
    ``train_idx`` and, when ``need_valid``, ``val_mask`` / ``valid_idx``; optional
    ``test_mask`` / ``test_idx``, ``num_classes`` (default max(y) + 1) and ``name``.
    Masks are boolean [N]; index arrays hold distinct node ids in any order.
    Arrays may be NumPy arrays, torch tensors (any device) or sequences.

    Returns a dict: name, x float32 [N, F], edge_index int64 [2, E], y int64 [N],
    num_classes, train_idx / valid_idx / test_idx int64 ascending. Raises
    ValueError (missing field, bad shape or value) or TypeError (wrong kind of
    array), naming the field.
    """
    missing = [f for f in ("x", "edge_index", "y") if _field(data, f) is None]
    if missing:
        raise ValueError(f"train: the graph data has no {', '.join(repr(f) for f in missing)} "
                         "(needs x [N, F], edge_index [2, E], y [N] and a train_mask or train_idx)")

    x = _as_numpy(_field(data, "x"), "x")
    if x.dtype.kind not in "biuf":
        raise TypeError(f"train: x must be a real-valued array (got dtype {x.dtype})")
    if x.ndim != 2:
        raise ValueError(f"train: x must be [num_nodes, num_features] (got shape {tuple(x.shape)})")
    num_nodes, num_features = x.shape
    if num_nodes == 0 or num_features == 0:
        raise ValueError(f"train: x has shape {tuple(x.shape)}: it needs at least one node and one feature")
    x = np.ascontiguousarray(x, dtype=np.float32)
    finite = np.isfinite(x)
    if not finite.all():
        r, c = _first(~finite)
        raise ValueError(f"train: x[{r}, {c}] is {x[r, c]} (features must be finite)")

    edge_index = _as_numpy(_field(data, "edge_index"), "edge_index")
    _require_integer(edge_index, "edge_index", "node ids")
    if edge_index.ndim != 2 or edge_index.shape[0] != 2:
        hint = " (an [E, 2] edge list: pass its transpose)" if edge_index.ndim == 2 and edge_index.shape[1] == 2 else ""
        raise ValueError(f"train: edge_index must be [2, num_edges] (got shape {tuple(edge_index.shape)}){hint}")
    edge_index = np.ascontiguousarray(edge_index, dtype=np.int64)
    bad = (edge_index < 0) | (edge_index >= num_nodes)
    if bad.any():
        r, c = _first(bad)
        raise ValueError(f"train: edge_index[{r}, {c}] = {int(edge_index[r, c])} is not a node id in "
                         f"[0, {num_nodes}) (num_nodes comes from x)")

    y = _as_numpy(_field(data, "y"), "y")
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.shape != (num_nodes,):
        raise ValueError(f"train: y must be [num_nodes] = ({num_nodes},) or ({num_nodes}, 1) "
                         f"(got {tuple(y.shape)})")
    if y.dtype.kind not in "iu":
        raise TypeError(f"train: y must hold integer class ids (got dtype {y.dtype})")
    y = np.ascontiguousarray(y, dtype=np.int64)
    given_classes = _field(data, "num_classes")
    num_classes = int(y.max()) + 1 if given_classes is None else int(given_classes)
    bad = (y < 0) | (y >= num_classes)
    if bad.any():
        k = _first(bad)[0]
        hint = " (give unlabelled nodes any class id and leave them out of every split)" if y[k] < 0 else ""
        raise ValueError(f"train: y[{k}] = {int(y[k])} is not a class id in [0, num_classes = {num_classes}){hint}")

    out: Dict[str, Any] = {}
    owner = np.full(num_nodes, -1, dtype=np.int64)
    sources: List[str] = []
    for mask_name, idx_name, key in _SPLITS:
        ids, source = _split(data, mask_name, idx_name, num_nodes)
        if ids is None:
            if key == "train_idx" or (key == "valid_idx" and need_valid):
                why = ("" if key == "train_idx" else
                       " (select='best-valid' and patience choose the model on it; pass select='last' to train without)")
                raise ValueError(f"train: the graph data has no {mask_name} or {idx_name}{why}")
            ids, source = np.empty(0, dtype=np.int64), idx_name
        elif ids.size == 0 and (key == "train_idx" or (key == "valid_idx" and need_valid)):
            raise ValueError(f"train: {source} selects no node (the split must not be empty)")
        taken = owner[ids] >= 0
        if taken.any():
            node = int(ids[taken][0])
            raise ValueError(f"train: node {node} is in both {sources[owner[node]]} and {source} "
                             "(a node may belong to one split only)")
        owner[ids] = len(sources)
        sources.append(source)
        out[key] = ids

    name = _field(data, "name")
    out.update(name=name if isinstance(name, str) and name else "in-memory", x=x, edge_index=edge_index, y=y,
               num_classes=num_classes)
    return out


def _load_tqdm():
    """tqdm's progress bar class, or None when tqdm is not installed."""
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped]
    except ImportError:
        return None
    return tqdm


class _Progress:
    """A tqdm bar when tqdm is installed, else a plain line every tenth of the run."""

    def __init__(self, epochs: int, name: str):
        self.epochs = epochs
        self.start = time.perf_counter()
        self.every = max(1, epochs // 10)
        tqdm = _load_tqdm()
        self.bar = tqdm(total=epochs, desc=name, unit="epoch") if tqdm is not None else None

    def update(self, rec: Dict[str, float]) -> None:
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(loss=f"{rec['loss']:.4f}", valid=f"{rec['valid_acc']:.3f}", refresh=False)
            return
        epoch = int(rec["epoch"])
        if epoch == 1 or epoch % self.every == 0 or epoch == self.epochs:
            elapsed = time.perf_counter() - self.start
            eta = elapsed / epoch * (self.epochs - epoch)
            print(f"epoch {epoch:4d}/{self.epochs}  loss {rec['loss']:.4f}  train {rec['train_acc']:.3f}  "
                  f"valid {rec['valid_acc']:.3f}  test {rec['test_acc']:.3f}  {rec['epoch_ms']:.2f} ms/epoch  "
                  f"ETA {eta:.1f} s", flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def train(
    dataset: Any = "synthetic",
    model: str = "gcn",
    epochs: int = 200,
    hidden: int = 16,
    dropout: float = 0.5,
    lr: float = 0.01,
    weight_decay: float = 5e-4,
    seed: int = 0,
    device: str = "cpu",
    aggregation: str = "auto",
    features: str = "auto",
    log_every: int = 0,
    normalize_features: bool = True,
    patience: int = 0,
    select: str = "best-valid",
    *,
    on_epoch: Optional[Callable[[Dict[str, float]], Optional[bool]]] = None,
    progress: bool = False,
    reorder: str = "none",
    lr_schedule: str = "constant",
) -> TrainResult:
    """Train a node classifier (gcn, sage or gin; two layers) full-batch and return a TrainResult.

    dataset: a name or path (str or os.PathLike): a dataset in EDGEWISE_DATA_DIR such
        as "cora", a path to an .npz, "synthetic", "rmat:N:E:F[:K]" or "auto"; or
        in-memory graph data: a dict, a torch_geometric ``Data`` or any object with
        ``x`` [N, F], ``edge_index`` [2, E], ``y`` [N] and the splits as boolean
        masks (``train_mask``, ``val_mask``, ``test_mask``) or node ids
        (``train_idx``, ``valid_idx``, ``test_idx``); NumPy arrays or torch tensors.
        The validation split is needed unless select="last" and patience=0; the test
        split is optional (test_acc is 0 without it). Bad data raises ValueError or
        TypeError naming the field.
    model, epochs, hidden, dropout, lr, weight_decay, seed: the model (Adam optimiser)
        and the run; the same seed gives the same result.
    device: "cpu" or "cuda[:i]"; aggregation: the aggregation strategy ("auto");
    features: "auto", "dense" or "sparse" feature storage; normalize_features: divide
        every feature row by max(row sum, 1) (PyG's NormalizeFeatures).
    patience: stop after this many epochs without a better validation accuracy (0: never).
    select: "best-valid" (the reported accuracies are those of the epoch with the best
        validation accuracy) or "last".
    log_every: the engine's own progress line (C stdout) every this many epochs (0: none).
    on_epoch: called after every epoch with that epoch's record (a dict: epoch, loss,
        train_acc, valid_acc, valid_loss, test_acc, epoch_ms); returning False (any
        falsy value but None) stops training. Its exceptions propagate.
    progress: show a tqdm progress bar (a plain line per tenth of the run without tqdm).
    reorder: "none", "degree" (descending in-degree) or "rcm" (reverse Cuthill-McKee):
        relabel the nodes for memory locality before training (faster aggregation on
        large graphs); ``logits`` and ``embeddings`` still come back in the original
        node order, and accuracies agree up to float reassociation.
    lr_schedule: "constant" or "cosine" (the learning rate annealed from lr to 0 over
        the epochs, as edgewise-train --lr-schedule cosine); each record's "lr" is the
        rate that epoch trained with.

    Ctrl-C (SIGINT, or a KeyboardInterrupt raised by on_epoch) stops training after the
    current epoch and returns what was done, with ``interrupted=True``.
    """
    if isinstance(dataset, os.PathLike):
        dataset = os.fspath(dataset)
    if isinstance(dataset, str):
        source: Union[str, Dict[str, Any]] = dataset
        name = dataset
    elif isinstance(dataset, Mapping) or any(hasattr(dataset, f) for f in ("x", "edge_index", "y")):
        source = graph_arrays(dataset, need_valid=select != "last" or patience > 0)
        name = source["name"]
    else:
        raise TypeError("train: dataset must be a dataset name or path (str), or graph data with x, edge_index, y "
                        f"and train/valid/test masks or ids (a dict or e.g. a torch_geometric Data); "
                        f"got {type(dataset).__name__}")
    if on_epoch is not None and not callable(on_epoch):
        raise TypeError(f"train: on_epoch must be callable (got {type(on_epoch).__name__})")

    bar = _Progress(epochs, name) if progress else None
    hook = None
    if bar is not None or on_epoch is not None:
        def hook(rec: Dict[str, float]) -> Optional[bool]:
            if bar is not None:
                bar.update(rec)
            return on_epoch(rec) if on_epoch is not None else None
    try:
        out = _edgewise._train(source, model, epochs, hidden, dropout, lr, weight_decay, seed, device, aggregation,
                               features, log_every, normalize_features, patience, select, hook, reorder,
                               lr_schedule)
    finally:
        if bar is not None:
            bar.close()
    if out["interrupted"] and progress:
        print(f"train: interrupted after epoch {len(out['history'])} of {epochs}", file=sys.stderr, flush=True)
    return TrainResult(**out)
