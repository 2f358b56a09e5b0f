// CPU ISA level detection and selection (see edgewise/kernels/cpu_isa.hpp).
#include "edgewise/kernels/cpu_isa.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "edgewise/kernels/common/check.hpp"

namespace edgewise {

namespace {

CpuIsa detect() {
#if EDGEWISE_CPU_DISPATCH && (defined(__x86_64__) || defined(__i386__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return CpuIsa::Avx512Zmm;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
    return CpuIsa::Avx2;
#endif
  return CpuIsa::Baseline;
}

CpuIsa initial() {
  const CpuIsa best = default_cpu_isa();
  const char* env = std::getenv("EDGEWISE_CPU_ISA");
  if (env == nullptr || env[0] == '\0') return best;
  CpuIsa wanted = best;
  try {
    wanted = parse_cpu_isa(env);
  } catch (const std::invalid_argument&) {
    std::fprintf(stderr, "edgewise: EDGEWISE_CPU_ISA='%s' is not baseline, avx2, avx512 or avx512zmm; using %s\n", env,
                 to_string(best));
    return best;
  }
  if (static_cast<int>(wanted) > static_cast<int>(best_supported_cpu_isa())) {
    std::fprintf(stderr, "edgewise: EDGEWISE_CPU_ISA=%s is not supported here; using %s\n", env, to_string(best));
    return best;
  }
  return wanted;
}

std::atomic<int> g_isa{-1};

}  // namespace

const char* to_string(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Baseline: return "baseline";
    case CpuIsa::Avx2: return "avx2";
    case CpuIsa::Avx512: return "avx512";
    case CpuIsa::Avx512Zmm: return "avx512zmm";
  }
  return "?";
}

CpuIsa parse_cpu_isa(const std::string& name) {
  if (name == "baseline") return CpuIsa::Baseline;
  if (name == "avx2") return CpuIsa::Avx2;
  if (name == "avx512") return CpuIsa::Avx512;
  if (name == "avx512zmm") return CpuIsa::Avx512Zmm;
  detail::throw_invalid_argument("cpu_isa: unknown level '", name, "' (expected baseline, avx2, avx512 or avx512zmm)");
}

CpuIsa best_supported_cpu_isa() {
  static const CpuIsa best = detect();
  return best;
}

CpuIsa default_cpu_isa() {
  static const CpuIsa level = [] {
    const CpuIsa best = best_supported_cpu_isa();
#if defined(__x86_64__) || defined(__i386__)
    if (best == CpuIsa::Avx512Zmm && !__builtin_cpu_is("intel")) return CpuIsa::Avx512;
#endif
    return best;
  }();
  return level;
}

CpuIsa cpu_isa() {
  int isa = g_isa.load(std::memory_order_relaxed);
  if (isa < 0) {
    int expected = -1;
    g_isa.compare_exchange_strong(expected, static_cast<int>(initial()));
    isa = g_isa.load();
  }
  return static_cast<CpuIsa>(isa);
}

void set_cpu_isa(CpuIsa isa) {
  EW_REQUIRE(static_cast<int>(isa) <= static_cast<int>(best_supported_cpu_isa()), "set_cpu_isa: ", to_string(isa),
             " is not supported by this build or CPU (best: ", to_string(best_supported_cpu_isa()), ")");
  g_isa = static_cast<int>(isa);
}

}  // namespace edgewise
