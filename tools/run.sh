#!/usr/bin/env bash
# The main job: builds Edgewise (release) and runs it. Until training lands this
# prints the benchmark table (CPU, plus GPU cases where a GPU exists).
#   Usage: tools/run.sh [edgewise-bench args]
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
[ -d ../shared/datasets ] && export EDGEWISE_DATA_DIR="${EDGEWISE_DATA_DIR:-$(cd ../shared/datasets && pwd)}"
cmake --preset release >/dev/null
cmake --build --preset release
exec build/release/benchmarks/edgewise-bench "$@"
