#!/usr/bin/env bash
# Runs PyG's own test files for the six layers edgewise.torch.nn re-implements with
# Edgewise's classes substituted for PyG's (a conftest sets them on torch_geometric.nn
# before the test modules import them). PyG's tests are read from a PyG source
# checkout of the installed version, never copied into this repository.
#   Usage: tools/test_pyg_layer_files.sh <build python dir> <pytorch_geometric checkout> [pytest args...]
# e.g.  tools/test_pyg_layer_files.sh build/ci/python ~/src/pytorch_geometric
# Known failure: test_gcn_conv_with_decomposed_layers asserts the module name of PyG's
# generated `propagate` and scripts the layer (TorchScript; Edgewise's layers are plain
# modules). With FULL_TEST=1 PyG's TorchScript checks run too, and fail the same way.
set -euo pipefail
usage="usage: tools/test_pyg_layer_files.sh <build python dir> <pytorch_geometric checkout> [pytest args...]"
python_dir=$(cd "${1:?$usage}" && pwd)
pyg_root=$(cd "${2:?$usage}" && pwd)
shift 2
for f in conftest.py nn/conv/test_gcn_conv.py; do
  [ -f "$pyg_root/test/$f" ] || { echo "error: $pyg_root/test/$f not found: not a PyG source checkout" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$pyg_root/test/conftest.py" "$work/"
for layer in gcn sage gin gat gatv2; do
  cp "$pyg_root/test/nn/conv/test_${layer}_conv.py" "$work/"
done
cat >> "$work/conftest.py" <<'PY'


# Edgewise's classes substituted for PyG's before the test modules import them.
import torch_geometric.nn as _pyg_nn  # noqa: E402
import torch_geometric.nn.conv as _pyg_conv  # noqa: E402
import edgewise.torch.nn as _ew_nn  # noqa: E402

for _name in ("GCNConv", "SAGEConv", "GINConv", "GINEConv", "GATConv", "GATv2Conv"):
    setattr(_pyg_nn, _name, getattr(_ew_nn, _name))
    setattr(_pyg_conv, _name, getattr(_ew_nn, _name))
PY
cd "$work"
PYTHONPATH="$python_dir" PYTHONDONTWRITEBYTECODE=1 python3 -m pytest -q -p no:cacheprovider "$@" .
