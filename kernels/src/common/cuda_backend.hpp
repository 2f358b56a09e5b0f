// CUDA runtime calls behind a CUDA-free interface, so host-compiled code (memory,
// Context, dispatch) needs no CUDA headers. Implemented by cuda_backend_cuda.cpp,
// or by cuda_backend_none.cpp in a CPU-only build (which throws "built without CUDA").
#pragma once

#include <cstddef>
#include <string>

namespace edgewise::detail {

enum class CopyKind : int { HostToHost, HostToDevice, DeviceToHost, DeviceToDevice };

// Number of devices; 0 with a reason (never a throw) when CUDA is unusable.
int cuda_device_count(std::string* reason) noexcept;
void* cuda_malloc(std::size_t bytes, int device);
void cuda_free(void* ptr, int device) noexcept;
// Queued on `stream`, then the stream is synchronised.
void cuda_memcpy(void* dst, const void* src, std::size_t bytes, CopyKind kind, int device,
                 void* stream);
void cuda_memset_async(void* dst, int byte_value, std::size_t bytes, int device, void* stream);
void cuda_stream_synchronize(int device, void* stream);
// Page-locked host memory visible to every device; nullptr (never a throw) when the
// runtime cannot provide it.
void* cuda_host_alloc(std::size_t bytes) noexcept;
void cuda_host_free(void* ptr) noexcept;

[[noreturn]] void throw_built_without_cuda(const char* op);

}  // namespace edgewise::detail
