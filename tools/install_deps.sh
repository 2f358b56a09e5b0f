#!/usr/bin/env bash
# Installs what building and testing Edgewise needs, from Debian's packages and PyPI.
# Idempotent: installs only what is missing. Run as root (or with sudo available).
#   tools/install_deps.sh          what building and running needs
#   tools/install_deps.sh --test   also what the Python tests need (torch, PyG, matplotlib,
#                                  nbclient, ...): edgewise.torch and the notebook are tested
set -euo pipefail
with_test_deps=0
[ "${1:-}" = "--test" ] && with_test_deps=1

apt_packages=(cmake ninja-build g++ libeigen3-dev libgtest-dev pybind11-dev zlib1g-dev python3-dev
  libcli11-dev nlohmann-json3-dev libdlpack-dev
  libopenmpi-dev openmpi-bin libmetis-dev  # edgewise::dist: MPI ranks, METIS partitions
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
# module name -> PyPI name
declare -A py_modules=([numpy]=numpy [pytest]=pytest [scikit_build_core]=scikit-build-core [pybind11]=pybind11)
if ((with_test_deps)); then
  py_modules+=([torch]=torch [torch_geometric]=torch_geometric [matplotlib]=matplotlib
               [nbclient]=nbclient [nbformat]=nbformat [ipykernel]=ipykernel
               [scipy]=scipy)  # scipy: a real save_npz file for the dataset-format reader tests
fi
# Found without importing: importing torch and torch_geometric alone takes 10-30 s.
py_missing=()
for mod in $("$PYTHON" -c 'import importlib.util, sys
print(" ".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))' "${!py_modules[@]}"); do
  py_missing+=("${py_modules[$mod]}")
done
if ((${#py_missing[@]})); then
  echo "install_deps: pip install ${py_missing[*]}"
  "$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore "${py_missing[@]}"
fi

# The type-stub generator (tools/gen_stubs.sh), pinned: tests/python/test_stubs.py compares
# the committed stubs with its output, which changes in form between versions.
stubgen_version=3.0.0
if [ "$("$PYTHON" -c "import importlib.metadata as m; print(m.version('pybind11-stubgen'))" 2>/dev/null)" != "$stubgen_version" ]; then
  echo "install_deps: pip install pybind11-stubgen==$stubgen_version"
  "$PYTHON" -m pip install -q --disable-pip-version-check "pybind11-stubgen==$stubgen_version"
fi
