#!/usr/bin/env bash
# Runs tests/python/test_pyg_accelerate.py against each older PyG release that
# edgewise.torch.pyg.TESTED_PYG_VERSIONS names (CI covers the one it installs), each in
# a fresh venv over this interpreter's torch (PyG is pure Python; downloads it from PyPI).
#   Usage: tools/test_pyg_versions.sh <build python dir, e.g. build/ci/python> [versions...]
set -euo pipefail
cd "$(dirname "$0")/.."
python_dir=$(cd "${1:?usage: tools/test_pyg_versions.sh <build python dir> [versions...]}" && pwd)
shift
versions=("$@")
[ ${#versions[@]} -eq 0 ] && versions=(2.6.1 2.7.0)
for version in "${versions[@]}"; do
  venv=$(mktemp -d)
  python3 -m venv --system-site-packages "$venv"
  "$venv/bin/pip" install -q "torch_geometric==$version"
  echo "== PyG $version"
  PYTHONPATH="$python_dir" PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    tests/python/test_pyg_accelerate.py
  rm -rf "$venv"
done
