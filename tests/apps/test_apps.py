"""Program-level checks of edgewise-train, edgewise-bench and minibatch_sage.

Bad flags exit with status 2 before any data is loaded, and stderr names the flag
and the value; unwritable output paths fail before training with the path named;
output files stay valid JSON / SVG whatever the dataset is called; NaN becomes null.
The programs come from $EDGEWISE_TRAIN, $EDGEWISE_BENCH, $EDGEWISE_MINIBATCH_SAGE
(set by ctest).
"""
import json
import os
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest

TRAIN = os.environ.get("EDGEWISE_TRAIN", "")
BENCH = os.environ.get("EDGEWISE_BENCH", "")
MINIBATCH = os.environ.get("EDGEWISE_MINIBATCH_SAGE", "")
HETERO_SAGE = os.environ.get("EDGEWISE_HETERO_SAGE", "")

# A fast run: a small synthetic graph, a couple of epochs, no progress lines.
FAST = ["--dataset", "synthetic", "--synthetic-nodes", "1000", "--epochs", "2", "--log-every", "0"]

needs_train = pytest.mark.skipif(not TRAIN, reason="edgewise-train not built ($EDGEWISE_TRAIN unset; run via ctest)")
needs_bench = pytest.mark.skipif(not BENCH, reason="edgewise-bench not built ($EDGEWISE_BENCH unset; run via ctest)")
needs_minibatch = pytest.mark.skipif(not MINIBATCH, reason="minibatch_sage not built ($EDGEWISE_MINIBATCH_SAGE unset)")
needs_hetero_sage = pytest.mark.skipif(not HETERO_SAGE, reason="hetero_sage not built ($EDGEWISE_HETERO_SAGE unset)")


def run(program, *args, cwd=None):
    return subprocess.run([program, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


# (flags, text stderr must hold). Each must fail with exit status 2 and print nothing on stdout
# (the dataset line would mean data was loaded first).
BAD_TRAIN_FLAGS = [
    (["--runs", "0"], "--runs: '0' is out of range (must be >= 1)"),
    (["--runs", "-1"], "--runs: '-1' is out of range"),
    (["--epochs", "1e3"], "--epochs: '1e3' is not an integer"),
    (["--epochs", "12x"], "--epochs: '12x' is not an integer"),
    (["--epochs", "0"], "--epochs: '0' is out of range"),
    (["--epochs=abc"], "--epochs: 'abc' is not an integer"),
    (["--epochs", "99999999999999999999"], "--epochs: '99999999999999999999' is out of the 64-bit integer range"),
    (["--lr", "0.01abc"], "--lr: '0.01abc' is not a number"),
    (["--lr", "abc"], "--lr: 'abc' is not a number"),
    (["--lr", "inf"], "--lr: 'inf' is out of range"),
    (["--lr", "nan"], "--lr: 'nan' is out of range"),
    (["--lr", "0"], "--lr: '0' is out of range"),
    (["--lr", "1e39"], "--lr: '1e39' is out of range"),  # finite as a double, not as a float
    (["--dropout", "1"], "--dropout: '1' is out of range"),
    (["--dropout", "-0.1"], "--dropout: '-0.1' is out of range"),
    (["--weight-decay", "-1"], "--weight-decay: '-1' is out of range"),
    (["--seed", "-1"], "--seed: '-1' is not a non-negative 64-bit integer"),
    (["--seed", "0x10"], "--seed: '0x10' is not a non-negative 64-bit integer"),
    (["--patience", "-1"], "--patience: '-1' is out of range (must be >= 0)"),
    (["--hidden", "0"], "--hidden: '0' is out of range"),
    (["--layers", "0"], "--layers: '0' is out of range"),
    (["--log-every", "-1"], "--log-every: '-1' is out of range"),
    (["--synthetic-nodes", "0"], "--synthetic-nodes: '0' is out of range"),
    (["--form", "typo"], "--form: 'typo' is not one of fused, materialized or auto"),
    (["--reorder", "random"], "--reorder: 'random' is not one of none, degree or rcm"),
    (["--model", "gatt"], "--model: 'gatt' is not one of"),
    (["--heads", "0"], "--heads: '0' is out of range"),
    (["--attention-dropout", "1"], "--attention-dropout: '1' is out of range"),
    (["--aggregation", "fast"], "--aggregation: 'fast' is not one of"),
    (["--optimizer", "adagrad"], "--optimizer: 'adagrad' is not one of"),
    (["--select", "best"], "--select: 'best' is not one of"),
    (["--features", "coo"], "--features: 'coo' is not one of"),
    (["--sage-aggr", "median"], "--sage-aggr: 'median' is not one of"),
    (["--nonfinite", "ignore"], "--nonfinite: 'ignore' is not one of"),
    (["--device", "tpu"], "--device: 'tpu' is not a device"),
    (["--device", "cuda:x"], "--device: 'cuda:x' is not a device"),
    (["--deterministic", "7"], "--deterministic: '7' is not a boolean (0, 1, true or false)"),
    (["--deterministic", "yes"], "--deterministic: 'yes' is not a boolean"),
    (["--normalize-features", "2"], "--normalize-features: '2' is not a boolean"),
    (["--no-such-flag", "1"], "--no-such-flag"),
    (["stray"], "stray"),
    (["--epochs"], "--epochs"),
    (["--json", "--epochs", "3"], "--json: needs a value, got the flag '--epochs'"),
    (["--json", "/nonexistent_edgewise_dir/a.json"], "--json: cannot write '/nonexistent_edgewise_dir/a.json'"),
    (["--metrics", "/nonexistent_edgewise_dir/m.csv"], "--metrics: cannot write '/nonexistent_edgewise_dir/m.csv'"),
    (["--plot", "/nonexistent_edgewise_dir/p.svg"], "--plot: cannot write '/nonexistent_edgewise_dir/p.svg'"),
    (["--checkpoint", "/nonexistent_edgewise_dir/c.npz"], "--checkpoint: cannot write '/nonexistent_edgewise_dir/c.npz'"),
    (["--checkpoint-every", "-1"], "--checkpoint-every: '-1' is out of range"),
    (["--resume", "/nonexistent_edgewise_dir/c.npz"], "--resume"),
    (["--checkpoint-every", "5"], "--checkpoint-every needs --checkpoint FILE"),
    (["--checkpoint", "/tmp/edgewise_c.npz", "--runs", "2"], "--checkpoint / --resume hold one run"),
    # Sizes that would only exhaust memory after loading, and spec strings parsed whole.
    (["--model", "gat", "--heads", "4294967297"], "--heads: '4294967297' is out of range (must be >= 1 and <= 256)"),
    (["--model", "gat", "--output-heads", "100000"], "--output-heads: '100000' is out of range"),
    (["--hidden", "100000000"], "--hidden: '100000000' is out of range"),
    (["--dataset", "rmat:100:1e3:4"], "--dataset: dataset: 'rmat:100:1e3:4' is not rmat:N:E:F[:K] ('1e3'"),
    (["--dataset", "rmat:5x:10:2"], "'5x' is not a whole integer"),
    (["--dataset", "rmat:100:10"], "must be rmat:N:E:F[:K] (got 2 numbers)"),
    # Flags that would be ignored are refused, naming the flag.
    (["--model", "gcn", "--heads", "4"], "--heads applies to --model gat only (got gcn)"),
    (["--model", "gat", "--sage-aggr", "max"], "--sage-aggr applies to --model sage only (got gat)"),
    (["--task", "link", "--reorder", "rcm"], "--reorder is not supported with --task link"),
    (["--synthetic-nodes", "500"], "--synthetic-nodes applies to --dataset synthetic"),
    (["--dataset", "synthetic", "--undirected"], "--undirected applies to datasets read from files"),
    (["--dataset", "rmat:100:1000:4", "--self-loops", "remove"], "--self-loops applies to datasets read from files"),
    (["--undirected", "2"], "--undirected: '2' is not a boolean"),
    (["--self-loops", "drop"], "--self-loops: 'drop' is not one of keep or remove"),
    # --sampled (GraphSAGE on sampled neighbourhoods)
    (["--sampled", "15,x"], "--sampled: expected neighbours per hop like 15,10,5"),
    (["--sampled", "15,-2"], "--sampled: expected neighbours per hop"),
    (["--sampled", "15,"], "--sampled: expected neighbours per hop"),
    (["--sampled", ""], "--sampled"),
    (["--sampled", "10", "--model", "gcn"], "--sampled trains GraphSAGE (--model sage), not --model gcn"),
    (["--sampled", "10,5", "--layers", "3"], "--layers 3 differs from the 2 hops of --sampled"),
    (["--sampled", "10", "--task", "link"], "--sampled applies to --task node only (got link)"),
    (["--sampled", "10", "--form", "fused"], "--form applies to full-batch training, not --sampled"),
    (["--sampled", "10", "--sampler-threads", "0"], "--sampler-threads: '0' is out of range"),
    (["--sampler-threads", "2"], "--sampler-threads needs --sampled"),
    (["--batch-size", "64"], "--batch-size needs --task graph or --sampled"),
]


@needs_train
@pytest.mark.parametrize("flags,message", BAD_TRAIN_FLAGS, ids=[" ".join(f) for f, _ in BAD_TRAIN_FLAGS])
def test_train_rejects_bad_flags_before_loading(flags, message):
    # The dataset is a missing file: had the flags been accepted, loading it would fail with status 1.
    proc = run(TRAIN, "--dataset", "/nonexistent_edgewise_dir/data.npz", *flags)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert message in proc.stderr, proc.stderr
    assert proc.stderr.startswith("edgewise-train: error: "), proc.stderr
    assert proc.stdout == ""


@needs_train
def test_train_help_exits_zero_and_lists_every_flag():
    proc = run(TRAIN, "--help")
    assert proc.returncode == 0, proc.stderr
    for flag in ["--dataset", "--data-dir", "--model", "--layers", "--hidden", "--dropout", "--lr", "--weight-decay",
                 "--optimizer", "--epochs", "--patience", "--select", "--seed", "--runs", "--device", "--aggregation",
                 "--form", "--features", "--normalize-features", "--sage-aggr", "--deterministic", "--nonfinite",
                 "--log-every", "--json", "--metrics", "--plot", "--synthetic-nodes", "--checkpoint",
                 "--checkpoint-every", "--resume", "--heads", "--output-heads", "--attention-dropout", "--task",
                 "--hits-k", "--reorder", "--sampled", "--sampler-threads"]:
        assert flag in proc.stdout, flag


@needs_train
def test_train_accepts_equals_form_and_every_value_type(tmp_path):
    out = tmp_path / "run.json"
    proc = run(TRAIN, *FAST, "--epochs=3", "--runs=2", "--lr=5e-3", "--dropout", "0", "--seed", "18446744073709551615",
               "--deterministic=true", "--normalize-features", "false", "--model", "sage", "--form=materialized",
               "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result["runs"] == 2 and len(result["test_acc"]) == 2
    assert result["form"] == "materialized"
    # A boolean flag alone means 1, before another flag and at the end.
    proc = run(TRAIN, *FAST, "--deterministic", "--json", str(out), "--normalize-features")
    assert proc.returncode == 0, proc.stderr


@needs_train
def test_an_existing_output_file_survives_a_failed_run(tmp_path):
    kept = tmp_path / "kept.json"
    kept.write_text("precious")
    proc = run(TRAIN, "--json", str(kept), "--epochs", "12x")
    assert proc.returncode == 2
    assert kept.read_text() == "precious"
    fresh = tmp_path / "fresh.json"
    proc = run(TRAIN, "--json", str(fresh), "--epochs", "12x")
    assert proc.returncode == 2
    assert not fresh.exists(), "the writability probe must not leave a file behind"


def write_dataset(path):
    """A small two-community graph in the OGB npz layout."""
    rng = np.random.default_rng(0)
    n = 40
    labels = np.arange(n) % 2
    src, dst = [], []
    for u in range(n):
        for v in range(u + 1, n):
            if (labels[u] == labels[v] and rng.random() < 0.3) or rng.random() < 0.02:
                src += [u, v]
                dst += [v, u]
    feat = rng.random((n, 8)).astype(np.float32)
    feat[:, 0] += labels
    np.savez(path, num_nodes=np.array(n, dtype=np.int64), edge_index=np.array([src, dst], dtype=np.int64),
             node_feat=feat, node_label=labels.astype(np.int64), train_idx=np.arange(0, 10, dtype=np.int64),
             valid_idx=np.arange(10, 20, dtype=np.int64), test_idx=np.arange(20, 40, dtype=np.int64))


@needs_train
@pytest.mark.parametrize("name", ['we"ird', "R&D", "<tag>", "it's"])
def test_outputs_stay_valid_json_and_svg_for_any_dataset_name(tmp_path, name):
    data = tmp_path / f"{name}.npz"
    write_dataset(data)
    out, metrics, plot = tmp_path / "run.json", tmp_path / "m.json", tmp_path / "curves.svg"
    proc = run(TRAIN, "--dataset", str(data), "--epochs", "3", "--log-every", "0", "--json", str(out), "--metrics",
               str(metrics), "--plot", str(plot))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["dataset"] == name
    assert len(json.loads(metrics.read_text())["history"]) == 3
    title = ET.parse(plot).getroot().find("{http://www.w3.org/2000/svg}text").text
    assert title.startswith(name), title


@needs_train
def test_a_diverging_run_stops_with_the_epoch_or_warns_and_writes_null(tmp_path):
    proc = run(TRAIN, *FAST, "--epochs", "4", "--lr", "1e30")
    assert proc.returncode == 1, proc.stderr
    assert "the training loss is" in proc.stderr and "at epoch " in proc.stderr, proc.stderr
    metrics, out = tmp_path / "m.json", tmp_path / "run.json"
    proc = run(TRAIN, *FAST, "--epochs", "4", "--lr", "1e30", "--nonfinite", "warn", "--metrics", str(metrics),
               "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "warning: the training loss is" in proc.stderr
    history = json.loads(metrics.read_text())["history"]
    assert any(h["loss"] is None for h in history), history
    assert "NaN" not in metrics.read_text() and "nan" not in metrics.read_text()
    json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))


@needs_train
def test_csv_metrics_and_summary_before_files(tmp_path):
    metrics = tmp_path / "m.csv"
    proc = run(TRAIN, *FAST, "--metrics", str(metrics))
    assert proc.returncode == 0, proc.stderr
    assert metrics.read_text().splitlines()[0] == "epoch,loss,train_acc,valid_acc,valid_loss,test_acc,lr,epoch_ms"
    summary = proc.stdout.index("test accuracy")
    assert summary < proc.stdout.index("per-epoch metrics:")


@needs_train
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (writes fail with ENOSPC)")
@pytest.mark.parametrize("flag", ["--json", "--metrics", "--plot"])
def test_a_failed_write_exits_1_naming_the_path_after_the_summary(flag):
    proc = run(TRAIN, *FAST, flag, "/dev/full")
    assert proc.returncode == 1
    assert "writing '/dev/full' failed" in proc.stderr, proc.stderr
    assert "test accuracy" in proc.stdout, "the summary comes before any file is written"


@needs_bench
def test_bench_writes_json_and_a_failed_write_exits_1_naming_the_path(tmp_path):
    # A filter that selects no case: no timing, just the (empty) records file.
    out = tmp_path / "b.json"
    proc = run(BENCH, "--filter", "^no_such_case$", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text()) == []
    if os.path.exists("/dev/full"):
        proc = run(BENCH, "--filter", "^no_such_case$", "--json", "/dev/full")
        assert proc.returncode == 1
        assert "writing '/dev/full' failed" in proc.stderr, proc.stderr


@needs_train
def test_a_dataset_without_test_nodes_is_an_error_not_zero_accuracy():
    proc = run(TRAIN, *FAST, "--synthetic-nodes", "300")  # 140 train, 160 valid, 0 test
    assert proc.returncode == 1
    assert "no test nodes (test_idx is missing or empty); use more --synthetic-nodes" in proc.stderr, proc.stderr


@needs_train
def test_a_bad_dataset_fails_with_status_1_naming_the_key(tmp_path):
    data = tmp_path / "bad.npz"
    write_dataset(data)
    arrays = dict(np.load(data))
    arrays["node_feat"][3, 2] = np.nan
    np.savez(data, **arrays)
    proc = run(TRAIN, "--dataset", str(data), "--epochs", "2")
    assert proc.returncode == 1
    assert "node_feat" in proc.stderr and "[3, 2]" in proc.stderr, proc.stderr


@needs_train
def test_train_reads_a_gnn_benchmark_file_and_says_the_split_is_made_up(tmp_path):
    rng = np.random.default_rng(0)
    n = 200
    rows = np.repeat(np.arange(n), 2)
    cols = np.stack([(np.arange(n) + 1) % n, (np.arange(n) - 1) % n], axis=1).ravel()  # a ring
    data = tmp_path / "bench.npz"
    np.savez(data, adj_data=np.ones(2 * n, np.float32), adj_indices=cols, adj_indptr=np.arange(0, 2 * n + 1, 2),
             adj_shape=np.array([n, n]), attr_matrix=rng.random((n, 8), dtype=np.float32),
             labels=rng.integers(0, 3, n), node_names=np.array([f"v{i}" for i in range(n)]))
    proc = run(TRAIN, "--dataset", str(data), "--epochs", "2")
    assert proc.returncode == 0, proc.stderr
    assert "no split in the file: a random one" in proc.stdout and "node_names" in proc.stdout, proc.stdout
    assert "splits 60/90/50" in proc.stdout, proc.stdout
    # gnn-benchmark's convention (Shchur et al., PyG): undirected, said on the description line.
    assert "400 stored edges \u2192 400 directed edges after symmetrising" in proc.stdout, proc.stdout
    one_way = tmp_path / "one_way.npz"
    np.savez(one_way, adj_data=np.ones(n, np.float32), adj_indices=(np.arange(n) + 1) % n,
             adj_indptr=np.arange(n + 1), adj_shape=np.array([n, n]), labels=rng.integers(0, 3, n))
    proc = run(TRAIN, "--dataset", str(one_way), "--epochs", "1", "--log-every", "0")
    assert proc.returncode == 0 and "200 stored edges \u2192 400 directed edges" in proc.stdout, proc.stdout + proc.stderr
    proc = run(TRAIN, "--dataset", str(one_way), "--epochs", "1", "--log-every", "0", "--undirected", "0")
    assert proc.returncode == 0 and "200 edges as stored (directed: 200 edges without its reverse" in proc.stdout, (
        proc.stdout + proc.stderr)


@needs_train
def test_link_prediction_needs_no_labels(tmp_path):
    edges = tmp_path / "ring.csv"
    n = 60
    edges.write_text("".join(f"{i},{(i + 1) % n}\n{(i + 1) % n},{i}\n{i},{(i + 7) % n}\n" for i in range(n)))
    proc = run(TRAIN, "--task", "link", "--dataset", str(edges), "--epochs", "2", "--log-every", "0")
    assert proc.returncode == 0, proc.stderr
    assert "test AUC" in proc.stdout, proc.stdout


@needs_train
def test_resume_refuses_another_dataset_other_settings_and_non_finite_parameters(tmp_path):
    ckpt = tmp_path / "run.npz"
    synthetic = ["--dataset", "synthetic", "--synthetic-nodes", "1000", "--log-every", "0"]
    proc = run(TRAIN, *synthetic, "--epochs", "2", "--checkpoint", str(ckpt))
    assert proc.returncode == 0, proc.stderr
    other = tmp_path / "other.npz"
    write_dataset(other)
    proc = run(TRAIN, "--dataset", str(other), "--epochs", "4", "--resume", str(ckpt), "--log-every", "0")
    assert proc.returncode == 1, proc.stdout
    assert "was written with --dataset synthetic:1000, this run has --dataset file" in proc.stderr, proc.stderr
    proc = run(TRAIN, *synthetic, "--epochs", "4", "--lr", "0.02", "--resume", str(ckpt))
    assert proc.returncode == 1 and "was written with --lr 0.01, this run has --lr 0.02" in proc.stderr, proc.stderr
    arrays = dict(np.load(ckpt))
    key = sorted(k for k in arrays if k.startswith("model."))[0]
    arrays[key] = arrays[key].copy()
    arrays[key].flat[1] = np.nan
    np.savez(ckpt, **arrays)
    proc = run(TRAIN, *synthetic, "--epochs", "4", "--resume", str(ckpt))
    assert proc.returncode == 1, proc.stdout
    assert f"key '{key}' holds a non-finite value (nan)" in proc.stderr, proc.stderr


@needs_train
def test_train_on_an_edge_list_without_labels_says_why_there_are_no_test_nodes(tmp_path):
    edges = tmp_path / "edges.csv"
    edges.write_text("src,dst\n0,1\n1,2\n")
    proc = run(TRAIN, "--dataset", str(edges), "--epochs", "2")
    assert proc.returncode == 1
    assert "no test nodes" in proc.stderr and "no labels" in proc.stderr, proc.stderr


BAD_BENCH_FLAGS = [
    (["--json", "/nonexistent_edgewise_dir/b.json"], "--json: cannot write '/nonexistent_edgewise_dir/b.json'"),
    (["--filter", "("], "--filter: '(' is not a regular expression"),
    (["--device", "gpu"], "--device: 'gpu' is not one of cpu, cuda or all"),
    (["--runs", "3"], "--runs"),
    (["--json"], "--json"),
]


@needs_bench
@pytest.mark.parametrize("flags,message", BAD_BENCH_FLAGS, ids=[" ".join(f) for f, _ in BAD_BENCH_FLAGS])
def test_bench_rejects_bad_flags_before_running(flags, message):
    proc = run(BENCH, *flags)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert message in proc.stderr, proc.stderr
    assert proc.stdout == ""


@needs_bench
def test_bench_help_and_list():
    assert run(BENCH, "--help").returncode == 0
    proc = run(BENCH, "--list", "--filter=^segment_reduce/sum", "--device", "cpu")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout and all(line.startswith("segment_reduce/sum") for line in proc.stdout.splitlines())


BAD_MINIBATCH_FLAGS = [
    (["--epochs", "0"], "--epochs: '0' is out of range"),
    (["--batch", "12x"], "--batch: '12x' is not an integer"),
    (["--fanouts", "10,x"], "--fanouts: 'x' in '10,x' is not a fanout"),
    (["--fanouts", "10,"], "--fanouts"),
    (["--seeds", "random"], "--seeds: 'random' is not one of shuffle or loss"),
    (["--lr", "-1"], "--lr: '-1' is out of range"),
    (["cora"], "cora"),  # the old positional form is gone: say so rather than guess
]


@needs_minibatch
@pytest.mark.parametrize("flags,message", BAD_MINIBATCH_FLAGS, ids=[" ".join(f) for f, _ in BAD_MINIBATCH_FLAGS])
def test_minibatch_sage_rejects_bad_flags(flags, message):
    proc = run(MINIBATCH, *flags)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert message in proc.stderr, proc.stderr


@needs_minibatch
def test_minibatch_sage_runs_and_stops_on_a_diverging_loss():
    proc = run(MINIBATCH, "--dataset", "synthetic", "--epochs", "1", "--batch", "256")
    assert proc.returncode == 0, proc.stderr
    proc = run(MINIBATCH, "--dataset", "synthetic", "--epochs", "2", "--batch", "256", "--lr", "1e30")
    assert proc.returncode == 1
    assert "MiniBatchTrainer: the training loss is" in proc.stderr, proc.stderr


@needs_hetero_sage
def test_hetero_sage_example_learns_and_rejects_bad_arguments():
    proc = run(HETERO_SAGE, "1000")
    assert proc.returncode == 0, proc.stderr
    accuracy = float(proc.stdout.strip().splitlines()[-1].split()[-1])
    assert accuracy > 0.5, proc.stdout  # 8 planted classes: chance is 0.125
    for bad in (["abc"], ["50"], ["2000", "3"]):
        proc = run(HETERO_SAGE, *bad)
        assert proc.returncode == 2 and "error:" in proc.stderr and not proc.stdout, (bad, proc.stderr)


@needs_train
def test_resume_continues_to_the_uninterrupted_result_bit_for_bit(tmp_path):
    common = ["--dataset", "synthetic", "--synthetic-nodes", "1000", "--log-every", "0", "--seed", "3"]
    whole, part, resumed = tmp_path / "whole.json", tmp_path / "part.json", tmp_path / "resumed.json"
    ckpt = tmp_path / "run.npz"
    proc = run(TRAIN, *common, "--epochs", "12", "--metrics", str(whole))
    assert proc.returncode == 0, proc.stderr
    proc = run(TRAIN, *common, "--epochs", "5", "--checkpoint", str(ckpt), "--checkpoint-every", "2",
               "--metrics", str(part))
    assert proc.returncode == 0, proc.stderr
    assert np.load(ckpt)["trainer.epoch"] == 5
    proc = run(TRAIN, *common, "--epochs", "12", "--resume", str(ckpt), "--metrics", str(resumed))
    assert proc.returncode == 0, proc.stderr
    strip = lambda rows: [{k: v for k, v in r.items() if k != "epoch_ms"} for r in rows]
    a, b = json.loads(whole.read_text()), json.loads(resumed.read_text())
    assert strip(a["history"]) == strip(b["history"])
    assert a["test_acc"] == b["test_acc"] and a["best_epoch"] == b["best_epoch"]


@needs_train
def test_gat_trains_with_the_paper_recipe_where_flags_are_open(tmp_path):
    out = tmp_path / "gat.json"
    proc = run(TRAIN, "--dataset", "synthetic", "--synthetic-nodes", "1000", "--model", "gat", "--epochs", "3",
               "--log-every", "0", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "8 heads" in proc.stdout or "heads" in proc.stdout.lower(), proc.stdout
    assert json.loads(out.read_text())["model"] == "gat"


# ---- edgewise-train --task link ----

LINK_FAST = ["--task", "link", "--dataset", "synthetic", "--synthetic-nodes", "300", "--epochs", "5",
             "--log-every", "0"]

BAD_LINK_FLAGS = [
    (["--task", "edges"], "--task: 'edges' is not one of"),
    (["--task", "link", "--hits-k", "0"], "--hits-k: '0' is out of range"),
    (["--task", "link", "--hits-k", "ten"], "--hits-k: 'ten' is not an integer"),
    (["--task", "link", "--model", "sage"], "--task link supports --model gcn only (got sage)"),
    (["--task", "link", "--lr-schedule", "step"], "--lr-schedule: 'step' is not one of constant or cosine"),
    (["--task", "link", "--aggregation", "scatter"], "--aggregation is not supported with --task link"),
    (["--hits-k", "10"], "--hits-k needs --task link"),
]


@needs_train
@pytest.mark.parametrize("flags,message", BAD_LINK_FLAGS, ids=[" ".join(f) for f, _ in BAD_LINK_FLAGS])
def test_train_link_rejects_bad_flags_before_loading(flags, message):
    proc = run(TRAIN, "--dataset", "/nonexistent_edgewise_dir/data.npz", *flags)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert message in proc.stderr, proc.stderr
    assert proc.stdout == ""


@needs_train
def test_train_link_reports_auc_and_hits_in_text_and_json(tmp_path):
    out = tmp_path / "link.json"
    proc = run(TRAIN, *LINK_FAST, "--runs", "2", "--hits-k", "10", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "test AUC" in proc.stdout and "Hits@10" in proc.stdout, proc.stdout
    result = json.loads(out.read_text())
    for key in ["test_auc_mean", "test_auc_std", "test_hits_at_k"]:
        assert key in result, key
    assert result["task"] == "link" and result["runs"] == 2 and result["hits_k"] == 10
    assert len(result["test_auc"]) == 2 and all(0 <= a <= 1 for a in result["test_auc"])
    assert 0 <= result["test_hits_at_k"] <= 1 and result["test_auc_std"] >= 0
    # Seeded: the same flags give the same numbers.
    again = tmp_path / "again.json"
    assert run(TRAIN, *LINK_FAST, "--runs", "2", "--hits-k", "10", "--json", str(again)).returncode == 0
    assert json.loads(again.read_text())["test_auc"] == result["test_auc"]


@needs_train
def test_train_link_without_a_dataset_runs_on_the_synthetic_graph(tmp_path):
    env = dict(os.environ, EDGEWISE_DATA_DIR=str(tmp_path))  # no cora.npz there
    proc = subprocess.run([TRAIN, "--task", "link", "--synthetic-nodes", "300", "--epochs", "3", "--log-every", "1"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "planted_partition" in proc.stdout or "synthetic" in proc.stdout, proc.stdout
    assert "epoch    3/3" in proc.stdout and "valid auc" in proc.stdout, proc.stdout


# --task graph: graph classification (GIN, k-fold) on the synthetic graph collection.
GRAPH_FAST = ["--task", "graph", "--dataset", "synthetic", "--epochs", "2", "--log-every", "0"]


@needs_train
def test_graph_task_writes_the_fold_metrics_and_the_fold_assignment(tmp_path):
    out, folds = tmp_path / "graph.json", tmp_path / "folds.txt"
    proc = run(TRAIN, *GRAPH_FAST, "--folds", "0,3", "--batch-size", "64", "--json", str(out), "--save-folds",
               str(folds))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result["task"] == "graph" and result["model"] == "gin" and result["num_folds"] == 10
    assert result["threads"] == 1  # the graph task's default
    assert [f["fold"] for f in result["folds"]] == [0, 3]
    assert len(result["test_acc"]) == 2
    assert result["test_acc_mean"] == pytest.approx(np.mean(result["test_acc"]))
    assert result["test_acc_std"] == pytest.approx(np.std(result["test_acc"], ddof=1))
    for fold in result["folds"]:
        assert {"test_acc", "valid_acc", "best_epoch", "epoch_ms_median", "graphs_per_second"} <= fold.keys()
    assigned = np.loadtxt(folds, dtype=np.int64)
    assert len(assigned) == result["num_graphs"] and set(assigned.tolist()) == set(range(10))
    assert "fold 3:" in proc.stdout


@needs_train
def test_graph_task_reads_a_tu_folder(tmp_path):
    folder = tmp_path / "TOY"
    folder.mkdir()
    # 12 graphs: triangles (label 1) and paths of 3 nodes (label 2), 36 nodes.
    edges, indicator, labels = [], [], []
    for g in range(12):
        base = 3 * g
        pairs = [(0, 1), (1, 2), (2, 0)] if g % 2 == 0 else [(0, 1), (1, 2)]
        for u, v in pairs:
            edges += [f"{base + u + 1}, {base + v + 1}", f"{base + v + 1}, {base + u + 1}"]
        indicator += [str(g + 1)] * 3
        labels.append("1" if g % 2 == 0 else "2")
    (folder / "TOY_A.txt").write_text("\n".join(edges) + "\n")
    (folder / "TOY_graph_indicator.txt").write_text("\n".join(indicator) + "\n")
    (folder / "TOY_graph_labels.txt").write_text("\n".join(labels) + "\n")
    out = tmp_path / "tu.json"
    proc = run(TRAIN, "--task", "graph", "--dataset", str(folder), "--epochs", "2", "--num-folds", "3", "--folds",
               "all", "--batch-size", "4", "--log-every", "0", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result["dataset"] == "TOY" and result["num_graphs"] == 12 and len(result["folds"]) == 3


@needs_train
def test_graph_task_names_the_bad_line_of_a_tu_file(tmp_path):
    (tmp_path / "BAD_A.txt").write_text("1, 2\n2, 9\n")
    (tmp_path / "BAD_graph_indicator.txt").write_text("1\n1\n")
    (tmp_path / "BAD_graph_labels.txt").write_text("0\n")
    proc = run(TRAIN, "--task", "graph", "--dataset", str(tmp_path / "BAD"))
    assert proc.returncode == 1
    assert "BAD_A.txt' line 2: node id 9 is outside [1, 2]" in proc.stderr


BAD_GRAPH_FLAGS = [
    (["--task", "graph", "--folds", "1,x"], "--folds: expected distinct fold ids"),
    (["--task", "graph", "--folds", "1,1"], "--folds: expected distinct fold ids"),
    (["--task", "graph", "--folds", "10"], "--folds: fold 10 is outside [0, 10)"),
    (["--task", "graph", "--num-folds", "2"], "--num-folds: '2' is out of range"),
    (["--task", "graph", "--batch-size", "0"], "--batch-size: '0' is out of range"),
    (["--task", "graph", "--pooling", "avg"], "--pooling: 'avg' is not one of"),
    (["--task", "graph", "--batch-norm", "maybe"], "--batch-norm"),
    (["--task", "graph", "--runs", "2"], "--runs does not apply to --task graph"),
    (["--task", "graph", "--model", "gcn"], "--model gcn: --task graph trains gin only"),
    (["--task", "tree"], "--task: 'tree' is not one of"),
    (["--task", "graph", "--threads", "-1"], "--threads: '-1' is out of range"),
    (["--threads", "2"], "--threads needs --task graph"),
    (["--folds", "0"], "--folds needs --task graph"),
    (["--batch-size", "8"], "--batch-size needs --task graph"),
    (["--task", "graph", "--threads", "100000"], "--threads: '100000' is out of range (must be >= 0 and <= 1024)"),
    (["--task", "graph", "--threads", "4294967297"], "--threads: '4294967297' is out of range"),
    (["--task", "graph", "--reorder", "rcm"], "--reorder does not apply to --task graph"),
    (["--task", "graph", "--undirected", "1"], "--undirected does not apply to --task graph"),
]


@needs_train
@pytest.mark.parametrize("flags,message", BAD_GRAPH_FLAGS, ids=[" ".join(f) for f, _ in BAD_GRAPH_FLAGS])
def test_graph_task_rejects_bad_flags_before_loading(flags, message):
    proc = run(TRAIN, *flags)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert proc.stdout == ""


# Every task runs the one epoch loop: each resumes bit for bit and takes the learning-rate
# schedule, metric files and checkpoints (refused for --task link / graph before).
TASK_FLAGS = {
    "node": ["--dataset", "synthetic", "--synthetic-nodes", "1000"],
    "link": ["--task", "link", "--dataset", "synthetic", "--synthetic-nodes", "600", "--hidden", "32"],
    "graph": ["--task", "graph", "--dataset", "synthetic", "--folds", "0", "--hidden", "16", "--layers", "2"],
}


@needs_train
@pytest.mark.parametrize("task", sorted(TASK_FLAGS))
def test_every_task_resumes_bit_for_bit_and_follows_the_lr_schedule(tmp_path, task):
    common = [*TASK_FLAGS[task], "--lr", "0.02", "--log-every", "0", "--seed", "5"]
    whole, resumed, ckpt = tmp_path / "whole.json", tmp_path / "resumed.json", tmp_path / "run.npz"
    proc = run(TRAIN, *common, "--epochs", "6", "--metrics", str(whole))
    assert proc.returncode == 0, proc.stderr
    proc = run(TRAIN, *common, "--epochs", "3", "--checkpoint", str(ckpt))
    assert proc.returncode == 0, proc.stderr
    proc = run(TRAIN, *common, "--epochs", "6", "--resume", str(ckpt), "--metrics", str(resumed))
    assert proc.returncode == 0, proc.stderr
    strip = lambda rows: [{k: v for k, v in r.items() if k != "epoch_ms"} for r in rows]
    a, b = json.loads(whole.read_text()), json.loads(resumed.read_text())
    assert strip(a["history"]) == strip(b["history"])
    assert a["best"] == b["best"] and a["best_epoch"] == b["best_epoch"]
    # The cosine schedule, from --lr down to 0 after the last epoch.
    cosine = tmp_path / "cosine.json"
    proc = run(TRAIN, *common, "--epochs", "6", "--lr-schedule", "cosine", "--metrics", str(cosine),
               "--checkpoint", str(ckpt))
    assert proc.returncode == 0, proc.stderr
    lrs = [r["lr"] for r in json.loads(cosine.read_text())["history"]]
    np.testing.assert_allclose(lrs, [0.02 * (1 + np.cos(np.pi * (e - 1) / 6)) / 2 for e in range(1, 7)], rtol=1e-6)
    # Its horizon is --epochs: extending a cosine run would change the epochs already run.
    proc = run(TRAIN, *common, "--epochs", "9", "--lr-schedule", "cosine", "--resume", str(ckpt))
    assert proc.returncode == 1 and "--epochs 6, this run has --epochs 9" in proc.stderr, proc.stderr
    proc = run(TRAIN, *common, "--epochs", "6", "--resume", str(ckpt))
    assert proc.returncode == 1 and "--lr-schedule cosine, this run has --lr-schedule constant" in proc.stderr, (
        proc.stderr)


@needs_train
def test_train_sampled_trains_graphsage_on_the_pipeline(tmp_path):
    out = tmp_path / "sampled.json"
    proc = run(TRAIN, "--dataset", "synthetic", "--sampled", "10,5", "--batch-size", "32", "--hidden", "32",
               "--epochs", "30", "--sampler-threads", "2", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "sampled: 10,5 neighbours per hop, 32 seeds per batch, 2 sampling thread(s)" in proc.stdout
    record = json.loads(out.read_text())
    assert record["sampled"] == "10,5" and record["model"] == "graphsage"
    assert record["test_acc_mean"] > 0.5, record  # chance is 1/7
