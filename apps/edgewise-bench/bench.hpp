// edgewise-bench harness: cases register themselves; the harness measures this
// machine's memory-bandwidth floor in the same run, times each case (median and
// min of many repeats) and reports GB/s and the ratio to the floor.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "edgewise/kernels/common/device.hpp"

namespace edgewise::bench {

struct Options {
  bool quick = false;  // fewer repeats and smaller inputs where a case allows
  uint64_t seed = 12345;
};

// What a case hands the harness after its (untimed) set-up.
struct Prepared {
  std::function<void()> run;  // one timed call; synchronises its device before returning
  double bytes = 0;           // bytes the op must move (read + write), for GB/s
  std::string baseline;       // optional: name of a case this one is compared with
  std::string detail;         // optional: a short note printed with the row
  int max_repeats = 0;        // optional cap on timed calls (slow baselines); 0: the harness default
};

struct Case {
  std::string name;  // "<op>/<variant>/<shape>"; the device is appended when printed
  Device device;
  std::function<Prepared(const Options&)> prepare;
};

// Registers a case (call from a static initialiser, see EW_BENCH_CASES).
void register_case(Case c);
std::vector<Case>& registry();

// Segment lengths for S segments summing to M: uniform (every length within 1 of
// M/S) or power-law (Zipf-like, exponent `alpha`, a few very long segments).
std::vector<int64_t> uniform_offsets(int64_t S, int64_t M);
std::vector<int64_t> power_law_offsets(int64_t S, int64_t M, double alpha, std::mt19937_64& rng);

// How many copies of an input of `bytes` a case should rotate through so that its
// working set exceeds the last-level cache (1.5x LLC; at least 1, at most 16): the
// cases then stream from memory, like the floor does, instead of timing a warm cache.
int rotation_copies(double bytes);
// The last-level cache size in bytes (0 if unknown).
double last_level_cache_bytes();

// Devices benchmarks run on: CPU, plus CUDA:0 when one is present.
std::vector<Device> bench_devices();

}  // namespace edgewise::bench

#define EW_BENCH_CONCAT_INNER(a, b) a##b
#define EW_BENCH_CONCAT(a, b) EW_BENCH_CONCAT_INNER(a, b)
// EW_BENCH_CASES { register_case(...); ... } — runs at program start.
#define EW_BENCH_CASES                                                         \
  static void EW_BENCH_CONCAT(ew_bench_register_, __LINE__)();                 \
  static const bool EW_BENCH_CONCAT(ew_bench_registered_, __LINE__) =          \
      (EW_BENCH_CONCAT(ew_bench_register_, __LINE__)(), true);                 \
  static void EW_BENCH_CONCAT(ew_bench_register_, __LINE__)()
