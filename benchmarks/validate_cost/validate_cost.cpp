// edgewise-validate-cost: what Context::validate costs. Times segment_reduce, spmm
// and scatter_reduce (float sum, CPU) on one mid-size input with validation on and
// off, median of --reps alternating runs each, and prints the difference (figures for SECURITY.md).
//   usage: edgewise-validate-cost [rows=4000000] [segments=200000] [cols=16] [reps=9]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "edgewise/kernels/scatter_reduce.hpp"
#include "edgewise/kernels/segment_reduce.hpp"
#include "edgewise/kernels/spmm.hpp"

namespace {

using namespace edgewise;

int64_t arg_or(int argc, char** argv, int i, int64_t fallback) {
  if (argc <= i) return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(argv[i], &end, 10);
  if (*end != '\0' || v <= 0) {
    std::fprintf(stderr, "argument %d ('%s') must be a positive integer\n", i, argv[i]);
    std::exit(2);
  }
  return v;
}

double median(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double time_ms(const std::function<void()>& run) {
  const auto t0 = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// On and off runs alternate, so drift in machine load hits both alike.
void report(const char* name, int reps, const std::function<void(Context&)>& op) {
  Context on, off;
  off.validate = false;
  op(on);  // warm up (first touch, thread pool, scratch)
  op(off);
  std::vector<double> t_on, t_off;
  for (int r = 0; r < reps; ++r) {
    t_on.push_back(time_ms([&] { op(on); }));
    t_off.push_back(time_ms([&] { op(off); }));
  }
  const double a = median(t_on), b = median(t_off);
  std::printf("%-16s validate on %8.2f ms   off %8.2f ms   cost %+7.2f ms (%+5.1f %%)\n", name, a, b, a - b,
              100.0 * (a - b) / b);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t rows = arg_or(argc, argv, 1, 4000000), segments = arg_or(argc, argv, 2, 200000);
  const int64_t cols = arg_or(argc, argv, 3, 16);
  const int reps = static_cast<int>(arg_or(argc, argv, 4, 9));
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int64_t> pick(0, segments - 1);
  // rows elements (edges) spread over `segments` segments (nodes).
  std::vector<int64_t> keys(static_cast<size_t>(rows));
  for (auto& k : keys) k = pick(rng);
  std::vector<int32_t> index32(keys.begin(), keys.end());
  std::vector<int64_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> offsets(static_cast<size_t>(segments + 1), 0);
  for (int64_t k : sorted) ++offsets[static_cast<size_t>(k + 1)];
  for (int64_t s = 0; s < segments; ++s) offsets[s + 1] += offsets[s];
  std::vector<float> values(static_cast<size_t>(rows * cols), 1.0f), x(static_cast<size_t>(segments * cols), 1.0f);
  std::vector<float> out(static_cast<size_t>(segments * cols));

  const MatrixView<const float> v(values.data(), rows, cols), xv(x.data(), segments, cols);
  const VectorView<const int64_t> off(offsets.data(), segments + 1);
  const VectorView<const int32_t> idx(index32.data(), rows);
  const MatrixView<float> o(out.data(), segments, cols);
  std::printf("rows (edges) %lld, segments (nodes) %lld, cols %lld, median of %d runs, CPU, %s\n",
              static_cast<long long>(rows), static_cast<long long>(segments), static_cast<long long>(cols), reps,
              "float sum");
  report("segment_reduce", reps, [&](Context& c) { segment_reduce<float>(v, off, ReduceOp::Sum, o, {}, c); });
  report("spmm", reps, [&](Context& c) { spmm<float, int32_t>(off, idx, {}, xv, ReduceOp::Sum, o, {}, c); });
  report("scatter_reduce", reps, [&](Context& c) { scatter_reduce<float, int32_t>(v, idx, ReduceOp::Sum, o, {}, c); });
  return 0;
}
