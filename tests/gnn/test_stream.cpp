// The engine's per-thread contexts and StreamGuard (bookkeeping only: no stream is
// used here, so these run without a GPU).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "edgewise/gnn/stream.hpp"

namespace edgewise::gnn {
namespace {

void* fake_stream(int n) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x1000 * n)); }

TEST(EngineContext, CpuHasNoStreamAndTrustsItsInputs) {
  Context& ctx = engine_context(Device::cpu());
  EXPECT_TRUE(ctx.device().is_cpu());
  EXPECT_EQ(ctx.stream(), nullptr);
  EXPECT_FALSE(ctx.validate);
  EXPECT_EQ(&ctx, &engine_context(Device::cpu()));  // one per thread, reused
}

TEST(EngineContext, DefaultCudaStreamIsTheDefaultStream) {
  EXPECT_EQ(engine_stream(Device::cuda(0)), nullptr);
  EXPECT_EQ(engine_context(Device::cuda(0)).stream(), nullptr);
  EXPECT_EQ(engine_context(Device::cuda(0)).device(), Device::cuda(0));
}

TEST(StreamGuard, SetsNestsAndRestoresThePerDeviceStream) {
  const Device d0 = Device::cuda(0), d1 = Device::cuda(1);
  {
    StreamGuard outer(d0, fake_stream(1));
    EXPECT_EQ(engine_stream(d0), fake_stream(1));
    EXPECT_EQ(engine_context(d0).stream(), fake_stream(1));
    EXPECT_EQ(engine_context(d0).device(), d0);
    EXPECT_FALSE(engine_context(d0).validate);
    EXPECT_EQ(engine_stream(d1), nullptr);  // other devices keep theirs
    EXPECT_EQ(engine_stream(Device::cpu(), d0), fake_stream(1));  // a copy uses the CUDA side's stream
    {
      StreamGuard inner(d0, fake_stream(2));
      EXPECT_EQ(engine_context(d0).stream(), fake_stream(2));
    }
    EXPECT_EQ(engine_context(d0).stream(), fake_stream(1));
  }
  EXPECT_EQ(engine_stream(d0), nullptr);
  EXPECT_EQ(engine_context(d0).stream(), nullptr);
}

TEST(StreamGuard, RejectsTheCpu) {
  EXPECT_THROW(StreamGuard(Device::cpu(), fake_stream(1)), std::invalid_argument);
  EXPECT_EQ(engine_stream(Device::cpu()), nullptr);
}

}  // namespace
}  // namespace edgewise::gnn
