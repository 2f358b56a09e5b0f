"""edgewise-train --distributed under mpirun equals the single-process run.

Runs the single process, then 2 ranks partitioning in memory, then 3 ranks loading
the parts edgewise-partition wrote, and compares the per-epoch losses (1e-5
relative) and accuracies; checks that bad flag combinations name the flag.
Usage: train_distributed_matches.py TRAIN PARTITION MPIEXEC WORKDIR
"""
import csv
import json
import os
import subprocess
import sys

train, partition, mpiexec, workdir = sys.argv[1:5]
os.makedirs(workdir, exist_ok=True)
training = ["--epochs", "15", "--log-every", "0", "--seed", "4"]
common = ["--dataset", "synthetic", "--synthetic-nodes", "2000", *training]
mpi = [mpiexec, "--oversubscribe", "-np"]
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")


def run(args, expect=0):
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=240)
    if p.returncode != expect if expect == 0 else p.returncode == 0:
        sys.exit(f"FAILED: {' '.join(args)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def history(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def compare(reference, other, what):
    a, b = history(reference), history(other)
    if len(a) != len(b):
        sys.exit(f"FAILED: {what}: {len(b)} epochs, single process {len(a)}")
    for x, y in zip(a, b):
        la, lb = float(x["loss"]), float(y["loss"])
        if abs(la - lb) > 1e-5 * abs(la):
            sys.exit(f"FAILED: {what}: epoch {x['epoch']} loss {lb}, single process {la}")
        for key in ("train_acc", "valid_acc", "test_acc"):
            if x[key] != y[key]:
                sys.exit(f"FAILED: {what}: epoch {x['epoch']} {key} {y[key]}, single process {x[key]}")
    print(f"{what}: {len(a)} epochs equal the single process")


for model in ("gcn", "sage"):
    single = os.path.join(workdir, f"single_{model}.csv")
    run([train, *common, "--model", model, "--metrics", single])
    two = os.path.join(workdir, f"np2_{model}.csv")
    run([*mpi, "2", train, "--distributed", "1", *common, "--model", model, "--metrics", two])
    compare(single, two, f"{model}, 2 ranks, partitioned in memory")
    parts = os.path.join(workdir, "parts3")
    run([partition, "--dataset", "synthetic", "--synthetic-nodes", "2000", "--parts", "3", "--out", parts])
    three = os.path.join(workdir, f"np3_{model}.csv")
    run([*mpi, "3", train, "--distributed", "1", *training, "--model", model, "--parts-dir", parts, "--metrics", three])
    compare(single, three, f"{model}, 3 ranks, parts from edgewise-partition")

p = run([train, "--parts-dir", workdir], expect=2)
assert p.returncode == 2 and "--parts-dir" in p.stderr, p.stderr
p = run([*mpi, "2", train, "--distributed", "1", *training, "--parts-dir", os.path.join(workdir, "parts3")], expect=1)
assert "--parts-dir" in p.stdout + p.stderr and "rank" in p.stdout + p.stderr, p.stdout + p.stderr
p = run([partition, "--dataset", "synthetic", "--parts", "0", "--out", workdir], expect=2)
assert "--parts" in p.stderr, p.stderr
# The parts were built from a dataset: naming one again is an error, not ignored.
p = run([*mpi, "2", train, "--distributed", *common, "--parts-dir", os.path.join(workdir, "parts3")], expect=2)
assert "--dataset does not apply to --parts-dir" in p.stdout + p.stderr, p.stdout + p.stderr
# A boolean flag alone means 1, and the JSON has the single-process keys plus the distributed ones.
out = os.path.join(workdir, "np2.json")
run([*mpi, "2", train, "--distributed", *common, "--json", out])
with open(out) as f:
    record = json.load(f)
single_json = os.path.join(workdir, "single.json")
run([train, *common, "--json", single_json])
with open(single_json) as f:
    single_record = json.load(f)
missing = set(single_record) - set(record) - {"peak_training_memory_mb"}
assert not missing, f"distributed --json lacks {sorted(missing)}"
assert record["ranks"] == 2 and "halo_bytes_per_epoch" in record and record["runs"] == 1, record
assert record["test_acc_mean"] == record["test_acc"][0] and record["test_acc_std"] == 0, record
# --out is checked before the dataset is loaded.
blocker = os.path.join(workdir, "a_file")
open(blocker, "w").close()
p = run([partition, "--dataset", "synthetic", "--parts", "2", "--out", os.path.join(blocker, "sub")], expect=2)
assert "--out" in p.stderr and "not a directory" in p.stderr, p.stderr
print("ok")
