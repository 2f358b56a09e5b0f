#!/usr/bin/env bash
# Builds Edgewise (CUDA on when nvcc is found) and runs every test: C++ (ctest,
# GPU cases skip with a message when there is no GPU), Python (pytest) and the
# install-consumer check.   Usage: tools/test.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh --test
export PATH="$PATH:/usr/local/cuda/bin"
[ -d ../shared/datasets ] && export EDGEWISE_DATA_DIR="${EDGEWISE_DATA_DIR:-$(cd ../shared/datasets && pwd)}"
cmake --preset ci
cmake --build --preset ci
ctest --preset ci "$@"
# ctest lists skipped tests without saying why; say it once.
reason=$(build/ci/tests/test_kernels --gtest_filter='*/CUDA' 2>&1 | grep -m1 'CUDA case not run' || true)
if [ -n "$reason" ]; then echo "gpu-labelled tests were skipped: $reason"; fi
# The CPU suite under ASan + UBSan, then the fuzz targets for a bounded time.
tools/sanitize.sh
tools/fuzz.sh "${EDGEWISE_FUZZ_SECONDS:-30}"
