// Test support shared by every C++ test: device parameterisation (GPU cases skip
// with a message when no device exists), seeded generators, poisoning, comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/common/device.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"

namespace edgewise::test {

// Every device a test body runs on: CPU always, CUDA:0 always (skipped at run
// time when absent, so the skip is visible rather than the case missing).
inline std::vector<Device> all_devices() { return {Device::cpu(), Device::cuda(0)}; }

inline std::string device_name(const testing::TestParamInfo<Device>& info) {
  return info.param.is_cpu() ? "CPU" : "CUDA";
}

// Skips the current test, with the reason, when `device` is not usable here.
#define EW_SKIP_IF_UNAVAILABLE(device)                                                         \
  do {                                                                                         \
    if ((device).is_cuda() && ::edgewise::cuda_device_count() == 0)                            \
      GTEST_SKIP() << "no GPU here, CUDA case not run: " << ::edgewise::cuda_unavailable_reason(); \
  } while (0)

// Expects f() to throw std::invalid_argument whose message contains `fragment`.
template <class F>
void expect_invalid(F&& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning " << fragment;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

class DeviceTest : public testing::TestWithParam<Device> {
 protected:
  void SetUp() override { EW_SKIP_IF_UNAVAILABLE(GetParam()); }
  Device device() const { return GetParam(); }
};

// The seed for this run: EDGEWISE_TEST_SEED, else a fixed default; printed once.
inline uint64_t test_seed() {
  static const uint64_t seed = [] {
    const char* env = std::getenv("EDGEWISE_TEST_SEED");
    uint64_t s = env ? std::strtoull(env, nullptr, 10) : 20261129ull;
    std::printf("[edgewise] test seed %llu (set EDGEWISE_TEST_SEED to change)\n",
                static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

// A generator for one test case: the run seed mixed with a per-case salt.
inline std::mt19937_64 rng_for(uint64_t salt) { return std::mt19937_64(test_seed() * 0x9E3779B97F4A7C15ull + salt); }

template <class T>
std::vector<T> random_values(std::mt19937_64& rng, int64_t n, double lo = -100, double hi = 100) {
  std::vector<T> v(static_cast<size_t>(n));
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto& x : v) x = static_cast<T>(d(rng));
  } else {
    std::uniform_int_distribution<int64_t> d(static_cast<int64_t>(std::max<double>(lo, double(std::numeric_limits<T>::lowest()))),
                                             static_cast<int64_t>(hi));
    for (auto& x : v) x = static_cast<T>(d(rng));
  }
  return v;
}

// Offsets [S+1] from segment lengths.
inline std::vector<int64_t> offsets_from_lengths(const std::vector<int64_t>& lengths) {
  std::vector<int64_t> off(lengths.size() + 1, 0);
  for (size_t i = 0; i < lengths.size(); ++i) off[i + 1] = off[i] + lengths[i];
  return off;
}

// Segment-length regimes that find bugs (STYLE §5).
enum class Regime { Uniform, AllEmpty, AllSingleton, OneHub, PowerLaw, SparseEmpty };

inline const char* regime_name(Regime r) {
  switch (r) {
    case Regime::Uniform: return "uniform";
    case Regime::AllEmpty: return "all-empty";
    case Regime::AllSingleton: return "all-singleton";
    case Regime::OneHub: return "one-hub";
    case Regime::PowerLaw: return "power-law";
    case Regime::SparseEmpty: return "sparse-with-empties";
  }
  return "?";
}

// S segment lengths of the regime with about `mean` rows each.
inline std::vector<int64_t> segment_lengths(std::mt19937_64& rng, Regime regime, int64_t S, int64_t mean) {
  std::vector<int64_t> len(static_cast<size_t>(S), 0);
  switch (regime) {
    case Regime::Uniform: {
      std::uniform_int_distribution<int64_t> d(0, 2 * mean);
      for (auto& l : len) l = d(rng);
      break;
    }
    case Regime::AllEmpty: break;
    case Regime::AllSingleton: std::fill(len.begin(), len.end(), 1); break;
    case Regime::OneHub:
      if (S > 0) len[static_cast<size_t>(S / 2)] = mean * S;
      break;
    case Regime::PowerLaw: {
      // Pareto-like: most segments short, a few very long.
      std::uniform_real_distribution<double> u(0.0, 1.0);
      for (auto& l : len) l = static_cast<int64_t>(std::floor(mean * 0.3 / std::pow(1.0 - u(rng) * 0.9999, 1.2)));
      break;
    }
    case Regime::SparseEmpty: {
      std::uniform_int_distribution<int64_t> d(1, 2 * mean);
      std::bernoulli_distribution empty(0.5);
      for (auto& l : len) l = empty(rng) ? 0 : d(rng);
      break;
    }
  }
  return len;
}

template <class T>
Buffer<T> to_device(const std::vector<T>& host, Device device) {
  return Buffer<T>::from_host(std::span<const T>(host.data(), host.size()), device);
}

// A buffer of n elements filled with 0xFF bytes (NaN for floats, -1 / max for ints),
// so elements an op forgets to write are caught.
template <class T>
Buffer<T> poisoned(int64_t n, Device device) {
  Buffer<T> b(n, device);
  b.fill_bytes(0xFF);
  return b;
}

// Exact comparison, reporting the first mismatches.
template <class T>
::testing::AssertionResult equal_exactly(const std::vector<T>& actual, const std::vector<T>& expected) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure() << "size " << actual.size() << " != " << expected.size();
  int shown = 0;
  int64_t bad = 0;
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  for (size_t i = 0; i < actual.size(); ++i) {
    bool same = actual[i] == expected[i];
    if constexpr (std::is_floating_point_v<T>) same = same || (std::isnan(actual[i]) && std::isnan(expected[i]));
    if (!same) {
      ++bad;
      if (shown++ < 8) failure << "\n  [" << i << "] got " << actual[i] << ", expected " << expected[i];
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return failure << "\n  " << bad << " of " << actual.size() << " elements differ";
}

// |actual - expected| <= atol + rtol * scale[i] (scale: e.g. the sum of |terms|).
template <class T>
::testing::AssertionResult close_to(const std::vector<T>& actual, const std::vector<T>& expected,
                                    const std::vector<double>& scale, double rtol, double atol) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure() << "size " << actual.size() << " != " << expected.size();
  int shown = 0;
  int64_t bad = 0;
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  for (size_t i = 0; i < actual.size(); ++i) {
    double a = static_cast<double>(actual[i]), e = static_cast<double>(expected[i]);
    double tol = atol + rtol * (scale.empty() ? std::fabs(e) : scale[i]);
    // An infinite tolerance (scale) is the oracle saying any value is right there
    // (e.g. a float product whose partial products may overflow in any order).
    bool ok = a == e || std::fabs(a - e) <= tol || (std::isnan(a) && std::isnan(e)) || std::isinf(tol);
    if (!ok) {
      ++bad;
      if (shown++ < 8) failure << "\n  [" << i << "] got " << a << ", expected " << e << " (tol " << tol << ")";
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return failure << "\n  " << bad << " of " << actual.size() << " elements differ";
}

// `call` (an entry point with op `op` on integer data) throws std::invalid_argument
// naming the op and the dtype (ops defined for floating point only: var, std).
template <class F>
void expect_undefined_for_integers(F&& call, ReduceOp op, const char* dtype) {
  try {
    call();
    ADD_FAILURE() << to_string(op) << " on " << dtype << ": no throw";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::string(to_string(op))), std::string::npos) << what;
    EXPECT_NE(what.find(dtype), std::string::npos) << what;
  }
}

}  // namespace edgewise::test
