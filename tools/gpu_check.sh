#!/usr/bin/env bash
# GPU check (one prepared script for a lent GPU machine, < 8 minutes): builds with
# CUDA for the GPU present, runs the gpu-labelled tests and the GPU benchmark
# cases, and prints a short table. Writes logs and JSON under ${OUT:-build/gpu-check}.
#   Needs: nvcc, cmake, ninja, a C++20 host compiler, GoogleTest (GTEST_ROOT may point
#   at a GoogleTest install or source tree), Eigen 3 (EIGEN3_INCLUDE_DIR may point at it).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu-check}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
start=$(date +%s)
nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
jobs=$(nproc)
extra=()
[ -n "${GTEST_ROOT:-}" ] && extra+=("-DGTEST_ROOT=$GTEST_ROOT")
[ -n "${EIGEN3_INCLUDE_DIR:-}" ] && extra+=("-DEIGEN3_INCLUDE_DIR=$EIGEN3_INCLUDE_DIR")
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DEDGEWISE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${arch:-90}" -DEDGEWISE_BUILD_PYTHON=OFF "${extra[@]}" >"$out/configure.log" 2>&1 \
  || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build/gpu -j "$jobs" >"$out/build.log" 2>&1 || { grep -m20 -A5 error "$out/build.log"; exit 1; }
echo "built in $(( $(date +%s) - start )) s"
(cd build/gpu && ctest -L gpu --output-on-failure --timeout 300) 2>&1 | tee "$out/ctest-gpu.log" | tail -25
build/gpu/bin/edgewise-bench --device cuda --json "$out/bench-gpu.json" 2>&1 | tee "$out/bench-gpu.txt"
echo "gpu check done in $(( $(date +%s) - start )) s"
