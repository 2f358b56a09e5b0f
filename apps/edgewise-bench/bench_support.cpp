// Registry and input generators for edgewise-bench.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <unistd.h>

#include "bench.hpp"

namespace edgewise::bench {

std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

void register_case(Case c) { registry().push_back(std::move(c)); }

std::vector<int64_t> uniform_offsets(int64_t S, int64_t M) {
  std::vector<int64_t> off(static_cast<size_t>(S + 1));
  for (int64_t s = 0; s <= S; ++s) off[s] = M * s / S;
  return off;
}

std::vector<int64_t> power_law_offsets(int64_t S, int64_t M, double alpha, std::mt19937_64& rng) {
  // Weight of the k-th largest segment ~ 1 / k^alpha, shuffled over positions.
  std::vector<double> weight(static_cast<size_t>(S));
  for (int64_t k = 0; k < S; ++k) weight[k] = 1.0 / std::pow(static_cast<double>(k + 1), alpha);
  std::shuffle(weight.begin(), weight.end(), rng);
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  std::vector<int64_t> off(static_cast<size_t>(S + 1), 0);
  double running = 0;
  for (int64_t s = 0; s < S; ++s) {
    running += weight[s];
    off[s + 1] = std::min<int64_t>(M, static_cast<int64_t>(std::llround(running / total * static_cast<double>(M))));
  }
  off[S] = M;
  return off;
}

double last_level_cache_bytes() {
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return static_cast<double>(std::max<long>({l3, l2, 0}));
}

int rotation_copies(double bytes) {
  if (bytes <= 0) return 1;
  const double llc = last_level_cache_bytes();
  return static_cast<int>(std::clamp(std::ceil(1.5 * llc / bytes), 1.0, 16.0));
}

std::vector<Device> bench_devices() {
  std::vector<Device> devices = {Device::cpu()};
  if (cuda_device_count() > 0) devices.push_back(Device::cuda(0));
  return devices;
}

}  // namespace edgewise::bench
