#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`: clang, ASan + UBSan, CPU only) and
# runs each for a bounded time on its seed corpus (fuzz/corpus/<target>/, read
# only: new inputs go to a scratch folder). Exits non-zero when any target finds a
# crash, a sanitizer report, a leak, a timeout or an out-of-memory; the inputs
# that did it are kept in build/fuzz/artifacts/ (rerun one: build/fuzz/fuzz/<target> <file>).
# Targets run side by side, one per core (FUZZ_JOBS, default nproc): each still gets
# its full time on a core of its own (each is one process, one OpenMP thread).
# Usage: tools/fuzz.sh [seconds-per-target]   (default 30; random seeds: for finding bugs, run long)
#        tools/fuzz.sh --ci [seconds]   (CI: the fixed seed FUZZ_SEED, default 1, on the committed
#                                        corpus only, so every CI run tries the same inputs in the
#                                        same order and a submission's fate is not a coin toss)
#        FUZZ_TARGETS="fuzz_npz fuzz_graph" tools/fuzz.sh 600   (a subset)
#        FUZZ_JOBS=1 tools/fuzz.sh   (one target at a time)
# Every finding becomes a corpus entry (fuzz/make_corpus.py) and a regression test
# (tests/gnn/test_fuzz_regressions.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
seed_args=()
if [ "${1:-}" = "--ci" ]; then
  shift
  seed_args=(-seed="${FUZZ_SEED:-1}")
fi
seconds=${1:-30}
source tools/phases.sh
phase "fuzz configure" cmake --preset fuzz >/dev/null
phase "fuzz build" cmake --build --preset fuzz

bin=build/fuzz/fuzz
artifacts=build/fuzz/artifacts
mkdir -p "$artifacts"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
targets=${FUZZ_TARGETS:-$(cd "$bin" && find . -maxdepth 1 -type f -executable -name 'fuzz_*' -printf '%f\n' | sort)}

# One OpenMP thread: reproducible runs, and libFuzzer's timeout measures one input's work.
export OMP_NUM_THREADS=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# (nproc would answer OMP_NUM_THREADS, set above.)
jobs=${FUZZ_JOBS:-$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)}
# fuzz_one <target>: runs it; its output goes to $scratch/<target>.log, its exit status
# to $scratch/<target>.status.
fuzz_one() {
  local t=$1 rc=0
  mkdir -p "$scratch/$t"
  local args=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -max_len=16384 -print_final_stats=1
              -artifact_prefix="$artifacts/$t-" "${seed_args[@]}")
  [ -f "fuzz/dict/$t.dict" ] && args+=(-dict="fuzz/dict/$t.dict")
  local corpora=("$scratch/$t")
  [ -d "fuzz/corpus/$t" ] && corpora+=("fuzz/corpus/$t")
  "$bin/$t" "${args[@]}" "${corpora[@]}" >"$scratch/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$scratch/$t.status"
}
phase_begin "fuzz run"
running=0
for t in $targets; do
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  echo "=== $t: ${seconds}s"
  fuzz_one "$t" &
  running=$((running + 1))
done
wait
failed=()
for t in $targets; do
  echo "=== $t"
  if [ "$(cat "$scratch/$t.status" 2>/dev/null)" != 0 ]; then
    failed+=("$t")
    tail -n 60 "$scratch/$t.log"
  else
    grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)|cov: .* corp:' "$scratch/$t.log" | tail -n 4
  fi
done
phase_end "$(( ${#failed[@]} > 0 ))"
if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]} (reproducers in $artifacts/)" >&2
  exit 1
fi
echo "fuzz: all targets ran ${seconds}s without findings"
