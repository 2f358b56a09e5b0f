#!/usr/bin/env bash
# The main job: builds Edgewise (release) and trains a 2-layer GCN on Cora when the
# data directory has it, else on the built-in synthetic graph (it says which),
# printing progress, the final test accuracy and the time; the training curves go
# to build/release/training_curves.svg.
#   Usage: tools/run.sh [edgewise-train flags, e.g. --model sage --runs 10]
# The data directory is $EDGEWISE_DATA_DIR; when unset, the checkout's sibling
# ../shared/datasets is used if it exists (the library itself never assumes it).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
[ -d ../shared/datasets ] && export EDGEWISE_DATA_DIR="${EDGEWISE_DATA_DIR:-$(cd ../shared/datasets && pwd)}"
cmake --preset release >/dev/null
cmake --build --preset release
exec build/release/bin/edgewise-train --dataset auto --model gcn --plot build/release/training_curves.svg \
  --metrics build/release/training_metrics.csv "$@"
