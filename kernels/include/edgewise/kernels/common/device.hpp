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
  // "cpu" or "cuda:<n>" (inline: header-only users, e.g. edgewise::data, name devices too).
  std::string str() const { return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index); }
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

// Fails up front, before any work, when `device` cannot be used here: throws
// std::invalid_argument "<op>: no CUDA device is available (<reason>)" for a CUDA
// device when none is usable (built without CUDA, no driver, no GPU), and
// "<op>: cuda:<i> does not exist (<n> CUDA devices)" for an index past the last.
// Does nothing for the CPU. Entry points that take a device (constructors, train,
// Graph::to) call it; device allocation calls it too, as the backstop. The device
// count is queried once per process.
void require_available(Device device, std::string_view op);

}  // namespace edgewise
