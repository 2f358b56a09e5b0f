// Shape ops: forward against index arithmetic, gradients against finite differences
// of the same arithmetic in double, on every device; bad shapes are named.
#include <gtest/gtest.h>

#include <string>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/autograd/shape_ops.hpp"
#include "gradcheck.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::Tensor;
using gnn::Variable;

using ShapeOpsTest = DeviceTest;

TEST_P(ShapeOpsTest, SliceRowsPadRowsAndConcatRows) {
  for (auto [begin, count] : {std::pair<int64_t, int64_t>{0, 6}, {2, 3}, {5, 1}, {0, 0}}) {
    check_gradients({"slice_rows " + std::to_string(begin) + "+" + std::to_string(count),
                     {{6, 3}},
                     {},
                     [=](const std::vector<Variable>& v) { return gnn::slice_rows(v[0], begin, count); },
                     [=](const std::vector<Flat>& x) {
                       return Flat(x[0].begin() + begin * 3, x[0].begin() + (begin + count) * 3);
                     }},
                    device(), 21);
  }
  for (int64_t rows : {4, 9}) {
    check_gradients({"pad_rows " + std::to_string(rows),
                     {{4, 2}},
                     {},
                     [=](const std::vector<Variable>& v) { return gnn::pad_rows(v[0], rows); },
                     [=](const std::vector<Flat>& x) {
                       Flat y(static_cast<size_t>(rows * 2), 0.0);
                       std::copy(x[0].begin(), x[0].end(), y.begin());
                       return y;
                     }},
                    device(), 22);
  }
  check_gradients({"concat_rows",
                   {{2, 3}, {0, 3}, {4, 3}},
                   {},
                   [](const std::vector<Variable>& v) { return gnn::concat_rows(v); },
                   [](const std::vector<Flat>& x) {
                     Flat y = x[0];
                     y.insert(y.end(), x[2].begin(), x[2].end());
                     return y;
                   }},
                  device(), 23);
  check_gradients({"concat_rows, one part without gradient",
                   {{2, 2}, {3, 2}},
                   {true, false},
                   [](const std::vector<Variable>& v) { return gnn::concat_rows(v); },
                   [](const std::vector<Flat>& x) {
                     Flat y = x[0];
                     y.insert(y.end(), x[1].begin(), x[1].end());
                     return y;
                   }},
                  device(), 24);
}

TEST_P(ShapeOpsTest, ReshapeAndBlockDiagonal) {
  // reshape feeds a matmul so its gradient passes through a real op.
  check_gradients({"reshape then matmul",
                   {{2, 6}, {4, 2}},
                   {},
                   [](const std::vector<Variable>& v) { return gnn::matmul(gnn::reshape(v[0], 3, 4), v[1]); },
                   [](const std::vector<Flat>& x) {
                     Flat y(6, 0.0);
                     for (int i = 0; i < 3; ++i)
                       for (int k = 0; k < 4; ++k)
                         for (int j = 0; j < 2; ++j) y[i * 2 + j] += x[0][i * 4 + k] * x[1][k * 2 + j];
                     return y;
                   }},
                  device(), 25);
  for (int64_t blocks : {1, 3}) {
    check_gradients({"block_diagonal " + std::to_string(blocks),
                     {{6, 2}},
                     {},
                     [=](const std::vector<Variable>& v) { return gnn::block_diagonal(v[0], blocks); },
                     [=](const std::vector<Flat>& x) {
                       const int64_t rows = 6, cols = 2 * blocks, per = rows / blocks;
                       Flat y(static_cast<size_t>(rows * cols), 0.0);
                       for (int64_t r = 0; r < rows; ++r)
                         for (int64_t c = 0; c < 2; ++c) y[r * cols + (r / per) * 2 + c] = x[0][r * 2 + c];
                       return y;
                     }},
                    device(), 26);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ShapeOpsTest, testing::ValuesIn(all_devices()), device_name);

TEST(ShapeOps, BadShapesAreNamed) {
  Variable x(Tensor::zeros(4, 3));
  expect_invalid([&] { gnn::slice_rows(x, 2, 3); }, "slice_rows: rows [2, 5) must lie within x's 4 rows");
  expect_invalid([&] { gnn::slice_rows(x, -1, 1); }, "slice_rows");
  expect_invalid([&] { gnn::pad_rows(x, 3); }, "pad_rows: rows (3)");
  expect_invalid([&] { gnn::concat_rows({x, Variable(Tensor::zeros(1, 2))}); }, "parts[1] has 2 columns");
  expect_invalid([&] { gnn::concat_rows({}); }, "parts must not be empty");
  expect_invalid([&] { gnn::reshape(x, 5, 2); }, "reshape: [5, 2]");
  expect_invalid([&] { gnn::block_diagonal(x, 3); }, "num_blocks (3)");
}

}  // namespace
}  // namespace edgewise::test
