// spmm against the sequential oracle: every op with/without weights and arg, int32 and
// int64 indices, widths around every specialisation, degree regimes (empty rows, hubs
// split into pieces, power law, duplicates, self loops, isolated sources), arg ties, the
// backward helpers (against a double-precision scatter and finite differences),
// determinism across thread counts, bad input and mixed devices.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <limits>
#include <optional>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/spmm.hpp"
#include "spmm_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using SpmmTest = DeviceTest;
constexpr auto& kOps = kAllReduceOps;
constexpr int64_t kWidths[] = {1, 2, 3, 4, 8, 16, 17, 32, 64, 128, 129};

// A CSR graph: S destination rows, N source rows, E edges.
template <class I>
struct Csr {
  std::vector<int64_t> offsets;
  std::vector<I> indices;
  int64_t sources = 0;
  int64_t rows() const { return static_cast<int64_t>(offsets.size()) - 1; }
  int64_t edges() const { return static_cast<int64_t>(indices.size()); }
};

// Row lengths from the regime; sources uniform in [0, N) (N > number of distinct sources
// drawn in small graphs, so some sources are isolated).
template <class I>
Csr<I> random_csr(std::mt19937_64& rng, Regime regime, int64_t S, int64_t N, int64_t mean) {
  Csr<I> g;
  g.offsets = offsets_from_lengths(segment_lengths(rng, regime, S, mean));
  g.sources = N;
  std::uniform_int_distribution<int64_t> src(0, std::max<int64_t>(N - 1, 0));
  for (int64_t e = 0; e < g.offsets.back(); ++e) g.indices.push_back(static_cast<I>(src(rng)));
  return g;
}

template <class T>
struct SpmmResult {
  std::vector<T> out;
  std::vector<int64_t> arg;
};

// Runs spmm on `device` with poisoned outputs; weights empty = unweighted.
template <class I, class T>
SpmmResult<T> run_spmm(Device device, const Csr<I>& g, const std::vector<T>& weights, const std::vector<T>& x,
                    int64_t C, ReduceOp op, bool with_arg, SpmmAlgorithm algorithm = SpmmAlgorithm::Auto,
                    const std::vector<int64_t>& weight_ids = {}) {
  const int64_t S = g.rows();
  auto d_offsets = to_device(g.offsets, device);
  auto d_indices = to_device(g.indices, device);
  auto d_weights = to_device(weights, device);
  auto d_weight_ids = to_device(weight_ids, device);
  auto d_x = to_device(x, device);
  auto d_out = poisoned<T>(S * C, device);
  auto d_arg = poisoned<int64_t>(with_arg ? S * C : 0, device);
  MatrixView<int64_t> arg_view;
  if (with_arg) arg_view = MatrixView<int64_t>(d_arg.data(), S, C, device);
  SpmmOptions options;
  options.algorithm = algorithm;
  if (!weight_ids.empty()) options.weight_ids = d_weight_ids.view();
  Context ctx(device);
  spmm<T, I>(d_offsets.view(), d_indices.view(), d_weights.view(), d_x.matrix(g.sources, C), op,
             d_out.matrix(S, C), arg_view, ctx, options);
  return {d_out.to_host_vector(), with_arg ? d_arg.to_host_vector() : std::vector<int64_t>{}};
}

// Default tolerances per element type (float results vs a double oracle; double
// results vs a long double oracle).
template <class T>
constexpr double kRtol = sizeof(T) == 8 ? 1e-12 : 2e-6;
template <class T>
constexpr double kAtol = sizeof(T) == 8 ? 1e-12 : 1e-6;

template <class I, class T>
void expect_matches_reference(Device device, const Csr<I>& g, const std::vector<T>& weights,
                              const std::vector<T>& x, int64_t C, ReduceOp op, const std::string& label,
                              double rtol = kRtol<T>) {
  SCOPED_TRACE(label + " op=" + std::string(to_string(op)) + (weights.empty() ? " unweighted" : " weighted") +
               " I=" + (sizeof(I) == 4 ? "int32" : "int64"));
  const bool extremum = has_arg(op);
  auto ref = reference::spmm_ref(g.offsets, g.indices, weights, x, C, op);
  auto got = run_spmm(device, g, weights, x, C, op, extremum);
  if (extremum) {
    EXPECT_TRUE(equal_exactly(got.out, ref.out));
    EXPECT_TRUE(equal_exactly(got.arg, ref.arg)) << "(arg: edge positions)";
    auto no_arg = run_spmm(device, g, weights, x, C, op, false);
    EXPECT_TRUE(equal_exactly(no_arg.out, ref.out)) << "(min/max without arg)";
  } else {
    EXPECT_TRUE(close_to(got.out, ref.out, ref.scale, rtol, kAtol<T>));
  }
}

template <class I, class T = float>
void sweep_regimes(Device device, uint64_t salt) {
  auto rng = rng_for(salt);
  const Regime regimes[] = {Regime::Uniform, Regime::AllEmpty, Regime::AllSingleton,
                            Regime::OneHub,  Regime::PowerLaw, Regime::SparseEmpty};
  for (Regime regime : regimes) {
    for (int64_t C : kWidths) {
      auto g = random_csr<I>(rng, regime, 61, 150, 5);
      // Small integers make ties (and duplicate messages) frequent; weights keep them exact.
      auto x = random_values<T>(rng, g.sources * C, -8, 8);
      for (auto& v : x) v = std::round(v);
      auto weights = random_values<T>(rng, g.edges(), -2, 2);
      for (auto& w : weights) w = std::round(w * 2) / 2;
      for (ReduceOp op : kOps) {
        const std::string label = detail::concat("regime=", regime_name(regime), " C=", C);
        expect_matches_reference(device, g, std::vector<T>{}, x, C, op, label);
        expect_matches_reference(device, g, weights, x, C, op, label);
      }
    }
  }
}

TEST_P(SpmmTest, Int32IndicesMatchReferenceInEveryRegimeAndWidth) { sweep_regimes<int32_t>(device(), 1); }
TEST_P(SpmmTest, Int64IndicesMatchReferenceInEveryRegimeAndWidth) { sweep_regimes<int64_t>(device(), 2); }
TEST_P(SpmmTest, Float64MatchesReferenceInEveryRegimeAndWidth) {
  sweep_regimes<int32_t, double>(device(), 101);
  sweep_regimes<int64_t, double>(device(), 102);
}

// float64 is computed in float64 throughout: non-integer inputs match a long double
// oracle to 1e-12, and a value float32 cannot hold comes back unchanged.
TEST_P(SpmmTest, Float64KeepsDoublePrecision) {
  auto rng = rng_for(103);
  for (int64_t C : {1, 2, 3, 16, 129}) {
    auto g = random_csr<int32_t>(rng, Regime::PowerLaw, 80, 60, 6);
    auto x = random_values<double>(rng, g.sources * C, -1, 1);
    auto w = random_values<double>(rng, g.edges(), -1, 1);
    for (ReduceOp op : kOps) {
      expect_matches_reference(device(), g, w, x, C, op, detail::concat("float64 C=", C));
    }
  }
  const double fine = 1.0 + 0x1p-40;  // rounds to 1.0f in float32
  Csr<int64_t> one{{0, 1}, {0}, 1};
  for (ReduceOp op : kOps) {
    auto got = run_spmm(device(), one, std::vector<double>{1.0}, std::vector<double>{fine}, 1, op, false);
    const bool spread = op == ReduceOp::Var || op == ReduceOp::Std;  // of one element: 0
    EXPECT_EQ(got.out[0], spread ? 0.0 : fine) << to_string(op);
  }
}

TEST_P(SpmmTest, BoundarySizes) {
  auto rng = rng_for(3);
  for (int64_t S : {0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 257}) {
    for (int64_t mean : {1, 33}) {
      for (int64_t C : {1, 5, 32, 129}) {
        auto g = random_csr<int32_t>(rng, Regime::Uniform, S, 40, mean);
        auto x = random_values<float>(rng, g.sources * C);
        auto w = random_values<float>(rng, g.edges(), -1, 1);
        for (ReduceOp op : kOps) {
          expect_matches_reference(device(), g, w, x, C, op, detail::concat("S=", S, " mean=", mean, " C=", C));
        }
      }
    }
  }
}

TEST_P(SpmmTest, OneEdgeAndNoEdges) {
  Csr<int64_t> one{{0, 1}, {0}, 1};
  Csr<int64_t> none{{0, 0, 0}, {}, 3};
  for (ReduceOp op : kOps) {
    expect_matches_reference(device(), one, {-1.5f}, std::vector<float>{2.0f}, 1, op, "1 edge");
    expect_matches_reference(device(), none, {}, std::vector<float>(6, 1.0f), 2, op, "no edges");
  }
  auto [out, arg] = run_spmm(device(), none, {}, std::vector<float>(6, 1.0f), 2, ReduceOp::Max, true);
  EXPECT_EQ(out, std::vector<float>(4, 0.0f)) << "empty rows write 0";
  EXPECT_EQ(arg, std::vector<int64_t>(4, -1)) << "empty rows write arg -1";
}

// Longer than one piece on either backend (2^18 messages on CPU): exercises the split of
// hub rows and the ordered merge of their pieces, including ties across piece seams.
TEST_P(SpmmTest, HubRowsSplitAcrossPieces) {
  auto rng = rng_for(4);
  for (int64_t C : {1, 16, 33}) {
    const int64_t hub = (int64_t{3} << 18) / C + 77;
    Csr<int32_t> g;
    g.offsets = offsets_from_lengths({5, hub, 0, 3, hub / 2, 1});
    g.sources = 500;
    std::uniform_int_distribution<int32_t> src(0, 499);
    for (int64_t e = 0; e < g.offsets.back(); ++e) g.indices.push_back(src(rng));
    auto x = random_values<float>(rng, g.sources * C, -1, 1);
    auto w = random_values<float>(rng, g.edges(), 0.5, 1.5);
    for (ReduceOp op : kOps) {
      expect_matches_reference(device(), g, {}, x, C, op, detail::concat("hub C=", C), 1e-5);
      expect_matches_reference(device(), g, w, x, C, op, detail::concat("weighted hub C=", C), 1e-5);
    }
  }
}

TEST_P(SpmmTest, DuplicateEdgesAndSelfLoops) {
  // Row 0: source 1 three times; row 1: self loop (1 -> 1) and 0; row 2: 2 -> 2 twice.
  Csr<int32_t> g{{0, 3, 5, 7}, {1, 1, 1, 1, 0, 2, 2}, 3};
  const std::vector<float> x = {1, -2, 3, 4, 5, -6};  // [3, 2]
  const std::vector<float> w = {1, 2, 3, 0.5f, -1, 1, 1};
  for (ReduceOp op : kOps) {
    expect_matches_reference(device(), g, {}, x, 2, op, "duplicates");
    expect_matches_reference(device(), g, w, x, 2, op, "weighted duplicates");
  }
  auto sum = run_spmm(device(), g, w, x, 2, ReduceOp::Sum, false);
  EXPECT_EQ(sum.out, (std::vector<float>{18, 24, 0.5f, 4, 10, -12}));
  auto mean = run_spmm(device(), g, {}, x, 2, ReduceOp::Mean, false);
  EXPECT_EQ(mean.out, (std::vector<float>{3, 4, 2, 1, 5, -6})) << "mean divides by the edge count";
}

TEST_P(SpmmTest, TiesGoToTheLowerEdgePosition) {
  // Row 0: every message equal (sources 0 and 2 hold equal rows) -> edge 0.
  // Row 1: the maximum at edges 3 and 5 (same source) -> 3; the minimum at 4 -> 4.
  // Row 2: weights make distinct sources tie: 2 * 1 == 1 * 2 at edges 6 and 7 -> 6.
  Csr<int64_t> g{{0, 3, 6, 8}, {0, 2, 0, 1, 3, 1, 0, 3}, 4};
  const std::vector<float> x = {1, 5, 1, 2};
  const std::vector<float> w = {1, 1, 1, 1, 1, 1, 2, 1};
  auto mx = run_spmm(device(), g, w, x, 1, ReduceOp::Max, true);
  EXPECT_EQ(mx.out, (std::vector<float>{1, 5, 2}));
  EXPECT_EQ(mx.arg, (std::vector<int64_t>{0, 3, 6}));
  auto mn = run_spmm(device(), g, w, x, 1, ReduceOp::Min, true);
  EXPECT_EQ(mn.out, (std::vector<float>{1, 2, 2}));
  EXPECT_EQ(mn.arg, (std::vector<int64_t>{0, 4, 6}));
}

TEST_P(SpmmTest, NaNPropagatesThroughMinAndMax) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Csr<int32_t> g{{0, 3, 5}, {0, 1, 2, 3, 3}, 4};
  const std::vector<float> x = {1, nan, 5, -inf};
  for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
    auto r = run_spmm(device(), g, {}, x, 1, op, true);
    EXPECT_TRUE(std::isnan(r.out[0]));
    EXPECT_EQ(r.arg[0], 1) << "the NaN wins";
    EXPECT_EQ(r.out[1], -inf);
    EXPECT_EQ(r.arg[1], 3) << "equal -inf: the lower edge";
    expect_matches_reference(device(), g, {}, x, 1, op, "nan");
  }
}

// Vector widths fold min/max with arg by compare and select across columns: NaN,
// infinities, signed zeros and ties drawn often, in every column, must still give the
// reference's values and the lowest winning edge (hubs cut into pieces included).
TEST_P(SpmmTest, SpecialValuesAtVectorWidthsKeepArgRules) {
  auto rng = rng_for(77);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {nan, -inf, inf, -0.0f, 0.0f, 1.0f, -1.0f, 1.0f};
  std::uniform_int_distribution<int> pick(0, 7);
  std::bernoulli_distribution special(0.3);
  for (int64_t C : {8, 16, 32, 64, 128, 67}) {
    for (Regime regime : {Regime::PowerLaw, Regime::OneHub, Regime::SparseEmpty}) {
      auto g = random_csr<int32_t>(rng, regime, 50, 40, 9);
      auto x = random_values<float>(rng, g.sources * C, -3, 3);
      for (auto& v : x) v = special(rng) ? specials[pick(rng)] : std::round(v);
      for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
        expect_matches_reference(device(), g, std::vector<float>{}, x, C, op,
                                 detail::concat("specials regime=", regime_name(regime), " C=", C));
      }
    }
  }
}

// A CSR feature matrix [S, F] times a dense [F, H] matrix is spmm sum with the stored
// values as weights (how sparse input features enter the first layer).
TEST_P(SpmmTest, SparseTimesDenseProduct) {
  auto rng = rng_for(5);
  const int64_t S = 40, F = 300, H = 16;
  Csr<int32_t> features;
  features.offsets.push_back(0);
  features.sources = F;
  std::vector<float> values;
  std::bernoulli_distribution stored(0.02);
  std::uniform_real_distribution<float> value(-1, 1);
  for (int64_t r = 0; r < S; ++r) {
    for (int64_t f = 0; f < F; ++f) {
      if (stored(rng)) {
        features.indices.push_back(static_cast<int32_t>(f));
        values.push_back(value(rng));
      }
    }
    features.offsets.push_back(static_cast<int64_t>(features.indices.size()));
  }
  auto dense = random_values<float>(rng, F * H, -1, 1);
  auto got = run_spmm(device(), features, values, dense, H, ReduceOp::Sum, false);
  std::vector<float> want(S * H);
  std::vector<double> scale(S * H);
  for (int64_t r = 0; r < S; ++r) {
    for (int64_t h = 0; h < H; ++h) {
      double acc = 0, abs_acc = 0;
      for (int64_t k = features.offsets[r]; k < features.offsets[r + 1]; ++k) {
        const double term = double(values[k]) * double(dense[features.indices[k] * H + h]);
        acc += term;
        abs_acc += std::fabs(term);
      }
      want[r * H + h] = static_cast<float>(acc);
      scale[r * H + h] = abs_acc;
    }
  }
  EXPECT_TRUE(close_to(got.out, want, scale, 1e-6, 1e-6));
}

// weight_ids: w_e = weights[weight_ids[e]] equals passing the gathered weights directly.
TEST_P(SpmmTest, WeightIdsIndirection) {
  auto rng = rng_for(6);
  auto g = random_csr<int32_t>(rng, Regime::PowerLaw, 80, 60, 6);
  const int64_t C = 8;
  auto x = random_values<float>(rng, g.sources * C);
  auto table = random_values<float>(rng, 17, -2, 2);
  std::vector<int64_t> ids(g.edges());
  std::uniform_int_distribution<int64_t> pick(0, 16);
  for (auto& id : ids) id = pick(rng);
  std::vector<float> gathered(g.edges());
  for (int64_t e = 0; e < g.edges(); ++e) gathered[e] = table[ids[e]];
  for (ReduceOp op : kOps) {
    auto direct = run_spmm(device(), g, gathered, x, C, op, has_arg(op));
    auto indirect = run_spmm(device(), g, table, x, C, op, has_arg(op), SpmmAlgorithm::Auto, ids);
    EXPECT_TRUE(equal_exactly(indirect.out, direct.out)) << to_string(op);
    EXPECT_TRUE(equal_exactly(indirect.arg, direct.arg)) << to_string(op);
  }
}

// Fixed summation order: bitwise identical across runs and, on CPU, across thread counts
// (hub pieces included).
TEST_P(SpmmTest, ResultsAreBitwiseReproducibleAcrossThreadCounts) {
  auto rng = rng_for(7);
  auto g = random_csr<int32_t>(rng, Regime::PowerLaw, 3000, 2000, 40);
  const int64_t hub = (int64_t{5} << 18) / 16;  // one row split into pieces at C = 16
  g.offsets.push_back(g.offsets.back() + hub);
  std::uniform_int_distribution<int32_t> src(0, 1999);
  for (int64_t e = 0; e < hub; ++e) g.indices.push_back(src(rng));
  for (int64_t C : {16, 3}) {
    auto x = random_values<float>(rng, g.sources * C, -1, 1);
    auto w = random_values<float>(rng, g.edges(), -1, 1);
    std::vector<std::vector<float>> results;
    const int saved_threads = omp_get_max_threads();
    for (int threads : {1, 2, 2, 1}) {
      omp_set_num_threads(threads);
      results.push_back(run_spmm(device(), g, w, x, C, ReduceOp::Sum, false).out);
    }
    omp_set_num_threads(saved_threads);
    for (size_t i = 1; i < results.size(); ++i) {
      ASSERT_EQ(std::memcmp(results[0].data(), results[i].data(), results[0].size() * sizeof(float)), 0)
          << "C=" << C << " run " << i << " differs bitwise";
    }
  }
}

// ---------------------------------------------------------------------------------------
// Backward
// ---------------------------------------------------------------------------------------

// Runs the dL/dx helper for `op` (spmm_backward or spmm_arg_backward) over the transposed
// CSR; `with_edge_ids` false passes weights in transposed order instead (sum/mean only).
template <class I, class T>
std::vector<T> run_grad_x(Device device, const Csr<I>& g, const std::vector<T>& weights,
                          const std::vector<T>& grad_out, const std::vector<int64_t>& arg, int64_t C,
                          ReduceOp op, bool with_edge_ids = true) {
  auto t = reference::transpose_ref(g.offsets, g.indices, g.sources);
  std::vector<T> w = weights;
  if (!with_edge_ids && !weights.empty()) {
    for (size_t i = 0; i < t.edge_ids.size(); ++i) w[i] = weights[t.edge_ids[i]];
  }
  auto d_t_offsets = to_device(t.offsets, device);
  auto d_t_indices = to_device(t.indices, device);
  auto d_t_edge_ids = to_device(t.edge_ids, device);
  auto d_weights = to_device(w, device);
  auto d_grad_out = to_device(grad_out, device);
  auto d_offsets = to_device(g.offsets, device);
  auto d_arg = to_device(arg, device);
  auto d_grad_x = poisoned<T>(g.sources * C, device);
  VectorView<const int64_t> edge_ids = with_edge_ids ? VectorView<const int64_t>(d_t_edge_ids.view())
                                                     : VectorView<const int64_t>();
  Context ctx(device);
  if (has_arg(op)) {
    spmm_arg_backward<T, I>(d_t_offsets.view(), d_t_indices.view(), edge_ids, d_weights.view(),
                            d_grad_out.matrix(g.rows(), C), d_arg.matrix(g.rows(), C),
                            d_grad_x.matrix(g.sources, C), ctx);
  } else {
    spmm_backward<T, I>(d_t_offsets.view(), d_t_indices.view(), edge_ids, d_weights.view(),
                        d_grad_out.matrix(g.rows(), C), op, d_offsets.view(), d_grad_x.matrix(g.sources, C), ctx);
  }
  return d_grad_x.to_host_vector();
}

template <class I, class T>
std::vector<T> run_grad_w(Device device, const Csr<I>& g, const std::vector<T>& x, const std::vector<T>& grad_out,
                          const std::vector<int64_t>& arg, int64_t C, ReduceOp op) {
  auto d_offsets = to_device(g.offsets, device);
  auto d_indices = to_device(g.indices, device);
  auto d_x = to_device(x, device);
  auto d_grad_out = to_device(grad_out, device);
  auto d_arg = to_device(arg, device);
  auto d_grad_w = poisoned<T>(g.edges(), device);
  MatrixView<const int64_t> arg_view;
  if (has_arg(op)) arg_view = d_arg.matrix(g.rows(), C);
  Context ctx(device);
  spmm_weight_backward<T, I>(d_offsets.view(), d_indices.view(), d_x.matrix(g.sources, C),
                             d_grad_out.matrix(g.rows(), C), op, arg_view, d_grad_w.view(), ctx);
  return d_grad_w.to_host_vector();
}

template <class T>
std::vector<T> to_type(const std::vector<double>& v) {
  return {v.begin(), v.end()};
}

template <class T>
std::vector<T> absolute(std::vector<T> v) {
  for (auto& e : v) e = std::fabs(e);
  return v;
}

// The backward oracles accumulate in double, so double results are held to 1e-12 of
// the sum of |terms| (float: 1e-5).
template <class I, class T = float>
void check_backward(Device device, const Csr<I>& g, int64_t C, std::mt19937_64& rng, const std::string& label) {
  constexpr double rtol = sizeof(T) == 8 ? 1e-12 : 1e-5;
  auto x = random_values<T>(rng, g.sources * C, -1, 1);
  auto w = random_values<T>(rng, g.edges(), -1, 1);
  auto grad_out = random_values<T>(rng, g.rows() * C, -1, 1);
  for (ReduceOp op : kOps) {
    if (!spmm_has_backward(op)) continue;
    for (bool weighted : {false, true}) {
      SCOPED_TRACE(label + " C=" + std::to_string(C) + " op=" + std::string(to_string(op)) +
                   (weighted ? " weighted" : " unweighted"));
      const std::vector<T> weights = weighted ? w : std::vector<T>{};
      // The forward's arg (min/max) from the reference.
      auto fwd = reference::spmm_ref(g.offsets, g.indices, weights, x, C, op);
      auto want_x = reference::spmm_grad_x_ref(g.offsets, g.indices, weights, grad_out, fwd.arg, g.sources, C, op);
      auto got_x = run_grad_x(device, g, weights, grad_out, fwd.arg, C, op);
      // Tolerances relative to the sum of |terms| (the same formula on absolute values).
      auto scale_x = reference::spmm_grad_x_ref(g.offsets, g.indices, absolute(weights), absolute(grad_out), fwd.arg,
                                                g.sources, C, op);
      EXPECT_TRUE(close_to(got_x, to_type<T>(want_x), scale_x, rtol, kAtol<T>)) << "(grad_x)";
      if (!has_arg(op) && weighted) {
        auto got_t = run_grad_x(device, g, weights, grad_out, fwd.arg, C, op, /*with_edge_ids=*/false);
        EXPECT_TRUE(equal_exactly(got_t, got_x)) << "(weights in transposed order)";
      }
      auto want_w = reference::spmm_grad_w_ref(g.offsets, g.indices, x, grad_out, fwd.arg, C, op);
      auto got_w = run_grad_w(device, g, x, grad_out, fwd.arg, C, op);
      auto scale_w = reference::spmm_grad_w_ref(g.offsets, g.indices, absolute(x), absolute(grad_out), fwd.arg, C, op);
      EXPECT_TRUE(close_to(got_w, to_type<T>(want_w), scale_w, rtol, kAtol<T>)) << "(grad_w)";
    }
  }
}

TEST_P(SpmmTest, BackwardMatchesDoublePrecisionScatterInEveryRegime) {
  auto rng = rng_for(8);
  const Regime regimes[] = {Regime::Uniform, Regime::AllEmpty, Regime::OneHub, Regime::PowerLaw,
                            Regime::SparseEmpty};
  for (Regime regime : regimes) {
    for (int64_t C : {1, 4, 17, 32, 129}) {
      check_backward(device(), random_csr<int32_t>(rng, regime, 50, 90, 4), C, rng, regime_name(regime));
    }
  }
  check_backward(device(), random_csr<int64_t>(rng, Regime::PowerLaw, 70, 40, 6), 8, rng, "int64");
}

TEST_P(SpmmTest, Float64BackwardMatchesDoublePrecisionScatter) {
  auto rng = rng_for(104);
  for (Regime regime : {Regime::Uniform, Regime::OneHub, Regime::SparseEmpty}) {
    for (int64_t C : {1, 2, 17}) {
      check_backward<int32_t, double>(device(), random_csr<int32_t>(rng, regime, 50, 90, 4), C, rng,
                                      regime_name(regime));
    }
  }
  check_backward<int64_t, double>(device(), random_csr<int64_t>(rng, Regime::PowerLaw, 70, 40, 6), 8, rng, "int64");
}

// A source with more transposed edges than one piece: the transposed gather splits it.
TEST_P(SpmmTest, BackwardSplitsSourceHubs) {
  auto rng = rng_for(9);
  const int64_t C = 16;
  auto g = random_csr<int32_t>(rng, Regime::Uniform, 4000, 100, 20);
  for (size_t e = 0; e < g.indices.size(); e += 2) g.indices[e] = 7;  // ~40K edges from source 7
  check_backward(device(), g, C, rng, "source hub");
}

// Gradients of L = sum(out * R) against central finite differences of the forward in
// double (sum/mean are linear; max/min have distinct values, so small steps keep the arg).
TEST_P(SpmmTest, GradientsMatchFiniteDifferences) {
  auto rng = rng_for(10);
  auto g = random_csr<int32_t>(rng, Regime::Uniform, 12, 9, 3);
  const int64_t C = 3;
  auto x = random_values<float>(rng, g.sources * C, -1, 1);
  auto w = random_values<float>(rng, g.edges(), 0.5, 1.5);
  auto R = random_values<float>(rng, g.rows() * C, -1, 1);
  auto loss = [&](const std::vector<double>& xd, const std::vector<double>& wd, ReduceOp op) {
    auto out = reference::spmm_ref(g.offsets, g.indices, wd, xd, C, op).out;
    double l = 0;
    for (size_t i = 0; i < out.size(); ++i) l += out[i] * R[i];
    return l;
  };
  const double h = 1e-6;
  for (ReduceOp op : kOps) {
    if (!spmm_has_backward(op)) continue;
    SCOPED_TRACE(std::string(to_string(op)));
    std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end());
    auto fwd = reference::spmm_ref(g.offsets, g.indices, w, x, C, op);
    auto got_x = run_grad_x(device(), g, w, R, fwd.arg, C, op);
    auto got_w = run_grad_w(device(), g, x, R, fwd.arg, C, op);
    for (size_t i = 0; i < xd.size(); ++i) {
      auto up = xd, down = xd;
      up[i] += h;
      down[i] -= h;
      const double fd = (loss(up, wd, op) - loss(down, wd, op)) / (2 * h);
      EXPECT_NEAR(got_x[i], fd, 1e-4) << "dL/dx[" << i << "]";
    }
    for (size_t e = 0; e < wd.size(); ++e) {
      auto up = wd, down = wd;
      up[e] += h;
      down[e] -= h;
      const double fd = (loss(xd, up, op) - loss(xd, down, op)) / (2 * h);
      EXPECT_NEAR(got_w[e], fd, 1e-4) << "dL/dw[" << e << "]";
    }
  }
}

TEST_P(SpmmTest, BackwardIsBitwiseReproducibleAcrossThreadCounts) {
  auto rng = rng_for(11);
  auto g = random_csr<int32_t>(rng, Regime::PowerLaw, 2000, 300, 30);
  for (size_t e = 0; e < g.indices.size(); e += 3) g.indices[e] = 5;  // a source hub
  const int64_t C = 16;
  auto x = random_values<float>(rng, g.sources * C, -1, 1);
  auto w = random_values<float>(rng, g.edges(), -1, 1);
  auto grad_out = random_values<float>(rng, g.rows() * C, -1, 1);
  auto fwd = reference::spmm_ref(g.offsets, g.indices, w, x, C, ReduceOp::Max);
  const int saved_threads = omp_get_max_threads();
  std::vector<std::vector<float>> runs;
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    for (ReduceOp op : kOps) {
      if (!spmm_has_backward(op)) continue;
      runs.push_back(run_grad_x(device(), g, w, grad_out, fwd.arg, C, op));
      runs.push_back(run_grad_w(device(), g, x, grad_out, fwd.arg, C, op));
    }
  }
  omp_set_num_threads(saved_threads);
  const size_t half = runs.size() / 2;
  for (size_t i = 0; i < half; ++i) {
    ASSERT_EQ(std::memcmp(runs[i].data(), runs[half + i].data(), runs[i].size() * sizeof(float)), 0)
        << "result " << i << " differs between 1 and 2 threads";
  }
}

// ---------------------------------------------------------------------------------------
// Algorithms, bad input, devices
// ---------------------------------------------------------------------------------------

// cuSPARSE is an alternative for sum on CUDA; elsewhere asking for it is an error.
TEST_P(SpmmTest, CuSparseAlgorithmComputesSumOnCudaOnly) {
  auto rng = rng_for(12);
  auto g = random_csr<int32_t>(rng, Regime::PowerLaw, 200, 150, 8);
  auto g64 = random_csr<int64_t>(rng, Regime::Uniform, 100, 50, 4);
  const int64_t C = 20;
  auto x = random_values<float>(rng, g.sources * C, -1, 1);
  auto x64 = random_values<float>(rng, g64.sources * C, -1, 1);
  auto w = random_values<float>(rng, g.edges(), -1, 1);
  if (device().is_cpu()) {
    EXPECT_THROW(run_spmm(device(), g, w, x, C, ReduceOp::Sum, false, SpmmAlgorithm::CuSparse), std::invalid_argument);
    return;
  }
  for (const auto& weights : {std::vector<float>{}, w}) {
    auto ref = reference::spmm_ref(g.offsets, g.indices, weights, x, C, ReduceOp::Sum);
    auto got = run_spmm(device(), g, weights, x, C, ReduceOp::Sum, false, SpmmAlgorithm::CuSparse);
    EXPECT_TRUE(close_to(got.out, ref.out, ref.scale, 1e-5, 1e-6));
  }
  auto ref64 = reference::spmm_ref(g64.offsets, g64.indices, {}, x64, C, ReduceOp::Sum);
  auto got64 = run_spmm(device(), g64, {}, x64, C, ReduceOp::Sum, false, SpmmAlgorithm::CuSparse);
  EXPECT_TRUE(close_to(got64.out, ref64.out, ref64.scale, 1e-5, 1e-6));
  EXPECT_THROW(run_spmm(device(), g, w, x, C, ReduceOp::Max, false, SpmmAlgorithm::CuSparse), std::invalid_argument);
  auto xd = random_values<double>(rng, g.sources * C, -1, 1);
  auto wd = random_values<double>(rng, g.edges(), -1, 1);
  auto refd = reference::spmm_ref(g.offsets, g.indices, wd, xd, C, ReduceOp::Sum);
  auto gotd = run_spmm(device(), g, wd, xd, C, ReduceOp::Sum, false, SpmmAlgorithm::CuSparse);
  EXPECT_TRUE(close_to(gotd.out, refd.out, refd.scale, 1e-12, 1e-12)) << "(float64 through cuSPARSE)";
}

struct BadSpmm {
  std::vector<int64_t> offsets;
  std::vector<int32_t> indices;
  std::vector<float> weights;
  std::vector<int64_t> weight_ids;
  int64_t out_rows;
  int64_t out_cols;
  ReduceOp op;
  bool with_arg;
  SpmmAlgorithm algorithm;
  std::string needle;
};

// Bad input: a clear error naming the op and the argument, and out/arg untouched.
TEST_P(SpmmTest, BadInputThrowsAndLeavesOutputsUntouched) {
  const Device dev = device();
  auto x = to_device(std::vector<float>{1, 2, 3, 4, 5, 6}, dev);  // [3, 2]
  const auto A = SpmmAlgorithm::Auto;
  const std::vector<BadSpmm> cases = {
      {{0, 2, 4}, {0, 1, 3, 2}, {}, {}, 2, 2, ReduceOp::Sum, false, A, "indices[2] (3) must lie in [0, 3)"},
      {{0, 2, 4}, {0, -1, 2, 2}, {}, {}, 2, 2, ReduceOp::Max, true, A, "indices[1] (-1) must lie in [0, 3)"},
      {{1, 2, 4}, {0, 1, 2, 2}, {}, {}, 2, 2, ReduceOp::Sum, false, A, "offsets[0] (1) must be 0"},
      {{0, 3, 2}, {0, 1, 2, 2}, {}, {}, 2, 2, ReduceOp::Sum, false, A, "offsets[2] (2)"},
      {{0, 2, 3}, {0, 1, 2, 2}, {}, {}, 2, 2, ReduceOp::Sum, false, A, "must equal the number of rows (4)"},
      {{0, 2, 4}, {0, 1, 2, 2}, {1, 2, 3}, {}, 2, 2, ReduceOp::Sum, false, A,
       "weights.size() (3) must equal indices.size() (4)"},
      {{0, 2, 4}, {0, 1, 2, 2}, {1, 2}, {0, 1, 2, 0}, 2, 2, ReduceOp::Sum, false, A,
       "weight_ids[2] (2) must lie in [0, 2)"},
      {{0, 2, 4}, {0, 1, 2, 2}, {}, {0, 1, 0, 0}, 2, 2, ReduceOp::Sum, false, A, "weight_ids given without weights"},
      {{0, 2, 4}, {0, 1, 2, 2}, {}, {}, 3, 2, ReduceOp::Sum, false, A,
       "offsets.size() (3) must equal out.rows() + 1 (4)"},
      {{0, 2, 4}, {0, 1, 2, 2}, {}, {}, 2, 3, ReduceOp::Sum, false, A, "out.cols() (3) must equal x.cols() (2)"},
      {{0, 2, 4}, {0, 1, 2, 2}, {}, {}, 2, 2, ReduceOp::Mean, true, A, "arg is only defined for min and max"},
      {{0, 2, 4}, {0, 1, 2, 2}, {}, {}, 2, 2, ReduceOp::Max, false, SpmmAlgorithm::CuSparse,
       "computes op sum only"},
  };
  for (const BadSpmm& c : cases) {
    auto offsets = to_device(c.offsets, dev);
    auto indices = to_device(c.indices, dev);
    auto weights = to_device(c.weights, dev);
    auto weight_ids = to_device(c.weight_ids, dev);
    auto out = poisoned<float>(c.out_rows * c.out_cols, dev);
    auto arg = poisoned<int64_t>(c.out_rows * c.out_cols, dev);
    const auto out_before = out.to_host_vector();
    MatrixView<int64_t> arg_view;
    if (c.with_arg) arg_view = MatrixView<int64_t>(arg.data(), c.out_rows, c.out_cols, dev);
    SpmmOptions options;
    options.algorithm = c.algorithm;
    options.weight_ids = weight_ids.view();
    Context ctx(dev);
    try {
      spmm<float, int32_t>(offsets.view(), indices.view(), weights.view(), x.matrix(3, 2), c.op,
                           MatrixView<float>(out.data(), c.out_rows, c.out_cols, dev), arg_view, ctx, options);
      ADD_FAILURE() << "no error for case '" << c.needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("spmm: "), std::string::npos) << e.what();
    }
    EXPECT_EQ(std::memcmp(out.to_host_vector().data(), out_before.data(), out_before.size() * sizeof(float)), 0)
        << "out changed for case '" << c.needle << "'";
    for (int64_t a : arg.to_host_vector()) EXPECT_EQ(a, -1) << "arg changed for case '" << c.needle << "'";
  }
}

// The backward helpers validate the same way and leave their outputs untouched.
TEST_P(SpmmTest, BackwardBadInputThrowsAndLeavesOutputsUntouched) {
  const Device dev = device();
  // Forward: S = 2 rows, N = 3 sources, E = 4 edges; C = 2.
  Csr<int32_t> g{{0, 2, 4}, {0, 1, 2, 2}, 3};
  auto t = reference::transpose_ref(g.offsets, g.indices, g.sources);
  auto grad_out = to_device(std::vector<float>{1, 2, 3, 4}, dev);
  auto x = to_device(std::vector<float>{1, 2, 3, 4, 5, 6}, dev);
  auto arg = to_device(std::vector<int64_t>{0, 1, 2, 3}, dev);
  auto offsets = to_device(g.offsets, dev);
  auto indices = to_device(g.indices, dev);
  auto weights = to_device(std::vector<float>{1, 1, 1, 1}, dev);
  auto expect_error = [&](const std::string& needle, auto&& call, Buffer<float>& output) {
    const auto before = output.to_host_vector();
    try {
      call();
      ADD_FAILURE() << "no error for '" << needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_EQ(std::memcmp(output.to_host_vector().data(), before.data(), before.size() * sizeof(float)), 0)
        << "output changed for '" << needle << "'";
  };
  Context ctx(dev);
  auto grad_x = poisoned<float>(6, dev);
  {
    auto bad_t_indices = t.indices;
    bad_t_indices[1] = 2;  // destinations lie in [0, S = 2)
    auto t_offsets = to_device(t.offsets, dev);
    auto t_indices = to_device(bad_t_indices, dev);
    auto t_edge_ids = to_device(t.edge_ids, dev);
    expect_error("spmm_backward: t_indices[1] (2) must lie in [0, 2)", [&] {
      spmm_backward<float, int32_t>(t_offsets.view(), t_indices.view(), t_edge_ids.view(), weights.view(),
                                    grad_out.matrix(2, 2), ReduceOp::Sum, {}, grad_x.matrix(3, 2), ctx);
    }, grad_x);
  }
  {
    auto bad_ids = t.edge_ids;
    bad_ids[3] = 4;
    auto t_offsets = to_device(t.offsets, dev);
    auto t_indices = to_device(t.indices, dev);
    auto t_edge_ids = to_device(bad_ids, dev);
    expect_error("spmm_arg_backward: t_edge_ids[3] (4) must lie in [0, 4)", [&] {
      spmm_arg_backward<float, int32_t>(t_offsets.view(), t_indices.view(), t_edge_ids.view(), {},
                                        grad_out.matrix(2, 2), arg.matrix(2, 2), grad_x.matrix(3, 2), ctx);
    }, grad_x);
    expect_error("spmm_arg_backward: t_edge_ids is required", [&] {
      spmm_arg_backward<float, int32_t>(t_offsets.view(), t_indices.view(), {}, {}, grad_out.matrix(2, 2),
                                        arg.matrix(2, 2), grad_x.matrix(3, 2), ctx);
    }, grad_x);
    expect_error("spmm_backward: op must be sum or mean", [&] {
      spmm_backward<float, int32_t>(t_offsets.view(), t_indices.view(), t_edge_ids.view(), {},
                                    grad_out.matrix(2, 2), ReduceOp::Max, {}, grad_x.matrix(3, 2), ctx);
    }, grad_x);
    expect_error("spmm_backward: offsets.size() (0) must equal grad_out.rows() + 1 (3) for mean", [&] {
      spmm_backward<float, int32_t>(t_offsets.view(), t_indices.view(), t_edge_ids.view(), {},
                                    grad_out.matrix(2, 2), ReduceOp::Mean, {}, grad_x.matrix(3, 2), ctx);
    }, grad_x);
    expect_error("spmm_backward: t_offsets.size() (4) must equal grad_x.rows() + 1 (3)", [&] {
      spmm_backward<float, int32_t>(t_offsets.view(), t_indices.view(), t_edge_ids.view(), {},
                                    grad_out.matrix(2, 2), ReduceOp::Sum, {}, MatrixView<float>(grad_x.data(), 2, 2, dev),
                                    ctx);
    }, grad_x);
  }
  auto grad_w = poisoned<float>(4, dev);
  expect_error("spmm_weight_backward: arg is required for max", [&] {
    spmm_weight_backward<float, int32_t>(offsets.view(), indices.view(), x.matrix(3, 2), grad_out.matrix(2, 2),
                                         ReduceOp::Max, {}, grad_w.view(), ctx);
  }, grad_w);
  expect_error("spmm_weight_backward: grad_w.size() (3) must equal indices.size() (4)", [&] {
    spmm_weight_backward<float, int32_t>(offsets.view(), indices.view(), x.matrix(3, 2), grad_out.matrix(2, 2),
                                         ReduceOp::Sum, {}, VectorView<float>(grad_w.data(), 3, dev), ctx);
  }, grad_w);
  auto bad_indices = to_device(std::vector<int32_t>{0, 1, 5, 2}, dev);
  expect_error("spmm_weight_backward: indices[2] (5) must lie in [0, 3)", [&] {
    spmm_weight_backward<float, int32_t>(offsets.view(), bad_indices.view(), x.matrix(3, 2), grad_out.matrix(2, 2),
                                         ReduceOp::Sum, {}, grad_w.view(), ctx);
  }, grad_w);
}

INSTANTIATE_TEST_SUITE_P(Devices, SpmmTest, testing::ValuesIn(all_devices()), device_name);

// Views on one device with a context on another are rejected before any work.
TEST(SpmmDevices, MixedDevicesAreAnErrorNotACopy) {
  std::vector<int64_t> offsets = {0, 1};
  std::vector<int32_t> indices = {0};
  std::vector<float> x = {1}, out(1);
  Context cuda_ctx(Device::cuda(0));
  try {
    spmm<float, int32_t>(VectorView<const int64_t>(offsets.data(), 2), VectorView<const int32_t>(indices.data(), 1),
                         {}, MatrixView<const float>(x.data(), 1, 1), ReduceOp::Sum, MatrixView<float>(out.data(), 1, 1),
                         {}, cuda_ctx);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("spmm: offsets is on cpu but the context is on cuda:0"), std::string::npos)
        << e.what();
  }
}

TEST(SpmmDevices, ValidationCanBeSwitchedOffAndTheDefaultContextAgrees) {
  std::vector<int64_t> offsets = {0, 1, 3};
  std::vector<int64_t> indices = {1, 0, 1};
  std::vector<float> x = {1, 2};
  std::vector<float> out(2, -1);
  Context ctx;
  ctx.validate = false;
  spmm<float, int64_t>(VectorView<const int64_t>(offsets.data(), 3), VectorView<const int64_t>(indices.data(), 3), {},
                       MatrixView<const float>(x.data(), 2, 1), ReduceOp::Sum, MatrixView<float>(out.data(), 2, 1), {},
                       ctx);
  EXPECT_EQ(out, (std::vector<float>{2, 3}));
  std::vector<float> out2(2, -1);
  spmm<float, int64_t>(VectorView<const int64_t>(offsets.data(), 3), VectorView<const int64_t>(indices.data(), 3), {},
                       MatrixView<const float>(x.data(), 2, 1), ReduceOp::Sum, MatrixView<float>(out2.data(), 2, 1));
  EXPECT_EQ(out2, out);
}


// Validation scans int64 indices; a vectorised scan once left the x87 stack tagged
// (MMX without emms), after which every long double operation in the process gave NaN.
TEST(SpmmDevices, ValidatedCallsLeaveLongDoubleArithmeticIntact) {
  for (int64_t n : {int64_t{3}, int64_t{1} << 17}) {
    std::vector<int64_t> offsets = {0, n};
    std::vector<int64_t> indices(static_cast<size_t>(n), 0);
    std::vector<float> x = {2};
    std::vector<float> out(1, -1);
    spmm<float, int64_t>(VectorView<const int64_t>(offsets.data(), 2), VectorView<const int64_t>(indices.data(), n),
                         {}, MatrixView<const float>(x.data(), 1, 1), ReduceOp::Sum, MatrixView<float>(out.data(), 1, 1));
    EXPECT_EQ(out[0], 2.0f * static_cast<float>(n));
    volatile long double three = 3, one = 1;
    EXPECT_EQ(static_cast<double>(three / one), 3.0) << "n = " << n;
  }
}
}  // namespace
}  // namespace edgewise::test
