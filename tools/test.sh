#!/usr/bin/env bash
# Builds Edgewise (CUDA on when nvcc is found) and runs every test: C++ (ctest,
# GPU cases skip with a message when there is no GPU), Python (pytest) and the
# install-consumer check; then the CPU suite under ASan + UBSan and the fuzz targets.
# Ends with the wall time of each phase.
#   Usage: tools/test.sh [--full] [extra ctest args]
# --full also builds one portable wheel (tools/build_wheel.sh) and runs the
# torch_scatter-API tests against it with the oldest and the newest torch
# edgewise.torch supports, each in a fresh venv (tools/test_wheel.sh; downloads torch
# from PyPI: too slow for CI), and the PyG-backend tests with older PyG releases
# (tools/test_pyg_versions.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
if [ "${1:-}" = "--full" ]; then
  full=1
  shift
fi
source tools/phases.sh
EDGEWISE_PHASE_LOG=$(mktemp)
export EDGEWISE_PHASE_LOG
trap 'phase_summary "$SECONDS"; rm -f "$EDGEWISE_PHASE_LOG"' EXIT

phase deps tools/install_deps.sh --test
export PATH="$PATH:/usr/local/cuda/bin"
[ -d ../shared/datasets ] && export EDGEWISE_DATA_DIR="${EDGEWISE_DATA_DIR:-$(cd ../shared/datasets && pwd)}"
phase "ci configure" cmake --preset ci
phase "ci build" cmake --build --preset ci
phase "ci tests" ctest --preset ci "$@"
# ctest lists skipped tests without saying why; say it once.
reason=$(build/ci/tests/test_kernels --gtest_filter='*/CUDA' 2>&1 | grep -m1 'CUDA case not run' || true)
if [ -n "$reason" ]; then echo "gpu-labelled tests were skipped: $reason"; fi
# The CPU suite under ASan + UBSan, then the fuzz targets for a bounded time.
tools/sanitize.sh
tools/fuzz.sh --ci "${EDGEWISE_FUZZ_SECONDS:-30}"
if [ "$full" = 1 ]; then
  wheel_dir=$(mktemp -d)
  phase "wheel build" tools/build_wheel.sh "$wheel_dir"
  phase "wheel x two torch versions" tools/test_wheel.sh "$(ls "$wheel_dir"/edgewise-*.whl)"
  phase "older PyG releases" tools/test_pyg_versions.sh build/ci/python
fi
