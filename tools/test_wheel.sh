#!/usr/bin/env bash
# Installs ONE edgewise wheel into fresh venvs, one per torch version (the oldest torch
# edgewise.torch supports and the newest), and runs the torch_scatter-API tests in
# each, from a copy of tests/python outside the source tree (so the installed wheel,
# not the build tree, is what gets imported).
#
#   tools/test_wheel.sh WHEEL [TORCH_SPEC ...]     (default: "torch==2.4.1" "torch")
#
# torch and pytest come from PyPI (pip's cache makes reruns fast).
set -euo pipefail
cd "$(dirname "$0")/.."
wheel=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=("torch==2.4.1" "torch")
PYTHON=${PYTHON:-python3}
tests=(test_torch_scatter_api.py test_torch_scatter_errors.py test_torch_scatter_composite.py
       test_torch_scatter_compile.py test_torch_tie_rules.py test_torch_direct_calls.py test_torch_forward_ad.py)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/tests"
cp tests/python/conftest.py tests/python/torch_scatter_reference.py "${tests[@]/#/tests/python/}" "$work/tests/"
status=0
for spec in "${specs[@]}"; do
  venv="$work/venv-$(echo "$spec" | tr -c 'a-zA-Z0-9.\n' '_')"
  echo "== $spec: fresh venv $venv"
  "$PYTHON" -m venv "$venv"
  "$venv/bin/pip" install --quiet "$wheel" "$spec" pytest
  "$venv/bin/python" -c "import torch, edgewise, edgewise.torch; print('torch', torch.__version__, '| edgewise', edgewise.__version__, '|', edgewise.__file__)"
  if (cd "$work/tests" && "$venv/bin/python" -m pytest -q -p no:cacheprovider "${tests[@]}"); then
    echo "== $spec: passed"
  else
    echo "== $spec: FAILED"
    status=1
  fi
done
exit $status
