// The min/max tie rules of the reduction backward (TieRule: First routes an output's
// gradient to the forward's arg, Split divides it evenly among the elements equal to
// the output) through segment_reduce_backward, scatter_reduce_backward and
// spmm_full_backward, on inputs built to tie (small integers, duplicated rows and
// edges, NaN), against the sequential oracle and by property.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "edgewise/kernels/reduce_backward.hpp"
#include "edgewise/kernels/spmm.hpp"
#include "reduce_backward_ref.hpp"
#include "scatter_reduce_ref.hpp"
#include "segment_reduce_ref.hpp"
#include "spmm_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using TieRuleTest = DeviceTest;
constexpr ReduceOp kExtrema[] = {ReduceOp::Min, ReduceOp::Max};

// Values in {-1, 0, 1, 2} (ties everywhere), a NaN now and then.
template <class T>
std::vector<T> tied_values(std::mt19937_64& rng, int64_t n, bool with_nan) {
  std::uniform_int_distribution<int> small(-1, 2);
  std::uniform_int_distribution<int> rare(0, 40);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) x = with_nan && rare(rng) == 0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(small(rng));
  return v;
}

std::vector<std::vector<int64_t>> rows_of_offsets(const std::vector<int64_t>& offsets) {
  std::vector<std::vector<int64_t>> rows(offsets.size() - 1);
  for (size_t s = 0; s + 1 < offsets.size(); ++s) {
    for (int64_t r = offsets[s]; r < offsets[s + 1]; ++r) rows[s].push_back(r);
  }
  return rows;
}

template <class T>
std::vector<T> run_segment_backward(Device device, const std::vector<T>& values, int64_t C,
                                    const std::vector<int64_t>& offsets, ReduceOp op, const std::vector<T>& out,
                                    const std::vector<int64_t>& arg, const std::vector<T>& grad_out, TieRule rule) {
  const int64_t M = static_cast<int64_t>(values.size()) / C, S = static_cast<int64_t>(offsets.size()) - 1;
  auto d_values = to_device(values, device);
  auto d_offsets = to_device(offsets, device);
  auto d_out = to_device(out, device);
  auto d_arg = to_device(arg, device);
  auto d_grad_out = to_device(grad_out, device);
  auto d_grad = poisoned<T>(M * C, device);
  MatrixView<const int64_t> arg_view;
  if (!arg.empty()) arg_view = d_arg.matrix(S, C);
  Context ctx(device);
  segment_reduce_backward<T>(d_values.matrix(M, C), d_offsets.view(), op, d_out.matrix(S, C), arg_view,
                             d_grad_out.matrix(S, C), d_grad.matrix(M, C), ctx, rule);
  return d_grad.to_host_vector();
}

template <class T, class I>
std::vector<T> run_scatter_backward(Device device, const std::vector<T>& values, int64_t C, const std::vector<I>& index,
                                    int64_t S, ReduceOp op, const std::vector<T>& out, const std::vector<int64_t>& arg,
                                    const std::vector<T>& grad_out, TieRule rule) {
  const int64_t M = static_cast<int64_t>(values.size()) / C;
  auto d_values = to_device(values, device);
  auto d_index = to_device(index, device);
  auto d_out = to_device(out, device);
  auto d_arg = to_device(arg, device);
  auto d_grad_out = to_device(grad_out, device);
  auto d_grad = poisoned<T>(M * C, device);
  MatrixView<const int64_t> arg_view;
  if (!arg.empty()) arg_view = d_arg.matrix(S, C);
  Context ctx(device);
  scatter_reduce_backward<T, I>(d_values.matrix(M, C), d_index.view(), op, d_out.matrix(S, C), arg_view,
                                d_grad_out.matrix(S, C), d_grad.matrix(M, C), ctx, rule);
  return d_grad.to_host_vector();
}

template <class T>
::testing::AssertionResult close_to_double(const std::vector<T>& got, const std::vector<double>& want, double tol) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]);
    if (!(std::fabs(g - want[i]) <= tol * (1 + std::fabs(want[i]))) && !(std::isnan(g) && std::isnan(want[i]))) {
      return ::testing::AssertionFailure() << "[" << i << "] got " << g << ", expected " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// Segment (hub, empty and singleton segments) and scatter (shuffled rows, both index
// types) backward of min/max under both rules, against the oracle.
template <class T>
void extrema_backward_match_reference(Device device, uint64_t salt, double tol) {
  auto rng = rng_for(salt);
  for (int64_t C : {1, 3, 16}) {
    for (bool with_nan : {false, true}) {
      auto offsets = offsets_from_lengths(segment_lengths(rng, Regime::SparseEmpty, 50, 6));
      offsets.push_back(offsets.back() + 900);  // a hub (pieces on every backend)
      offsets.push_back(offsets.back() + 1);
      const int64_t M = offsets.back(), S = static_cast<int64_t>(offsets.size()) - 1;
      const auto values = tied_values<T>(rng, M * C, with_nan);
      const auto grad_out = random_values<T>(rng, S * C, -1, 1);
      std::vector<int64_t> index64;
      for (int64_t s = 0; s < S; ++s) {
        for (int64_t r = offsets[s]; r < offsets[s + 1]; ++r) index64.push_back(s);
      }
      const std::vector<int32_t> index32(index64.begin(), index64.end());
      for (ReduceOp op : kExtrema) {
        const auto ref = reference::segment_reduce_ref(values, C, offsets, op);
        for (TieRule rule : {TieRule::First, TieRule::Split, TieRule::SplitWithZeroBase}) {
          SCOPED_TRACE(detail::concat("op=", to_string(op), " rule=", to_string(rule), " C=", C, " nan=", with_nan));
          // Split reads no arg: pass none, so a driver that reads it anyway fails.
          const std::vector<int64_t> arg = rule == TieRule::First ? ref.arg : std::vector<int64_t>{};
          const auto want = reference::reduce_backward_ref(values, C, rows_of_offsets(offsets), M, op, ref.out,
                                                           ref.arg, grad_out, rule);
          EXPECT_TRUE(close_to_double(run_segment_backward(device, values, C, offsets, op, ref.out, arg, grad_out, rule),
                                      want, tol))
              << "segment";
          EXPECT_TRUE(close_to_double(
              run_scatter_backward(device, values, C, index64, S, op, ref.out, arg, grad_out, rule), want, tol))
              << "scatter int64";
          EXPECT_TRUE(close_to_double(
              run_scatter_backward(device, values, C, index32, S, op, ref.out, arg, grad_out, rule), want, tol))
              << "scatter int32";
        }
      }
    }
  }
}

TEST_P(TieRuleTest, SegmentAndScatterExtremaMatchReferenceFloat) {
  extrema_backward_match_reference<float>(device(), 901, 1e-6);
}
TEST_P(TieRuleTest, SegmentAndScatterExtremaMatchReferenceDouble) {
  extrema_backward_match_reference<double>(device(), 902, 1e-12);
}

// Property: under Split every tied element of an output gets the same share and the
// shares add up to the output's gradient; untied elements get 0. Under First one
// element (the lowest tied row) gets it all.
TEST_P(TieRuleTest, SplitSharesAddUpToTheOutputGradient) {
  const std::vector<double> values = {3, 1, 3, 3, 2, 7, -1, -1};  // rows 0-4 -> output 0, 5 -> 1, 6-7 -> 2
  const std::vector<int64_t> index = {0, 0, 0, 0, 0, 1, 2, 2};
  const std::vector<double> out = {3, 7, -1};
  const std::vector<double> grad_out = {0.9, -2, 4};
  const auto split = run_scatter_backward(device(), values, 1, index, 3, ReduceOp::Max, out, {}, grad_out,
                                          TieRule::Split);
  EXPECT_EQ(split, (std::vector<double>{0.3, 0, 0.3, 0.3, 0, -2, 2, 2}));
  const auto first = run_scatter_backward(device(), values, 1, index, 3, ReduceOp::Max, out, {0, 5, 6}, grad_out,
                                          TieRule::First);
  EXPECT_EQ(first, (std::vector<double>{0.9, 0, 0, 0, 0, -2, 4, 0}));
  const auto segment = run_segment_backward(device(), values, 1, {0, 5, 6, 8}, ReduceOp::Max, out, {}, grad_out,
                                            TieRule::Split);
  EXPECT_EQ(segment, split);
}

// SplitWithZeroBase: an output of 0 counts the zero it was reduced onto as one more
// share (torch's scatter_reduce(include_self=False) onto zeros, PyG), others as Split.
TEST_P(TieRuleTest, ZeroBaseAddsAShareAtZeroOutputsOnly) {
  const std::vector<double> values = {0, 0, 0, 4, 4, -2};  // rows 0-2 -> 0 (out 0), 3-4 -> 1 (out 4), 5 -> 2
  const std::vector<int64_t> index = {0, 0, 0, 1, 1, 2};
  const std::vector<double> out = {0, 4, -2};
  const std::vector<double> grad_out = {1, 1, 1};
  const auto zero_base = run_scatter_backward(device(), values, 1, index, 3, ReduceOp::Max, out, {}, grad_out,
                                              TieRule::SplitWithZeroBase);
  EXPECT_EQ(zero_base, (std::vector<double>{0.25, 0.25, 0.25, 0.5, 0.5, 1}));
  const auto segment = run_segment_backward(device(), values, 1, {0, 3, 5, 6}, ReduceOp::Max, out, {}, grad_out,
                                            TieRule::SplitWithZeroBase);
  EXPECT_EQ(segment, zero_base);
}

// The default (no tie_rule argument) is First: existing callers keep their gradients.
TEST_P(TieRuleTest, DefaultIsFirst) {
  const std::vector<float> values = {5, 5, 5};
  const std::vector<int64_t> offsets = {0, 3};
  auto d_values = to_device(values, device());
  auto d_offsets = to_device(offsets, device());
  auto d_out = to_device(std::vector<float>{5}, device());
  auto d_arg = to_device(std::vector<int64_t>{0}, device());
  auto d_grad_out = to_device(std::vector<float>{1}, device());
  auto d_grad = poisoned<float>(3, device());
  Context ctx(device());
  segment_reduce_backward<float>(d_values.matrix(3, 1), d_offsets.view(), ReduceOp::Max, d_out.matrix(1, 1),
                                 d_arg.matrix(1, 1), d_grad_out.matrix(1, 1), d_grad.matrix(3, 1), ctx);
  EXPECT_EQ(d_grad.to_host_vector(), (std::vector<float>{1, 0, 0}));
  // First still needs the arg; Split does not.
  EXPECT_THROW(segment_reduce_backward<float>(d_values.matrix(3, 1), d_offsets.view(), ReduceOp::Max,
                                              d_out.matrix(1, 1), {}, d_grad_out.matrix(1, 1), d_grad.matrix(3, 1), ctx),
               std::invalid_argument);
}

// spmm_full_backward with Split against an oracle built here from the forward edges:
// messages m_e = w_e x[src_e] (duplicate edges and equal features make ties), each
// output's gradient shared among its tied messages, then dL/dx[u] = sum over edges
// from u of w_e g_e and dL/dw_e = sum_c g_e[c] x[src_e, c].
template <class T>
void spmm_split_matches_oracle(Device device, uint64_t salt, bool weighted, TieRule rule, double tol) {
  auto rng = rng_for(salt);
  const int64_t N = 40, C = 5;
  auto offsets = offsets_from_lengths(segment_lengths(rng, Regime::SparseEmpty, 30, 8));
  offsets.push_back(offsets.back() + 400);  // a hub
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1, E = offsets.back();
  std::uniform_int_distribution<int32_t> node(0, N - 1);
  std::vector<int32_t> indices(static_cast<size_t>(E));
  for (auto& i : indices) i = node(rng);
  for (int64_t e = 0; e + 1 < E; e += 5) indices[e + 1] = indices[e];  // duplicate edges
  const auto x = tied_values<T>(rng, N * C, false);
  std::vector<T> w;
  if (weighted) {
    std::uniform_int_distribution<int> pick(1, 2);
    for (int64_t e = 0; e < E; ++e) w.push_back(static_cast<T>(pick(rng)));  // 1 or 2: still ties
  }
  const auto grad_out = random_values<T>(rng, S * C, -1, 1);
  const auto t = reference::transpose_ref(offsets, indices, N);
  for (ReduceOp op : kExtrema) {
    SCOPED_TRACE(detail::concat("op=", to_string(op), " weighted=", weighted, " rule=", to_string(rule)));
    const auto fwd = reference::spmm_ref(offsets, indices, w, x, C, op);
    std::vector<T> messages(static_cast<size_t>(E * C));
    for (int64_t e = 0; e < E; ++e) {
      for (int64_t c = 0; c < C; ++c) messages[e * C + c] = (w.empty() ? T(1) : w[e]) * x[indices[e] * C + c];
    }
    const auto g = reference::reduce_backward_ref(messages, C, rows_of_offsets(offsets), E, op, fwd.out, fwd.arg,
                                                  grad_out, rule);
    std::vector<double> want_x(static_cast<size_t>(N * C), 0.0), want_w(static_cast<size_t>(E), 0.0);
    for (int64_t e = 0; e < E; ++e) {
      const double we = w.empty() ? 1.0 : static_cast<double>(w[e]);
      for (int64_t c = 0; c < C; ++c) {
        want_x[indices[e] * C + c] += we * g[e * C + c];
        want_w[e] += g[e * C + c] * static_cast<double>(x[indices[e] * C + c]);
      }
    }
    auto d_offsets = to_device(offsets, device);
    auto d_indices = to_device(indices, device);
    auto d_w = to_device(w, device);
    auto d_x = to_device(x, device);
    auto d_out = to_device(fwd.out, device);
    auto d_grad_out = to_device(grad_out, device);
    auto d_t_offsets = to_device(t.offsets, device);
    auto d_t_edge_ids = to_device(t.edge_ids, device);
    auto d_grad_x = poisoned<T>(N * C, device);
    auto d_grad_w = poisoned<T>(E, device);
    VectorView<const T> w_view;
    VectorView<T> grad_w_view;
    if (weighted) {
      w_view = d_w.view();
      grad_w_view = d_grad_w.view();
    }
    Context ctx(device);
    spmm_full_backward<T, int32_t>(d_offsets.view(), d_indices.view(), w_view, d_x.matrix(N, C), op,
                                   d_out.matrix(S, C), {}, d_grad_out.matrix(S, C), d_t_offsets.view(),
                                   d_t_edge_ids.view(), d_grad_x.matrix(N, C), grad_w_view, ctx, rule);
    EXPECT_TRUE(close_to_double(d_grad_x.to_host_vector(), want_x, tol)) << "grad_x";
    if (weighted) {
      EXPECT_TRUE(close_to_double(d_grad_w.to_host_vector(), want_w, tol)) << "grad_w";
    }
  }
}

TEST_P(TieRuleTest, SpmmFullBackwardSplitMatchesOracle) {
  for (bool weighted : {false, true}) {
    for (TieRule rule : {TieRule::Split, TieRule::SplitWithZeroBase}) {
      spmm_split_matches_oracle<float>(device(), 911, weighted, rule, 1e-5);
      spmm_split_matches_oracle<double>(device(), 912, weighted, rule, 1e-12);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, TieRuleTest, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
