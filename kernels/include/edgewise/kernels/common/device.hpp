// Device: where a view's memory lives (CPU or CUDA:n), and run-time CUDA queries.
#pragma once

#include <string>
#include <string_view>

namespace edgewise {

enum class DeviceType : int { CPU = 0, CUDA = 1 };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  static constexpr Device cpu() noexcept { return {}; }
  static constexpr Device cuda(int index = 0) noexcept { return {DeviceType::CUDA, index}; }
  constexpr bool is_cpu() const noexcept { return type == DeviceType::CPU; }
  constexpr bool is_cuda() const noexcept { return type == DeviceType::CUDA; }
  friend constexpr bool operator==(Device, Device) noexcept = default;

  // "cpu" or "cuda:<index>".
  std::string str() const;
  // Accepts "cpu", "cuda", "cuda:<index>"; throws std::invalid_argument otherwise.
  static Device parse(std::string_view text);
};

// True when this library was compiled with the CUDA backend.
bool cuda_built() noexcept;
// Number of usable CUDA devices: 0 (never an exception or crash) when the library
// was built without CUDA, no driver is loaded, or no device is present.
int cuda_device_count() noexcept;
// Why CUDA cannot be used here ("built without CUDA", the driver's error...);
// empty when cuda_device_count() > 0.
std::string cuda_unavailable_reason();

}  // namespace edgewise
