// Core types: Device parsing and queries, Buffer ownership and copies, Context scratch.
#include <gtest/gtest.h>

#include <cstring>
#include <cstdlib>
#include <string>

#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/device.hpp"
#include "edgewise/kernels/common/lazy_library.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

TEST(Device, ParsesAndPrints) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:3"), Device::cuda(3));
  EXPECT_EQ(Device::cuda(2).str(), "cuda:2");
  EXPECT_EQ(Device::cpu().str(), "cpu");
  EXPECT_THROW(Device::parse("tpu"), std::invalid_argument);
  EXPECT_THROW(Device::parse("cuda:x"), std::invalid_argument);
  EXPECT_THROW(Device::parse("cuda:-1"), std::invalid_argument);
}

// Without a GPU (or driver) the query answers 0 with a reason instead of crashing.
TEST(Device, CudaQueryNeverCrashes) {
  const int count = cuda_device_count();
  EXPECT_GE(count, 0);
  if (count == 0) {
    EXPECT_FALSE(cuda_unavailable_reason().empty());
  } else {
    EXPECT_TRUE(cuda_unavailable_reason().empty());
  }
  if (!cuda_built()) {
    EXPECT_EQ(count, 0);
  }
}

// A CUDA device that cannot be used is refused up front with std::invalid_argument
// naming the op and the reason, never a driver error from deep inside.
TEST(Device, RequireAvailableRefusesAnUnusableCudaDevice) {
  EXPECT_NO_THROW(require_available(Device::cpu(), "op"));
  const int count = cuda_device_count();
  try {
    require_available(Device::cuda(count), "some_op");  // one past the last device: never usable
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("some_op: ", 0), 0u) << what;
    if (count == 0) {
      EXPECT_NE(what.find("no CUDA device is available (" + cuda_unavailable_reason() + ")"), std::string::npos)
          << what;
      if (!cuda_built()) {
        EXPECT_NE(what.find("built without CUDA"), std::string::npos) << what;
      }
    } else {
      EXPECT_NE(what.find("does not exist"), std::string::npos) << what;
    }
  }
  if (count > 0) {
    EXPECT_NO_THROW(require_available(Device::cuda(0), "op"));
    std::printf("a GPU is present: the no-device message is not checked here\n");
  } else {
    // Allocation is the backstop for every entry point that does not check first.
    EXPECT_THROW(Buffer<float>(4, Device::cuda(0)), std::invalid_argument);
  }
}

TEST(ReduceOpNames, RoundTrip) {
  for (ReduceOp op : kAllReduceOps) {
    EXPECT_EQ(parse_reduce_op(to_string(op)), op);
    EXPECT_EQ(visit_reduce_op(op, [](auto tag) { return decltype(tag)::value; }), op);
  }
  EXPECT_EQ(parse_reduce_op("amax"), ReduceOp::Max);
  try {
    parse_reduce_op("median");
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sum mean min max"), std::string::npos) << e.what();
  }
}

using BufferTest = DeviceTest;

TEST_P(BufferTest, RoundTripsThroughTheDeviceAndMoves) {
  std::vector<int32_t> host = {1, -2, 3, 4, 5};
  auto buffer = to_device(host, device());
  EXPECT_EQ(buffer.size(), 5);
  EXPECT_EQ(buffer.device(), device());
  EXPECT_EQ(buffer.to_host_vector(), host);
  Buffer<int32_t> moved = std::move(buffer);
  EXPECT_EQ(buffer.size(), 0);
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(moved.to(Device::cpu()).to_host_vector(), host);
  auto copy = moved.to(device());
  EXPECT_NE(copy.data(), moved.data());
  EXPECT_EQ(copy.to_host_vector(), host);
  copy.fill_bytes(0);
  EXPECT_EQ(copy.to_host_vector(), std::vector<int32_t>(5, 0));
  EXPECT_EQ(moved.to_host_vector(), host) << "a copy is deep";
  EXPECT_THROW(moved.matrix(2, 2), std::invalid_argument);
  EXPECT_EQ(Buffer<float>(0, device()).data(), nullptr);
}

TEST_P(BufferTest, ContextScratchGrowsAndIsAligned) {
  Context ctx(device());
  void* a = ctx.scratch(100);
  EXPECT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(ctx.scratch(50), a) << "a smaller request reuses the arena";
  EXPECT_NE(ctx.scratch(1 << 20), nullptr);
  ScratchLayout layout;
  auto first = layout.add<char>(3);
  auto second = layout.add<double>(4);
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(second % 256, 0u);
  EXPECT_GE(layout.bytes(), second + 32);
}

INSTANTIATE_TEST_SUITE_P(Devices, BufferTest, testing::ValuesIn(all_devices()), device_name);

TEST(Buffer, NegativeSizeIsRejected) { EXPECT_THROW(Buffer<float>(-1), std::invalid_argument); }

}  // namespace
}  // namespace edgewise::test

namespace edgewise::test {
namespace {
TEST(MemoryStats, TrackCurrentAndPeakBytes) {
  reset_peak_memory(Device::cpu());
  const auto before = memory_stats(Device::cpu());
  {
    Buffer<float> a(1000);
    Buffer<double> b(500);
    auto during = memory_stats(Device::cpu());
    EXPECT_EQ(during.current_bytes, before.current_bytes + 4000 + 4000);
  }
  const auto after = memory_stats(Device::cpu());
  EXPECT_EQ(after.current_bytes, before.current_bytes);
  EXPECT_GE(after.peak_bytes, before.current_bytes + 8000);
  reset_peak_memory(Device::cpu());
  EXPECT_EQ(memory_stats(Device::cpu()).peak_bytes, after.current_bytes);
}

TEST(MemoryStats, LargeHostBlocksAreReusedAndNotCountedWhileCached) {
  const char* setting = std::getenv("EDGEWISE_HOST_CACHE");
  const bool cache_on = !(setting && std::string(setting) == "0");  // the asan preset turns it off
  empty_host_cache();
  const std::size_t big = std::size_t{3} << 20;
  const auto base = memory_stats(Device::cpu());
  void* first = nullptr;
  {
    Buffer<char> a(static_cast<int64_t>(big));
    first = a.data();
    a.data()[big - 1] = 7;
    EXPECT_EQ(memory_stats(Device::cpu()).current_bytes, base.current_bytes + big);
  }
  auto cached = memory_stats(Device::cpu());
  EXPECT_EQ(cached.current_bytes, base.current_bytes) << "a cached block is not live";
  if (!cache_on) {
    EXPECT_EQ(cached.cached_bytes, 0u) << "EDGEWISE_HOST_CACHE=0 keeps nothing";
    return;
  }
  EXPECT_GE(cached.cached_bytes, big);
  {
    Buffer<char> b(static_cast<int64_t>(big - 100));  // same rounded size: the same block comes back
    EXPECT_EQ(static_cast<void*>(b.data()), first);
    EXPECT_EQ(memory_stats(Device::cpu()).cached_bytes, 0u);
    Buffer<char> c(static_cast<int64_t>(big));  // none left of that size: a fresh block
    EXPECT_NE(static_cast<void*>(c.data()), first);
  }
  empty_host_cache();
  // A block serves requests up to a fifth smaller (minibatches vary in size), the
  // smallest fitting block first; a request smaller still gets a block of its own.
  void* larger = nullptr;
  void* fitting = nullptr;
  {
    Buffer<char> a(static_cast<int64_t>(2 * big));
    Buffer<char> b(static_cast<int64_t>(big));
    larger = a.data();
    fitting = b.data();
  }
  {
    Buffer<char> c(static_cast<int64_t>(big - big / 6));
    EXPECT_EQ(static_cast<void*>(c.data()), fitting) << "the smallest cached block that fits";
    Buffer<char> d(static_cast<int64_t>(big));
    EXPECT_NE(static_cast<void*>(d.data()), larger) << "twice the size is too much slack";
    EXPECT_EQ(memory_stats(Device::cpu()).current_bytes, base.current_bytes + (big - big / 6) + big)
        << "requested bytes are counted, not the blocks that hold them";
  }
  empty_host_cache();
  EXPECT_EQ(memory_stats(Device::cpu()).cached_bytes, 0u);
}

// Page-locked host memory exists only where the CUDA runtime has a device: elsewhere
// the allocation says so with nullptr (callers fall back), never a throw.
TEST(PinnedHost, AllocatesWhereADeviceExistsAndIsNullptrElsewhere) {
  EXPECT_EQ(pinned_host_allocate(0), nullptr);
  pinned_host_free(nullptr);
  const std::size_t before = memory_stats(Device::cpu()).current_bytes;
  void* block = pinned_host_allocate(std::size_t{1} << 20);
  if (cuda_device_count() == 0) {
    EXPECT_EQ(block, nullptr) << "no device: no page-locked memory";
    return;
  }
  ASSERT_NE(block, nullptr);
  auto* bytes = static_cast<unsigned char*>(block);
  bytes[0] = 1;
  bytes[(std::size_t{1} << 20) - 1] = 2;
  EXPECT_EQ(bytes[0] + bytes[(std::size_t{1} << 20) - 1], 3);
  EXPECT_EQ(memory_stats(Device::cpu()).current_bytes, before) << "pinned blocks are not device_allocate's";
  pinned_host_free(block);
}

// The loader behind cuBLAS / cuSPARSE calls (EW_LAZY_FUNCTION): a symbol from a
// library opened on first use, the fallback path when the soname is not found, and
// errors naming the library and the symbol.
TEST(LazyLibrary, ResolvesOnFirstUseTriesTheFallbackAndNamesWhatIsMissing) {
  const auto cosine = reinterpret_cast<double (*)(double)>(detail::lazy_symbol("libm.so.6", "", "cos"));
  EXPECT_EQ(cosine(0.0), 1.0);
  EXPECT_EQ(EW_LAZY_FUNCTION("libc.so.6", "", strlen)("abc"), 3u);
  const auto via_fallback = reinterpret_cast<double (*)(double)>(
      detail::lazy_symbol("libedgewise_no_such_library.so.1", "libm.so.6", "sqrt"));
  EXPECT_EQ(via_fallback(4.0), 2.0);
  try {
    detail::lazy_symbol("libedgewise_no_such_library.so.2", "/nonexistent/libx.so", "f");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot load libedgewise_no_such_library.so.2 (needed for f)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(detail::lazy_symbol("libm.so.6", "", "edgewise_no_such_symbol"), std::runtime_error);
}
}  // namespace
}  // namespace edgewise::test
