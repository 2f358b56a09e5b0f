// The Context the engine runs its work on, per device and thread, and how to point
// that work at a CUDA stream of the caller's.
#pragma once

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/device.hpp"

namespace edgewise::gnn {

// The Context every engine operation on `device` uses in the calling thread: the
// kernels it calls, its own CUDA kernels, cuBLAS products, copies and memsets are
// all queued on this context's stream, so they run in the order they were issued.
// Validation is off: the engine validates once at its boundaries (Graph
// construction, layer and op arguments). The stream is the CUDA default stream
// (nullptr) unless a StreamGuard is active; on the CPU it is unused.
Context& engine_context(Device device);

// The stream of engine_context(device) (nullptr on the CPU).
void* engine_stream(Device device);
// For a copy between two devices: the stream of the CUDA side (nullptr when both are CPU).
void* engine_stream(Device a, Device b);

// Sends the calling thread's engine work on `device` (a CUDA device) to `stream` (a
// cudaStream_t the caller owns and keeps alive) until the guard is destroyed, then
// restores the previous stream. Guards nest. Work issued before the guard is not
// waited for: synchronise the old stream first if the new one must see its results.
// Code outside the engine that copies through the kernels' Buffer API uses the
// default stream: give a blocking stream (cudaStreamCreate's default, which orders
// itself with the default stream) unless all such copies are synchronised by hand.
class StreamGuard {
 public:
  StreamGuard(Device device, void* stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Device device_;
  void* previous_;
};

}  // namespace edgewise::gnn
