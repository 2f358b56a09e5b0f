// CPU-only build: every CUDA entry point reports "built without CUDA".
#include <stdexcept>

#include "common/cuda_backend.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::detail {

int cuda_device_count(std::string* reason) noexcept {
  if (reason) *reason = "edgewise was built without CUDA";
  return 0;
}
void* cuda_malloc(std::size_t, int) { throw_built_without_cuda("device_allocate"); }
void cuda_free(void*, int) noexcept {}
void cuda_memcpy(void*, const void*, std::size_t, CopyKind, int, void*) {
  throw_built_without_cuda("copy_bytes");
}
void cuda_memset_async(void*, int, std::size_t, int, void*) { throw_built_without_cuda("fill_bytes"); }
void cuda_stream_synchronize(int, void*) { throw_built_without_cuda("synchronize"); }
void* cuda_host_alloc(std::size_t) noexcept { return nullptr; }
void cuda_host_free(void*) noexcept {}

}  // namespace edgewise::detail
