// Per-thread engine contexts: one per (CUDA device, stream), created on first use.
#include "edgewise/gnn/tensor/stream.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

// The stream StreamGuard set for each CUDA device index in this thread (absent: nullptr).
std::map<int, void*>& current_streams() {
  thread_local std::map<int, void*> streams;
  return streams;
}

void* current_stream(Device device) {
  const auto& streams = current_streams();
  auto it = streams.find(device.index);
  return it == streams.end() ? nullptr : it->second;
}

}  // namespace

Context& engine_context(Device device) {
  void* stream = device.is_cuda() ? current_stream(device) : nullptr;
  // The default stream shares the kernels' trusted per-thread context (and its scratch).
  if (stream == nullptr) return trusted_context(device);
  // Contexts stay alive for the thread's life: a reference handed out earlier stays valid.
  thread_local std::map<std::pair<int, std::uintptr_t>, std::unique_ptr<Context>> contexts;
  auto& ctx = contexts[{device.index, reinterpret_cast<std::uintptr_t>(stream)}];
  if (!ctx) {
    ctx = std::make_unique<Context>(device, stream);
    ctx->validate = false;
  }
  return *ctx;
}

void* engine_stream(Device device) { return device.is_cuda() ? current_stream(device) : nullptr; }

void* engine_stream(Device a, Device b) { return engine_stream(a.is_cuda() ? a : b); }

StreamGuard::StreamGuard(Device device, void* stream) : device_(device), previous_(nullptr) {
  EW_REQUIRE(device.is_cuda(), "StreamGuard: device must be a CUDA device, not ", device.str());
  previous_ = current_stream(device);
  current_streams()[device.index] = stream;
}

StreamGuard::~StreamGuard() { current_streams()[device_.index] = previous_; }

}  // namespace edgewise::gnn
