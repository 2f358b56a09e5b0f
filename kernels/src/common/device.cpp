// Device naming and run-time CUDA queries.
#include "edgewise/kernels/common/device.hpp"

#include <charconv>

#include "common/cuda_backend.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise {

Device Device::parse(std::string_view text) {
  if (text == "cpu") return cpu();
  if (text == "cuda" || text == "gpu") return cuda(0);
  if (text.starts_with("cuda:")) {
    std::string_view digits = text.substr(5);
    int index = -1;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (error == std::errc() && end == digits.data() + digits.size() && index >= 0) return cuda(index);
  }
  detail::throw_invalid_argument("Device::parse: unknown device '", text,
                                 "' (expected cpu, cuda or cuda:<index>)");
}

bool cuda_built() noexcept {
#if EDGEWISE_WITH_CUDA
  return true;
#else
  return false;
#endif
}

int cuda_device_count() noexcept { return detail::cuda_device_count(nullptr); }

std::string cuda_unavailable_reason() {
  std::string reason;
  return detail::cuda_device_count(&reason) > 0 ? std::string() : reason;
}

void require_available(Device device, std::string_view op) {
  if (device.is_cpu()) return;
  struct Availability {
    int count = 0;
    std::string reason;
  };
  static const Availability cuda = [] {
    Availability a;
    a.count = detail::cuda_device_count(&a.reason);
    return a;
  }();
  EW_REQUIRE(cuda.count > 0, op, ": no CUDA device is available (", cuda.reason, ")");
  EW_REQUIRE(device.index < cuda.count, op, ": ", device.str(), " does not exist (", cuda.count,
             cuda.count == 1 ? " CUDA device)" : " CUDA devices)");
}

namespace detail {
[[noreturn]] void throw_built_without_cuda(const char* op) {
  throw std::invalid_argument(concat(op, ": edgewise was built without CUDA"));
}
}  // namespace detail

}  // namespace edgewise
