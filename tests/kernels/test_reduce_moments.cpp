// var and std (PyG's population variance and clamped, masked std) through
// segment_reduce, scatter_reduce and spmm: numerics that a sum-of-squares
// accumulator gets wrong (large offsets), hubs split into pieces and per-thread
// partials (Chan's merge), PyG's clamp/mask, and the backward of every op against
// an oracle and, in double, against finite differences.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <random>

#include "edgewise/kernels/common/reducer.hpp"
#include "edgewise/kernels/reduce_backward.hpp"
#include "edgewise/kernels/scatter_reduce.hpp"
#include "edgewise/kernels/segment_reduce.hpp"
#include "edgewise/kernels/spmm.hpp"
#include "reduce_backward_ref.hpp"
#include "segment_reduce_ref.hpp"
#include "spmm_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using ReduceMomentsTest = DeviceTest;

template <class T>
std::vector<T> run_segment(Device device, const std::vector<T>& values, int64_t C, const std::vector<int64_t>& offsets,
                           ReduceOp op) {
  const int64_t M = static_cast<int64_t>(values.size()) / C, S = static_cast<int64_t>(offsets.size()) - 1;
  auto d_values = to_device(values, device);
  auto d_offsets = to_device(offsets, device);
  auto d_out = poisoned<T>(S * C, device);
  Context ctx(device);
  segment_reduce<T>(d_values.matrix(M, C), d_offsets.view(), op, d_out.matrix(S, C), {}, ctx);
  return d_out.to_host_vector();
}

template <class T>
std::vector<T> run_scatter(Device device, const std::vector<T>& values, int64_t C, const std::vector<int64_t>& index,
                           int64_t S, ReduceOp op) {
  const int64_t M = static_cast<int64_t>(values.size()) / C;
  auto d_values = to_device(values, device);
  auto d_index = to_device(index, device);
  auto d_out = poisoned<T>(S * C, device);
  Context ctx(device);
  scatter_reduce<T, int64_t>(d_values.matrix(M, C), d_index.view(), op, d_out.matrix(S, C), {}, ctx);
  return d_out.to_host_vector();
}

template <class T>
std::vector<T> run_spmm(Device device, const std::vector<int64_t>& offsets, const std::vector<int32_t>& indices,
                        const std::vector<T>& weights, const std::vector<T>& x, int64_t N, int64_t C, ReduceOp op,
                        std::vector<int64_t>* arg = nullptr) {
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1;
  auto d_offsets = to_device(offsets, device);
  auto d_indices = to_device(indices, device);
  auto d_weights = to_device(weights, device);
  auto d_x = to_device(x, device);
  auto d_out = poisoned<T>(S * C, device);
  auto d_arg = poisoned<int64_t>(arg != nullptr ? S * C : 0, device);
  VectorView<const T> w;
  if (!weights.empty()) w = d_weights.view();
  MatrixView<int64_t> arg_view;
  if (arg != nullptr) arg_view = d_arg.matrix(S, C);
  Context ctx(device);
  spmm<T, int32_t>(d_offsets.view(), d_indices.view(), w, d_x.matrix(N, C), op, d_out.matrix(S, C), arg_view, ctx);
  if (arg != nullptr) *arg = d_arg.to_host_vector();
  return d_out.to_host_vector();
}

// The variance a sum-of-squares accumulator gives (E[x^2] - E[x]^2 in T, sequential):
// what the tests below must reject.
template <class T>
std::vector<T> naive_variance(const std::vector<T>& values, int64_t C, const std::vector<int64_t>& offsets) {
  std::vector<T> out;
  for (size_t s = 0; s + 1 < offsets.size(); ++s) {
    for (int64_t c = 0; c < C; ++c) {
      T sum = 0, squares = 0;
      for (int64_t r = offsets[s]; r < offsets[s + 1]; ++r) {
        sum += values[r * C + c];
        squares += values[r * C + c] * values[r * C + c];
      }
      const T n = static_cast<T>(offsets[s + 1] - offsets[s]);
      out.push_back(n > 0 ? squares / n - (sum / n) * (sum / n) : T(0));
    }
  }
  return out;
}

// Largest |a - b| / |b| over elements (b: the oracle).
template <class T>
double max_relative_error(const std::vector<T>& a, const std::vector<T>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])) / std::max(1e-300, std::fabs(double(b[i]))));
  }
  return worst;
}

// Values mean + N(0, 1): the variance is ~1 and mean^2 dwarfs it.
template <class T>
std::vector<T> offset_noise(std::mt19937_64& rng, int64_t n, double mean) {
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<T>(mean + noise(rng));
  return v;
}

// Large offsets: double around 1e8 (x^2 ~ 1e16 has an ulp of 2), float around 1e4
// (x^2 ~ 1e8, ulp 8). The oracle is two-pass long double. The last segment is a hub
// longer than a CPU piece (3 x 2^18 rows at C = 4), so its pieces merge with Chan's
// formula; the naive accumulator must fail the same bound (the test can fail).
template <class T>
void expect_large_offsets_accurate(Device device, double mean, double rtol) {
  auto rng = rng_for(sizeof(T) == 8 ? 501 : 502);
  const int64_t C = 4;
  const auto offsets = offsets_from_lengths({64, 1, 0, 200, 3 * (int64_t{1} << 18) + 5});
  const auto values = offset_noise<T>(rng, offsets.back() * C, mean);
  const auto ref = reference::segment_reduce_ref(values, C, offsets, ReduceOp::Var);
  const auto got = run_segment(device, values, C, offsets, ReduceOp::Var);
  // Segment 1 (one row) and 2 (empty) have variance 0, exactly.
  for (int64_t c = 0; c < C; ++c) {
    EXPECT_EQ(got[1 * C + c], T(0));
    EXPECT_EQ(got[2 * C + c], T(0));
  }
  std::vector<T> got_nonzero, ref_nonzero, naive_nonzero;
  const auto naive = naive_variance(values, C, offsets);
  for (int64_t s : {0, 3, 4}) {
    for (int64_t c = 0; c < C; ++c) {
      got_nonzero.push_back(got[s * C + c]);
      ref_nonzero.push_back(ref.out[s * C + c]);
      naive_nonzero.push_back(naive[s * C + c]);
    }
  }
  EXPECT_LT(max_relative_error(got_nonzero, ref_nonzero), rtol) << "segment_reduce var";
  EXPECT_GT(max_relative_error(naive_nonzero, ref_nonzero), rtol) << "the naive accumulator should fail this bound";

  // The same rows through scatter_reduce (per-thread partials merged with Chan) and
  // spmm (one edge per row, identity gather).
  std::vector<int64_t> index;
  for (size_t s = 0; s + 1 < offsets.size(); ++s) {
    for (int64_t r = offsets[s]; r < offsets[s + 1]; ++r) index.push_back(static_cast<int64_t>(s));
  }
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1;
  const int threads = omp_get_max_threads();
  omp_set_num_threads(4);  // several partials even on a small machine
  const auto scattered = run_scatter(device, values, C, index, S, ReduceOp::Var);
  omp_set_num_threads(threads);
  std::vector<int32_t> identity(static_cast<size_t>(offsets.back()));
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int32_t>(i);
  const auto gathered = run_spmm<T>(device, offsets, identity, {}, values, offsets.back(), C, ReduceOp::Var);
  std::vector<T> sc, gt;
  for (int64_t s : {0, 3, 4}) {
    for (int64_t c = 0; c < C; ++c) {
      sc.push_back(scattered[s * C + c]);
      gt.push_back(gathered[s * C + c]);
    }
  }
  EXPECT_LT(max_relative_error(sc, ref_nonzero), rtol) << "scatter_reduce var";
  EXPECT_LT(max_relative_error(gt, ref_nonzero), rtol) << "spmm var";
}

TEST_P(ReduceMomentsTest, LargeOffsetsDoNotCancelInDouble) { expect_large_offsets_accurate<double>(device(), 1e8, 1e-6); }
TEST_P(ReduceMomentsTest, LargeOffsetsDoNotCancelInFloat) { expect_large_offsets_accurate<float>(device(), 1e4, 2e-2); }

// PyG's StdAggregation: sqrt(clamp(var, 1e-5)), then outputs <= sqrt(1e-5) are 0.
// Empty, one element and duplicates (var 0) give 0; var 0.9e-5 is clamped and masked;
// var 1.1e-5 is not; var is the population variance.
TEST_P(ReduceMomentsTest, StdClampsAndMasksLikePyG) {
  const double a = std::sqrt(0.9e-5), b = std::sqrt(1.1e-5);
  const std::vector<double> values = {7, 3, 3, 3, 1 - a, 1 + a, 2 - b, 2 + b, 1, 2, 3, 4};
  const std::vector<int64_t> offsets = {0, 0, 1, 4, 6, 8, 12};
  const auto var = run_segment(device(), values, 1, offsets, ReduceOp::Var);
  const auto std_dev = run_segment(device(), values, 1, offsets, ReduceOp::Std);
  const std::vector<double> want_var = {0, 0, 0, 0.9e-5, 1.1e-5, 1.25};
  for (size_t s = 0; s < want_var.size(); ++s) EXPECT_NEAR(var[s], want_var[s], 1e-15) << "segment " << s;
  const std::vector<double> want_std = {0, 0, 0, 0, std::sqrt(1.1e-5), std::sqrt(1.25)};
  for (size_t s = 0; s < want_std.size(); ++s) EXPECT_NEAR(std_dev[s], want_std[s], 1e-13) << "segment " << s;
  // float: the same thresholds in float arithmetic.
  const std::vector<float> fvalues(values.begin(), values.end());
  const auto fstd = run_segment(device(), fvalues, 1, offsets, ReduceOp::Std);
  EXPECT_EQ(fstd[3], 0.0f);
  EXPECT_NEAR(fstd[4], std::sqrt(1.1e-5), 1e-6);
  // The same through scatter_reduce and spmm.
  std::vector<int64_t> index = {1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 5, 5};
  EXPECT_EQ(run_scatter(device(), values, 1, index, 6, ReduceOp::Std)[3], 0.0);
  EXPECT_NEAR(run_scatter(device(), values, 1, index, 6, ReduceOp::Std)[5], std::sqrt(1.25), 1e-13);
}

// The result does not depend on the thread count (fixed pieces and lane order).
TEST_P(ReduceMomentsTest, SegmentVarIsBitwiseReproducibleAcrossThreadCounts) {
  auto rng = rng_for(503);
  const int64_t C = 16;
  auto offsets = offsets_from_lengths(segment_lengths(rng, Regime::PowerLaw, 500, 40));
  offsets.push_back(offsets.back() + (int64_t{5} << 16) + 3);  // a hub in pieces
  const auto values = random_values<float>(rng, offsets.back() * C, -3, 5);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = run_segment(device(), values, C, offsets, ReduceOp::Std);
  omp_set_num_threads(3);
  const auto three = run_segment(device(), values, C, offsets, ReduceOp::Std);
  omp_set_num_threads(threads);
  EXPECT_TRUE(equal_exactly(one, three));
}

// ---- backward ----

template <class T>
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
                                    const std::vector<int64_t>& arg, const std::vector<T>& grad_out) {
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
                             d_grad_out.matrix(S, C), d_grad.matrix(M, C), ctx);
  return d_grad.to_host_vector();
}

template <class T>
std::vector<T> run_scatter_backward(Device device, const std::vector<T>& values, int64_t C,
                                    const std::vector<int64_t>& index, int64_t S, ReduceOp op, const std::vector<T>& out,
                                    const std::vector<int64_t>& arg, const std::vector<T>& grad_out) {
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
  scatter_reduce_backward<T, int64_t>(d_values.matrix(M, C), d_index.view(), op, d_out.matrix(S, C), arg_view,
                                      d_grad_out.matrix(S, C), d_grad.matrix(M, C), ctx);
  return d_grad.to_host_vector();
}

template <class T>
::testing::AssertionResult close_to_double(const std::vector<T>& got, const std::vector<double>& want, double tol) {
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]);
    if (!(std::fabs(g - want[i]) <= tol * (1 + std::fabs(want[i]))) && !(std::isnan(g) && std::isnan(want[i]))) {
      return ::testing::AssertionFailure() << "[" << i << "] got " << g << ", expected " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// Every op's segment and scatter backward against the oracle, with empty
// segments, singletons, duplicates and a hub (float and double).
template <class T>
void backward_matches_reference(Device device, uint64_t salt, double tol) {
  auto rng = rng_for(salt);
  for (int64_t C : {1, 3, 16}) {
    auto offsets = offsets_from_lengths(segment_lengths(rng, Regime::SparseEmpty, 60, 5));
    offsets.push_back(offsets.back() + 700);
    offsets.push_back(offsets.back() + 1);
    const int64_t M = offsets.back(), S = static_cast<int64_t>(offsets.size()) - 1;
    auto values = random_values<T>(rng, M * C, -2, 2);
    for (int64_t i = 0; i + 1 < M * C; i += 7) values[i + 1] = values[i];  // duplicates
    for (auto& v : values) v = v == T(0) ? T(0.5) : v;                     // mul: y / m
    const auto grad_out = random_values<T>(rng, S * C, -1, 1);
    std::vector<int64_t> index;
    for (int64_t s = 0; s < S; ++s) {
      for (int64_t r = offsets[s]; r < offsets[s + 1]; ++r) index.push_back(s);
    }
    for (ReduceOp op : kAllReduceOps) {
      SCOPED_TRACE(detail::concat("op=", to_string(op), " C=", C));
      auto ref = reference::segment_reduce_ref(values, C, offsets, op);
      if (op == ReduceOp::Mul) {  // products of 700 factors: keep them finite, oracle in T
        std::vector<T> small(values.size());
        for (size_t i = 0; i < values.size(); ++i) small[i] = T(1) + values[i] / T(4000);
        values = small;
        ref = reference::segment_reduce_ref(values, C, offsets, op);
      }
      const std::vector<int64_t> arg = has_arg(op) ? ref.arg : std::vector<int64_t>{};
      const auto want =
          reference::reduce_backward_ref(values, C, rows_of_offsets<T>(offsets), M, op, ref.out, arg, grad_out);
      EXPECT_TRUE(close_to_double(run_segment_backward(device, values, C, offsets, op, ref.out, arg, grad_out), want,
                                  tol))
          << "segment";
      EXPECT_TRUE(close_to_double(run_scatter_backward(device, values, C, index, S, op, ref.out, arg, grad_out),
                                  want, tol))
          << "scatter";
    }
  }
}

TEST_P(ReduceMomentsTest, SegmentAndScatterBackwardMatchReferenceFloat) {
  backward_matches_reference<float>(device(), 510, 1e-4);
}
TEST_P(ReduceMomentsTest, SegmentAndScatterBackwardMatchReferenceDouble) {
  backward_matches_reference<double>(device(), 511, 1e-10);
}

// Finite differences in double: L = sum(grad_out * segment_reduce(values)).
TEST_P(ReduceMomentsTest, SegmentBackwardMatchesFiniteDifferences) {
  auto rng = rng_for(512);
  const int64_t C = 3;
  const std::vector<int64_t> offsets = {0, 0, 1, 4, 9, 9, 21};
  const int64_t M = offsets.back(), S = 6;
  auto values = random_values<double>(rng, M * C, -1, 1);
  values[3 * C] = values[2 * C];  // a duplicate
  const auto grad_out = random_values<double>(rng, S * C, -1, 1);
  auto loss = [&](const std::vector<double>& v, ReduceOp op) {
    const auto out = run_segment(device(), v, C, offsets, op);
    double l = 0;
    for (size_t i = 0; i < out.size(); ++i) l += out[i] * grad_out[i];
    return l;
  };
  for (ReduceOp op : {ReduceOp::Var, ReduceOp::Std, ReduceOp::Mul, ReduceOp::Mean}) {
    SCOPED_TRACE(to_string(op));
    const auto out = run_segment(device(), values, C, offsets, op);
    const auto grad = run_segment_backward(device(), values, C, offsets, op, out, {}, grad_out);
    const double h = 1e-6;
    for (int64_t i = 0; i < M * C; ++i) {
      auto plus = values, minus = values;
      plus[i] += h;
      minus[i] -= h;
      const double numeric = (loss(plus, op) - loss(minus, op)) / (2 * h);
      EXPECT_NEAR(grad[i], numeric, 1e-6 * (1 + std::fabs(numeric))) << "element " << i;
    }
  }
}

// spmm_full_backward: grad_x and grad_w for every op against finite differences of
// the forward in double (weights, duplicate edges, a self loop, an empty row, an
// isolated source), and for min/max against spmm_arg_backward's routing.
TEST_P(ReduceMomentsTest, SpmmFullBackwardMatchesFiniteDifferences) {
  auto rng = rng_for(513);
  const int64_t C = 2, N = 6;
  const std::vector<int64_t> offsets = {0, 3, 3, 4, 9};
  const std::vector<int32_t> indices = {1, 1, 0, 2, 3, 0, 4, 4, 3};
  const int64_t S = 4, E = 9;
  auto x = random_values<double>(rng, N * C, 0.5, 1.5);
  auto w = random_values<double>(rng, E, 0.5, 1.5);
  const auto grad_out = random_values<double>(rng, S * C, -1, 1);
  std::vector<int64_t> offsets64(offsets);
  const auto t = reference::transpose_ref(offsets, indices, N);
  for (ReduceOp op : kAllReduceOps) {
    SCOPED_TRACE(to_string(op));
    std::vector<int64_t> arg;
    const auto out = run_spmm(device(), offsets, indices, w, x, N, C, op, has_arg(op) ? &arg : nullptr);
    auto d_offsets = to_device(offsets, device());
    auto d_indices = to_device(indices, device());
    auto d_w = to_device(w, device());
    auto d_x = to_device(x, device());
    auto d_out = to_device(out, device());
    auto d_arg = to_device(arg, device());
    auto d_grad_out = to_device(grad_out, device());
    auto d_t_offsets = to_device(t.offsets, device());
    auto d_t_edge_ids = to_device(t.edge_ids, device());
    auto d_grad_x = poisoned<double>(N * C, device());
    auto d_grad_w = poisoned<double>(E, device());
    MatrixView<const int64_t> arg_view;
    if (has_arg(op)) arg_view = d_arg.matrix(S, C);
    Context ctx(device());
    spmm_full_backward<double, int32_t>(d_offsets.view(), d_indices.view(), d_w.view(), d_x.matrix(N, C), op,
                                        d_out.matrix(S, C), arg_view, d_grad_out.matrix(S, C), d_t_offsets.view(),
                                        d_t_edge_ids.view(), d_grad_x.matrix(N, C), d_grad_w.view(), ctx);
    const auto grad_x = d_grad_x.to_host_vector();
    const auto grad_w = d_grad_w.to_host_vector();
    auto loss = [&](const std::vector<double>& xs, const std::vector<double>& ws) {
      const auto o = run_spmm(device(), offsets, indices, ws, xs, N, C, op);
      double l = 0;
      for (size_t i = 0; i < o.size(); ++i) l += o[i] * grad_out[i];
      return l;
    };
    const double h = 1e-6;
    for (int64_t i = 0; i < N * C; ++i) {
      auto plus = x, minus = x;
      plus[i] += h;
      minus[i] -= h;
      const double numeric = (loss(plus, w) - loss(minus, w)) / (2 * h);
      EXPECT_NEAR(grad_x[i], numeric, 1e-6 * (1 + std::fabs(numeric))) << "x element " << i;
    }
    for (int64_t e = 0; e < E; ++e) {
      auto plus = w, minus = w;
      plus[e] += h;
      minus[e] -= h;
      const double numeric = (loss(x, plus) - loss(x, minus)) / (2 * h);
      EXPECT_NEAR(grad_w[e], numeric, 1e-6 * (1 + std::fabs(numeric))) << "weight " << e;
    }
  }
}

// The sum/mean-only helpers name the way out for ops whose gradient needs the forward.
TEST(ReduceMomentsErrors, SpmmBackwardPointsToTheFullBackward) {
  Buffer<int64_t> t_offsets(2);
  t_offsets.fill_bytes(0);
  Buffer<double> grad_out(1), grad_x(1);
  for (ReduceOp op : {ReduceOp::Mul, ReduceOp::Var, ReduceOp::Std}) {
    try {
      spmm_backward<double, int32_t>(t_offsets.view(), {}, {}, {}, grad_out.matrix(1, 1), op, {},
                                     grad_x.matrix(1, 1), default_context(Device::cpu()));
      ADD_FAILURE() << "no throw for " << to_string(op);
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("spmm_full_backward"), std::string::npos) << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ReduceMomentsTest, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
