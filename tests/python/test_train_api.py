"""edgewise.train() on in-memory data (dicts, torch tensors, PyG Data), its checks,
the on_epoch callback, Ctrl-C, progress display and the logits / embeddings it returns."""

import math
import os
import signal
import threading
import time

import numpy as np
import pytest

import edgewise as ew
import edgewise._training as training

HIDDEN = 16


def small_graph(rng, n=120, k=3, f=8):
    """A homophilous graph whose features carry the class: learnable in a few epochs."""
    y = rng.integers(0, k, n)
    x = (rng.standard_normal((n, f)) * 0.5 + np.eye(k, f)[y] * 2.0).astype(np.float32)
    src, dst = rng.integers(0, n, 6 * n), rng.integers(0, n, 6 * n)
    keep = (y[src] == y[dst]) | (rng.random(src.size) < 0.1)
    keep &= src != dst
    pairs = np.unique(np.stack([src[keep], dst[keep]], 1), axis=0)
    edge_index = np.concatenate([pairs.T, pairs.T[::-1]], axis=1)  # both directions
    perm = rng.permutation(n)
    return {
        "x": x,
        "edge_index": edge_index.astype(np.int64),
        "y": y.astype(np.int64),
        "train_idx": perm[: n // 2],  # any order: train() sorts
        "valid_idx": perm[n // 2: 3 * n // 4],
        "test_idx": perm[3 * n // 4:],
    }


def as_masks(data):
    n = data["x"].shape[0]
    out = {key: data[key] for key in ("x", "edge_index", "y")}
    for idx, mask in (("train_idx", "train_mask"), ("valid_idx", "val_mask"), ("test_idx", "test_mask")):
        m = np.zeros(n, dtype=bool)
        m[data[idx]] = True
        out[mask] = m
    return out


def losses(result):
    return [h["loss"] for h in result.history]


def gcn_norm_dense(edge_index, n):
    """D^-1/2 (A + I) D^-1/2 with A[v, u] = 1 per edge u -> v (independent of the engine)."""
    a = np.eye(n)
    np.add.at(a, (edge_index[1], edge_index[0]), 1.0)
    d = a.sum(1) ** -0.5
    return d[:, None] * a * d[None, :]


def test_in_memory_dict_trains_and_returns_the_models_outputs(rng):
    data = small_graph(rng)
    before = {k: v.copy() for k, v in data.items()}
    r = ew.train(data, epochs=30, hidden=HIDDEN, seed=1, select="last", normalize_features=False)
    n, k = data["x"].shape[0], 3
    assert isinstance(r, ew.TrainResult)
    assert r.dataset == "in-memory"
    assert len(r.history) == 30 and r.best_epoch == 30
    assert not r.interrupted and not r.stopped_early
    assert r.logits.shape == (n, k) and r.logits.dtype == np.float32
    assert r.embeddings.shape == (n, HIDDEN) and r.embeddings.dtype == np.float32
    for key in data:
        np.testing.assert_array_equal(data[key], before[key], err_msg=f"train() changed the caller's {key}")

    # The logits are the final (evaluation-mode) model's: they reproduce the last epoch's accuracies.
    pred = r.logits.argmax(1)
    test, valid = np.sort(data["test_idx"]), np.sort(data["valid_idx"])
    assert r.test_acc == pytest.approx(np.mean(pred[test] == data["y"][test]))
    assert r.valid_acc == pytest.approx(np.mean(pred[valid] == data["y"][valid]))
    assert r.test_acc > 0.8  # 3 classes: chance is ~0.33

    # The embeddings are what the output layer reads: ReLU outputs, and the logits are
    # exactly a GCN layer of them (gcn_norm(A) @ emb @ W + b for some W, b).
    emb = r.embeddings.astype(np.float64)
    assert (emb >= 0).all() and (emb > 0).any()
    design = np.hstack([gcn_norm_dense(data["edge_index"], n) @ emb, np.ones((n, 1))])
    coef, *_ = np.linalg.lstsq(design, r.logits.astype(np.float64), rcond=None)
    np.testing.assert_allclose(design @ coef, r.logits, atol=1e-4)
    # ...which a different matrix of the same shape would not satisfy.
    shuffled = np.hstack([gcn_norm_dense(data["edge_index"], n) @ emb[rng.permutation(n)], np.ones((n, 1))])
    coef2, *_ = np.linalg.lstsq(shuffled, r.logits.astype(np.float64), rcond=None)
    assert np.abs(shuffled @ coef2 - r.logits).max() > 1e-2


@pytest.mark.parametrize("model", ["sage", "gin"])
def test_every_model_returns_embeddings(rng, model):
    data = small_graph(rng, n=60)
    r = ew.train(data, model=model, epochs=3, hidden=8, select="last")
    assert r.logits.shape == (60, 3) and r.embeddings.shape == (60, 8)
    assert np.isfinite(r.logits).all() and (r.embeddings >= 0).all()


def test_result_reads_like_the_old_dict(rng):
    r = ew.train(small_graph(rng, n=40), epochs=2)
    assert repr(r).startswith("TrainResult(dataset='in-memory', test_acc=") and "epochs_run=2" in repr(r)
    assert r["test_acc"] == r.test_acc and r["history"] is r.history
    assert set(r.keys()) >= {"dataset", "test_acc", "valid_acc", "train_acc", "best_epoch", "epoch_ms_median",
                             "total_seconds", "history", "logits", "embeddings", "interrupted", "stopped_early"}
    with pytest.raises(KeyError):
        r["no_such_field"]


def test_in_memory_planted_partition_matches_the_named_synthetic_dataset():
    # The same graph through both paths gives the same run, step for step.
    d = ew.planted_partition(seed=12345)  # what train("synthetic") loads
    offsets, indices, values, (n, f) = d["features"]
    x = np.zeros((n, f), dtype=np.float32)
    x[np.repeat(np.arange(n), np.diff(offsets)), indices] = values
    data = {"x": x, "edge_index": d["edge_index"], "y": d["labels"], "train_idx": d["train_idx"],
            "valid_idx": d["valid_idx"], "test_idx": d["test_idx"]}
    a = ew.train(data, epochs=4, seed=2)
    b = ew.train("synthetic", epochs=4, seed=2)
    assert losses(a) == losses(b)
    assert a.test_acc == b.test_acc and a.best_epoch == b.best_epoch
    np.testing.assert_array_equal(a.logits, b.logits)


def test_a_path_names_an_npz_dataset(rng, tmp_path):
    data = small_graph(rng, n=50)
    path = tmp_path / "tiny.npz"
    np.savez(path, num_nodes=np.array([50]), edge_index=data["edge_index"], node_feat=data["x"],
             node_label=data["y"][:, None], train_idx=np.sort(data["train_idx"]),
             valid_idx=np.sort(data["valid_idx"]), test_idx=np.sort(data["test_idx"]))
    from_file = ew.train(path, epochs=3, features="dense")  # an os.PathLike
    assert from_file.dataset == "tiny"
    assert losses(from_file) == losses(ew.train(str(path), epochs=3, features="dense"))
    assert losses(from_file) == losses(ew.train(data, epochs=3, features="dense"))


def test_masks_and_index_arrays_give_the_same_run(rng):
    data = small_graph(rng, n=80)
    a = ew.train(data, epochs=5, seed=4)
    b = ew.train(as_masks(data), epochs=5, seed=4)
    assert losses(a) == losses(b)
    np.testing.assert_array_equal(a.embeddings, b.embeddings)


def test_torch_tensors_and_pyg_data_give_the_same_run(rng):
    torch = pytest.importorskip("torch")
    data = as_masks(small_graph(rng, n=80))
    ref = ew.train(data, epochs=5, seed=4)
    tensors = {key: torch.from_numpy(value) for key, value in data.items()}
    tensors["x"].requires_grad_(True)  # detached, not refused
    r = ew.train(tensors, epochs=5, seed=4)
    assert losses(r) == losses(ref)
    np.testing.assert_array_equal(r.logits, ref.logits)
    try:
        from torch_geometric.data import Data
    except ImportError:
        pytest.skip("torch_geometric is not importable: the PyG Data case is not run")
    r = ew.train(Data(**{key: value.detach() for key, value in tensors.items()}), epochs=5, seed=4)
    assert losses(r) == losses(ref)
    np.testing.assert_array_equal(r.embeddings, ref.embeddings)


def test_an_object_with_the_attributes_is_graph_data(rng):
    data = small_graph(rng, n=40)

    class Graph:
        pass

    g = Graph()
    for key, value in data.items():
        setattr(g, key, value)
    assert losses(ew.train(g, epochs=3)) == losses(ew.train(data, epochs=3))


def _without(data, *keys):
    return {k: v for k, v in data.items() if k not in keys}


def _with(data, **changes):
    out = dict(data)
    out.update(changes)
    return out


BAD_DATA = [
    # (case, mutate(data) -> bad data, exception, message pattern)
    ("missing y", lambda d: _without(d, "y"), ValueError, r"no 'y'"),
    ("missing x and edge_index", lambda d: _without(d, "x", "edge_index"), ValueError, r"no 'x', 'edge_index'"),
    ("x 1-D", lambda d: _with(d, x=d["x"][:, 0]), ValueError, r"x must be \[num_nodes, num_features\]"),
    ("x strings", lambda d: _with(d, x=d["x"].astype(str)), TypeError, r"x must be a real-valued"),
    ("x not finite", lambda d: _with(d, x=np.where(np.arange(d["x"].size).reshape(d["x"].shape) == 9, np.nan, d["x"])),
     ValueError, r"x\[1, 1\] is nan"),
    ("edge list [E, 2]", lambda d: _with(d, edge_index=d["edge_index"].T.copy()), ValueError,
     r"edge_index must be \[2, num_edges\].*transpose"),
    ("edge_index 3 rows", lambda d: _with(d, edge_index=np.zeros((3, 4), np.int64)), ValueError,
     r"edge_index must be \[2, num_edges\]"),
    ("edge_index float", lambda d: _with(d, edge_index=d["edge_index"].astype(np.float32)), TypeError,
     r"edge_index must hold integer"),
    ("edge id too large", lambda d: _with(d, edge_index=np.array([[0, 1, 2, 3], [1, 2, 3, 40]])), ValueError,
     r"edge_index\[1, 3\] = 40 is not a node id in \[0, 40\)"),
    ("edge id negative", lambda d: _with(d, edge_index=np.array([[0, -1], [1, 2]])), ValueError,
     r"edge_index\[0, 1\] = -1"),
    ("y float", lambda d: _with(d, y=d["y"].astype(np.float64)), TypeError, r"y must hold integer class ids"),
    ("y wrong length", lambda d: _with(d, y=d["y"][:-1]), ValueError, r"y must be \[num_nodes\] = \(40,\)"),
    ("y negative", lambda d: _with(d, y=np.where(np.arange(40) == 5, -1, d["y"])), ValueError,
     r"y\[5\] = -1 is not a class id.*leave them out of every split"),
    ("y over num_classes", lambda d: _with(d, num_classes=2, y=np.where(np.arange(40) == 7, 2, d["y"] % 2)), ValueError,
     r"y\[7\] = 2 is not a class id in \[0, num_classes = 2\)"),
    ("no train split", lambda d: _without(d, "train_idx"), ValueError, r"no train_mask or train_idx"),
    ("empty train split", lambda d: _with(d, train_idx=np.array([], np.int64)), ValueError,
     r"train_idx selects no node"),
    ("no valid split", lambda d: _without(d, "valid_idx"), ValueError, r"no val_mask or valid_idx.*select='last'"),
    ("mask not boolean", lambda d: _with(_without(d, "train_idx"), train_mask=np.ones(40, np.int64)), TypeError,
     r"train_mask must be boolean.*train_idx"),
    ("mask wrong shape", lambda d: _with(_without(d, "valid_idx"), val_mask=np.ones((40, 2), bool)), ValueError,
     r"val_mask must have shape \[num_nodes\] = \(40,\)"),
    ("mask and index", lambda d: _with(d, train_mask=np.ones(40, bool)), ValueError,
     r"give train_mask or train_idx, not both"),
    ("index out of range", lambda d: _with(d, test_idx=np.array([3, 40])), ValueError,
     r"test_idx\[1\] = 40 is not a node id"),
    ("index repeated", lambda d: _with(d, test_idx=np.array([39, 3, 39])), ValueError,
     r"test_idx lists node 39 more than once"),
    ("index float", lambda d: _with(d, test_idx=np.array([1.0, 2.0])), TypeError, r"test_idx must hold integer"),
    ("splits overlap", lambda d: _with(d, test_idx=np.array([int(d["train_idx"][0])])), ValueError,
     r"in both train_idx and test_idx"),
]


@pytest.mark.parametrize("case,mutate,error,pattern", BAD_DATA, ids=[c[0] for c in BAD_DATA])
def test_bad_graph_data_is_refused_naming_the_field(rng, case, mutate, error, pattern):
    data = small_graph(rng, n=40)
    with pytest.raises(error, match=pattern):
        ew.train(mutate(data), epochs=1)


def test_missing_or_empty_optional_splits(rng):
    data = small_graph(rng, n=40)
    r = ew.train(_without(data, "valid_idx", "test_idx"), epochs=3, select="last")
    assert len(r.history) == 3 and r.test_acc == 0.0
    with pytest.raises(ValueError, match="valid_idx"):  # patience needs the validation split too
        ew.train(_without(data, "valid_idx"), epochs=3, select="last", patience=2)
    r = ew.train(_with(data, test_idx=np.array([], np.int64)), epochs=2)
    assert r.test_acc == 0.0


def test_labels_as_a_column_and_given_num_classes(rng):
    data = small_graph(rng, n=40)
    r = ew.train(_with(data, y=data["y"][:, None], num_classes=5), epochs=2)
    assert r.logits.shape == (40, 5)


def test_bad_arguments(rng):
    with pytest.raises(TypeError, match="dataset must be a dataset name"):
        ew.train(42, epochs=1)
    with pytest.raises(TypeError, match="on_epoch must be callable"):
        ew.train(small_graph(rng, n=40), epochs=1, on_epoch="print")
    with pytest.raises(ValueError, match="select"):
        ew.train(small_graph(rng, n=40), epochs=1, select="best")


def test_on_epoch_sees_every_record_and_can_stop(rng):
    data = small_graph(rng, n=60)
    seen = []
    r = ew.train(data, epochs=6, on_epoch=lambda rec: seen.append(rec))
    assert seen == r.history and [s["epoch"] for s in seen] == list(range(1, 7))
    assert not r.stopped_early

    r = ew.train(data, epochs=50, on_epoch=lambda rec: rec["epoch"] < 3)
    assert [h["epoch"] for h in r.history] == [1, 2, 3]
    assert r.stopped_early and not r.interrupted
    assert r.logits.shape == (60, 3)


def test_on_epoch_exceptions_propagate(rng):
    class Boom(RuntimeError):
        pass

    def fail(rec):
        if rec["epoch"] == 2:
            raise Boom("from the callback")

    with pytest.raises(Boom, match="from the callback"):
        ew.train(small_graph(rng, n=40), epochs=10, on_epoch=fail)


def test_keyboard_interrupt_in_the_callback_returns_what_was_done(rng):
    def interrupt(rec):
        if rec["epoch"] == 3:
            raise KeyboardInterrupt

    r = ew.train(small_graph(rng, n=40), epochs=100, on_epoch=interrupt)
    assert r.interrupted and not r.stopped_early
    assert len(r.history) == 3 and r.logits.shape == (40, 3)


@pytest.fixture
def python_sigint_handler():
    # Background jobs may start with SIGINT ignored; the test needs Python's handler.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_sigint_raised_from_the_callback_stops_training(rng, python_sigint_handler):
    def ctrl_c(rec):
        if rec["epoch"] == 2:
            signal.raise_signal(signal.SIGINT)

    r = ew.train(small_graph(rng, n=40), epochs=100, on_epoch=ctrl_c)
    assert r.interrupted and len(r.history) == 2


def test_sigint_during_training_stops_it_promptly(rng, python_sigint_handler):
    # No Python callback: the engine checks for signals between epochs itself.
    data = small_graph(rng, n=40)
    for delay in (0.3, 1.5):  # a second try should a loaded machine deliver it before training starts
        sent = []

        def ctrl_c():
            sent.append(time.perf_counter())
            os.kill(os.getpid(), signal.SIGINT)

        timer = threading.Timer(delay, ctrl_c)
        timer.start()
        try:
            r = ew.train(data, epochs=10_000_000)
            break
        except KeyboardInterrupt:
            continue
        finally:
            timer.join()
    else:
        pytest.fail("SIGINT never arrived while training ran")
    returned = time.perf_counter()
    assert sent, "the signal was not sent"
    assert r.interrupted and 1 <= len(r.history) < 10_000_000
    assert returned - sent[0] < 5.0, "training did not stop promptly"


def test_progress_plain_lines_without_tqdm(rng, capsys, monkeypatch):
    monkeypatch.setattr(training, "_load_tqdm", lambda: None)
    ew.train(small_graph(rng, n=40), epochs=20, progress=True)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("epoch")]
    assert [line.split()[1] for line in lines] == ["1/20", "2/20", "4/20", "6/20", "8/20", "10/20", "12/20",
                                                    "14/20", "16/20", "18/20", "20/20"]
    assert "loss" in lines[0] and "ETA" in lines[0]


def test_progress_bar_with_tqdm(rng, capsys):
    pytest.importorskip("tqdm")
    seen = []
    ew.train(small_graph(rng, n=40), epochs=5, progress=True, on_epoch=seen.append)
    err = capsys.readouterr().err
    assert "5/5" in err and "in-memory" in err
    assert len(seen) == 5  # the bar and the callback both run


def test_cosine_lr_schedule_anneals_each_epochs_rate(rng):
    data = small_graph(rng, n=60)
    epochs, lr = 8, 0.02
    r = ew.train(data, epochs=epochs, lr=lr, lr_schedule="cosine")
    want = [lr * 0.5 * (1 + math.cos(math.pi * (e - 1) / epochs)) for e in range(1, epochs + 1)]
    assert [h["lr"] for h in r.history] == pytest.approx(want, rel=1e-6)
    constant = ew.train(data, epochs=epochs, lr=lr)
    assert [h["lr"] for h in constant.history] == pytest.approx([lr] * epochs)
    assert not np.array_equal(r.logits, constant.logits)


def test_an_unknown_lr_schedule_is_refused_before_loading(rng):
    with pytest.raises(ValueError, match="lr_schedule: unknown 'step'"):
        ew.train("no-such-dataset-file.npz", epochs=1, lr_schedule="step")
