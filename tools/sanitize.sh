#!/usr/bin/env bash
# The whole CPU test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (preset `asan`, g++): the C++ tests with leak detection, the Python tests
# (pytest, through ctest's python_tests) with the sanitizer runtimes preloaded and
# leak detection off (CPython leaks at exit by design). Any finding aborts its
# test, so this exits non-zero.   Usage: tools/sanitize.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d ../shared/datasets ] && export EDGEWISE_DATA_DIR="${EDGEWISE_DATA_DIR:-$(cd ../shared/datasets && pwd)}"
source tools/phases.sh
phase "asan configure" cmake --preset asan >/dev/null
phase "asan build" cmake --build --preset asan
# The asan test preset sets ASAN_OPTIONS / UBSAN_OPTIONS (halt_on_error: the first
# report fails its test; UBSan is built without recovery too).
phase "asan tests" ctest --preset asan "$@"
