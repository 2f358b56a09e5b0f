#!/usr/bin/env bash
# Installs what building and testing Edgewise needs, from Debian's packages and PyPI.
# Idempotent: installs only what is missing. Run as root (or with sudo available).
set -euo pipefail

apt_packages=(cmake ninja-build g++ libeigen3-dev libgtest-dev pybind11-dev zlib1g-dev python3-dev
              clang clang-14 libclang-rt-14-dev libomp-14-dev)  # the last line: tools/fuzz.sh (libFuzzer)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install_deps: apt-get install ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
py_missing=()
for mod in numpy pytest scikit_build_core pybind11; do
  "$PYTHON" -c "import $mod" 2>/dev/null || py_missing+=("${mod//_/-}")
done
if ((${#py_missing[@]})); then
  echo "install_deps: pip install ${py_missing[*]}"
  "$PYTHON" -m pip install -q --disable-pip-version-check "${py_missing[@]}"
fi
