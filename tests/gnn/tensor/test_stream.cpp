// The engine's per-thread contexts and StreamGuard (bookkeeping: no stream is used,
// so these run without a GPU), and graph building / sampling under a StreamGuard
// (its CUDA case runs where a GPU exists).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "edgewise/gnn/sampling/layerwise_sampler.hpp"
#include "edgewise/gnn/sampling/seed_sampler.hpp"
#include "edgewise/gnn/sampling/neighbor_sampler.hpp"
#include "edgewise/gnn/tensor/stream.hpp"
#include "test_support.hpp"

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

// Graph::from_csr's uploads, the SeedSampler's tree and the NeighborSampler's blocks
// on the stream a StreamGuard set (CUDA: cudaStreamPerThread, handle 0x2, a real
// stream that needs no creating) give what the CPU gives.
class GuardedEngineWork : public test::DeviceTest {
 protected:
  void SetUp() override {
    test::DeviceTest::SetUp();
    if (device().is_cuda()) guard_.emplace(device(), reinterpret_cast<void*>(std::uintptr_t{2}));
  }
  std::optional<StreamGuard> guard_;
};

TEST_P(GuardedEngineWork, FromCsrUploadsTheCsrAsGiven) {
  const std::vector<int64_t> offsets{0, 2, 3, 3, 5};
  const std::vector<int32_t> sources{1, 3, 0, 0, 2};
  const std::vector<float> weights{0.5f, 1.0f, 2.0f, 3.0f, 4.0f};
  const Graph g = Graph::from_csr(offsets, sources, weights, device());
  ASSERT_EQ(g.device(), device());
  EXPECT_EQ(g.offsets().to(Device::cpu()).to_host_vector(), offsets);
  EXPECT_EQ(g.sources().to(Device::cpu()).to_host_vector(), sources);
  EXPECT_EQ(g.destinations().to(Device::cpu()).to_host_vector(), (std::vector<int32_t>{0, 0, 1, 3, 3}));
  EXPECT_EQ(g.edge_ids().to(Device::cpu()).to_host_vector(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(g.edge_weight().to_host_vector(), weights);
}

TEST_P(GuardedEngineWork, SamplersGiveTheCpuResults) {
  const std::vector<int64_t> nodes{1, 3, 4, 6, 8};
  SeedSamplerOptions on_device, on_cpu;
  on_device.device = device();
  SeedSampler seeds = SeedSampler::uniform(10, nodes, on_device);
  const SeedSampler cpu_seeds = SeedSampler::uniform(10, nodes, on_cpu);
  EXPECT_FLOAT_EQ(seeds.total(), 5.0f);
  const SeedBatch got = seeds.sample(3, 11), want = cpu_seeds.sample(3, 11);
  EXPECT_EQ(got.draws, want.draws);
  EXPECT_EQ(got.nodes, want.nodes);
  seeds.update_priorities(std::vector<int64_t>{3, 8}, std::vector<float>{0.0f, 2.5f});
  EXPECT_FLOAT_EQ(seeds.total(), 5.5f);

  const std::vector<int64_t> src{0, 1, 2, 3, 4, 0, 2, 4, 1, 3}, dst{1, 2, 3, 4, 0, 2, 4, 1, 3, 0};
  const Graph graph = Graph::from_coo(src, dst, 5);
  NeighborSamplerOptions deliver;
  deliver.device = device();
  const NeighborSampler sampler(graph, {2, 2}, deliver), cpu_sampler(graph, {2, 2});
  Generator a(5), b(5);
  const std::vector<int64_t> batch{0, 3};
  const MiniBatch mb = sampler.sample(batch, a), cpu_mb = cpu_sampler.sample(batch, b);
  ASSERT_EQ(mb.blocks.size(), cpu_mb.blocks.size());
  for (size_t l = 0; l < mb.blocks.size(); ++l) {
    EXPECT_EQ(mb.blocks[l].graph.device(), device());
    EXPECT_EQ(mb.blocks[l].graph.offsets().to(Device::cpu()).to_host_vector(),
              cpu_mb.blocks[l].graph.offsets().to_host_vector());
    EXPECT_EQ(mb.blocks[l].graph.sources().to(Device::cpu()).to_host_vector(),
              cpu_mb.blocks[l].graph.sources().to_host_vector());
    EXPECT_EQ(mb.blocks[l].src_nodes.to_host_vector(), cpu_mb.blocks[l].src_nodes.to_host_vector());
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, GuardedEngineWork, testing::ValuesIn(test::all_devices()), test::device_name);

}  // namespace
}  // namespace edgewise::gnn
