// The no-overlap contract of segment_reduce, scatter_reduce and spmm (outputs must
// not share memory with inputs or with each other): with ctx.validate an aliased
// output is rejected before anything is written; without it the check is skipped.
#include <gtest/gtest.h>

#include <string>

#include "edgewise/kernels/scatter_reduce.hpp"
#include "edgewise/kernels/segment_reduce.hpp"
#include "edgewise/kernels/spmm.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using OverlapContractTest = DeviceTest;

// Runs `call` and expects std::invalid_argument mentioning "<a> and <b> overlap".
template <class F>
void expect_overlap_error(const std::string& a, const std::string& b, F call) {
  try {
    call();
    ADD_FAILURE() << "no throw for " << a << " / " << b;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(a + " and " + b + " overlap in memory"), std::string::npos) << e.what();
  }
}

TEST_P(OverlapContractTest, SegmentReduceRejectsOutputsAliasingInputs) {
  const Device dev = device();
  // [4, 1] values; out [2, 1] placed inside them, arg inside the offsets.
  auto values = to_device(std::vector<float>{1, 2, 3, 4}, dev);
  auto offsets = to_device(std::vector<int64_t>{0, 2, 4}, dev);
  auto buffer = poisoned<float>(2, dev);
  auto arg = poisoned<int64_t>(2, dev);
  Context ctx(dev);
  const auto before = values.to_host_vector();
  expect_overlap_error("out", "values", [&] {
    segment_reduce<float>(values.matrix(4, 1), offsets.view(), ReduceOp::Sum,
                          MatrixView<float>(values.data() + 2, 2, 1, dev), {}, ctx);
  });
  EXPECT_EQ(values.to_host_vector(), before) << "nothing written";
  expect_overlap_error("arg", "offsets", [&] {
    segment_reduce<float>(values.matrix(4, 1), offsets.view(), ReduceOp::Max, buffer.matrix(2, 1),
                          MatrixView<int64_t>(offsets.data() + 1, 2, 1, dev), ctx);
  });
  // Disjoint views pass.
  segment_reduce<float>(values.matrix(4, 1), offsets.view(), ReduceOp::Max, buffer.matrix(2, 1), arg.matrix(2, 1),
                        ctx);
  EXPECT_EQ(buffer.to_host_vector(), (std::vector<float>{2, 4}));
}

TEST_P(OverlapContractTest, ScatterReduceRejectsOutputsAliasingInputs) {
  const Device dev = device();
  auto values = to_device(std::vector<float>{1, 2, 3, 4}, dev);
  auto index = to_device(std::vector<int32_t>{0, 1, 0, 1}, dev);
  auto out = poisoned<float>(2, dev);
  Context ctx(dev);
  expect_overlap_error("out", "values", [&] {
    scatter_reduce<float, int32_t>(values.matrix(4, 1), index.view(), ReduceOp::Sum,
                                   MatrixView<float>(values.data() + 1, 2, 1, dev), {}, ctx);
  });
  expect_overlap_error("out", "arg", [&] {
    auto shared = poisoned<int64_t>(2, dev);
    scatter_reduce<float, int32_t>(values.matrix(4, 1), index.view(), ReduceOp::Max,
                                   MatrixView<float>(reinterpret_cast<float*>(shared.data()), 2, 1, dev),
                                   shared.matrix(2, 1), ctx);
  });
  scatter_reduce<float, int32_t>(values.matrix(4, 1), index.view(), ReduceOp::Sum, out.matrix(2, 1), {}, ctx);
  EXPECT_EQ(out.to_host_vector(), (std::vector<float>{4, 6}));
}

TEST_P(OverlapContractTest, SpmmAndItsBackwardRejectOutputsAliasingInputs) {
  const Device dev = device();
  auto offsets = to_device(std::vector<int64_t>{0, 1, 2}, dev);
  auto indices = to_device(std::vector<int32_t>{1, 0}, dev);
  auto x = to_device(std::vector<float>{1, 2, 3, 4}, dev);  // [2, 2]
  auto weights = to_device(std::vector<float>{1, 1}, dev);
  Context ctx(dev);
  expect_overlap_error("out", "x", [&] {
    spmm<float, int32_t>(offsets.view(), indices.view(), {}, x.matrix(2, 2), ReduceOp::Sum, x.matrix(2, 2), {}, ctx);
  });
  auto wide = poisoned<float>(4, dev);
  expect_overlap_error("out", "weights", [&] {
    spmm<float, int32_t>(offsets.view(), indices.view(), VectorView<const float>(wide.data() + 2, 2, dev),
                         x.matrix(2, 2), ReduceOp::Sum, wide.matrix(2, 2), {}, ctx);
  });
  // The transposed graph of the same two edges; grad_x aliasing grad_out.
  auto grad_out = to_device(std::vector<float>{1, 1, 1, 1}, dev);
  expect_overlap_error("grad_x", "grad_out", [&] {
    spmm_backward<float, int32_t>(offsets.view(), indices.view(), {}, {}, grad_out.matrix(2, 2), ReduceOp::Sum, {},
                                  grad_out.matrix(2, 2), ctx);
  });
  auto grad_w = poisoned<float>(2, dev);
  expect_overlap_error("grad_w", "x", [&] {
    spmm_weight_backward<float, int32_t>(offsets.view(), indices.view(), x.matrix(2, 2), grad_out.matrix(2, 2),
                                         ReduceOp::Sum, {}, VectorView<float>(x.data(), 2, dev), ctx);
  });
  spmm_weight_backward<float, int32_t>(offsets.view(), indices.view(), x.matrix(2, 2), grad_out.matrix(2, 2),
                                       ReduceOp::Sum, {}, grad_w.view(), ctx);
  EXPECT_EQ(grad_w.to_host_vector(), (std::vector<float>{3 + 4, 1 + 2}));
}

INSTANTIATE_TEST_SUITE_P(Devices, OverlapContractTest, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
