// sddmm (dot and additive forms) and edge_gather_sum against the double-precision
// oracles: heads x widths, degree regimes (empty rows, one hub, power law), int32 and
// int64 indices, float and double, the backward gathers over the transposed CSR
// against forward scatters, empty graphs, poisoned outputs, bad input, reproducibility.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <string>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/sddmm.hpp"
#include "sddmm_ref.hpp"
#include "spmm_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using SddmmTest = DeviceTest;

template <class I>
struct Graph {
  std::vector<int64_t> offsets;
  std::vector<I> indices;
  int64_t sources = 0;
  int64_t rows() const { return static_cast<int64_t>(offsets.size()) - 1; }
  int64_t edges() const { return static_cast<int64_t>(indices.size()); }
};

template <class I>
Graph<I> random_graph(std::mt19937_64& rng, Regime regime, int64_t S, int64_t N, int64_t mean) {
  Graph<I> g;
  g.offsets = offsets_from_lengths(segment_lengths(rng, regime, S, mean));
  g.sources = N;
  std::uniform_int_distribution<int64_t> src(0, std::max<int64_t>(N - 1, 0));
  for (int64_t e = 0; e < g.offsets.back(); ++e) g.indices.push_back(static_cast<I>(src(rng)));
  return g;
}

template <class T>
std::vector<double> as_double(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

template <class T>
std::vector<T> as_type(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

template <class T>
double rtol_for() {
  return sizeof(T) == 4 ? 2e-5 : 1e-12;
}

// Forward of both forms, and every backward gather, on `device` with poisoned outputs.
template <class T, class I>
void check_graph(Device device, const Graph<I>& g, int64_t H, int64_t D, std::mt19937_64& rng, const std::string& label) {
  SCOPED_TRACE(label + " H=" + std::to_string(H) + " D=" + std::to_string(D) + " T=" +
               (sizeof(T) == 4 ? "float" : "double") + " I=" + (sizeof(I) == 4 ? "int32" : "int64"));
  const int64_t S = g.rows(), N = g.sources, E = g.edges();
  const double rtol = rtol_for<T>();
  auto x = random_values<T>(rng, N * H * D, -2, 2);
  auto y = random_values<T>(rng, S * H * D, -2, 2);
  auto a = random_values<T>(rng, N * H, -2, 2);
  auto b = random_values<T>(rng, S * H, -2, 2);
  auto grad = random_values<T>(rng, E * H, -2, 2);
  auto d_offsets = to_device(g.offsets, device);
  auto d_indices = to_device(g.indices, device);
  auto d_x = to_device(x, device), d_y = to_device(y, device), d_a = to_device(a, device), d_b = to_device(b, device);
  auto d_grad = to_device(grad, device);
  Context ctx(device);

  // Forward, dot form. Scale for the tolerance: sum of |terms| is at most 4 D.
  auto out = poisoned<T>(E * H, device);
  sddmm_dot<T, I>(d_offsets.view(), d_indices.view(), d_x.matrix(N, H * D), d_y.matrix(S, H * D),
                  out.matrix(E, H), ctx);
  EXPECT_TRUE(close_to(as_double(out.to_host_vector()), reference::sddmm_dot_ref(g.offsets, g.indices, x, y, H, D),
                       {}, rtol, rtol * 4 * static_cast<double>(D)))
      << "sddmm_dot forward";

  // Forward, additive form: one rounding of an exact sum.
  auto sum = poisoned<T>(E * H, device);
  sddmm_add<T, I>(d_offsets.view(), d_indices.view(), d_a.matrix(N, H), d_b.matrix(S, H), sum.matrix(E, H), ctx);
  EXPECT_TRUE(close_to(as_double(sum.to_host_vector()), reference::sddmm_add_ref(g.offsets, g.indices, a, b, H), {},
                       rtol, 0))
      << "sddmm_add forward";

  // Backward through edge_gather_sum: forward CSR for the destination side, transposed
  // CSR (indices = destinations, edge_ids = forward positions) for the source side.
  const auto t = reference::transpose_ref(g.offsets, g.indices, N);
  auto d_t_offsets = to_device(t.offsets, device);
  auto d_t_indices = to_device(t.indices, device);
  auto d_t_edge_ids = to_device(t.edge_ids, device);
  const auto dot_ref = reference::sddmm_dot_grad_ref(g.offsets, g.indices, x, y, grad, N, H, D);
  const auto add_ref = reference::sddmm_add_grad_ref(g.offsets, g.indices, grad, N, H);
  const double gather_atol = rtol * 4 * static_cast<double>(E + 1);

  auto grad_y = poisoned<T>(S * H * D, device);
  edge_gather_sum<T, I>(d_offsets.view(), d_indices.view(), {}, d_grad.matrix(E, H), d_x.matrix(N, H * D),
                        grad_y.matrix(S, H * D), ctx);
  EXPECT_TRUE(close_to(as_double(grad_y.to_host_vector()), dot_ref.grad_y, {}, rtol, gather_atol)) << "dot grad_y";

  auto grad_x = poisoned<T>(N * H * D, device);
  edge_gather_sum<T, I>(d_t_offsets.view(), d_t_indices.view(), d_t_edge_ids.view(), d_grad.matrix(E, H),
                        d_y.matrix(S, H * D), grad_x.matrix(N, H * D), ctx);
  EXPECT_TRUE(close_to(as_double(grad_x.to_host_vector()), dot_ref.grad_x, {}, rtol, gather_atol)) << "dot grad_x";

  auto grad_b = poisoned<T>(S * H, device);
  edge_gather_sum<T, I>(d_offsets.view(), {}, {}, d_grad.matrix(E, H), {}, grad_b.matrix(S, H), ctx);
  EXPECT_TRUE(close_to(as_double(grad_b.to_host_vector()), add_ref.grad_b, {}, rtol, gather_atol)) << "add grad_b";

  auto grad_a = poisoned<T>(N * H, device);
  edge_gather_sum<T, I>(d_t_offsets.view(), {}, d_t_edge_ids.view(), d_grad.matrix(E, H), {}, grad_a.matrix(N, H),
                        ctx);
  EXPECT_TRUE(close_to(as_double(grad_a.to_host_vector()), add_ref.grad_a, {}, rtol, gather_atol)) << "add grad_a";

  // Attention aggregation: the forward CSR with per-edge, per-head weights.
  auto agg = poisoned<T>(S * H * D, device);
  edge_gather_sum<T, I>(d_offsets.view(), d_indices.view(), {}, d_grad.matrix(E, H), d_x.matrix(N, H * D),
                        agg.matrix(S, H * D), ctx);
  EXPECT_TRUE(close_to(as_double(agg.to_host_vector()),
                       reference::weighted_aggregate_ref(g.offsets, g.indices, grad, x, H, D), {}, rtol, gather_atol))
      << "weighted aggregation";
}

template <class T, class I>
void sweep(Device device, uint64_t salt) {
  auto rng = rng_for(salt);
  const Regime regimes[] = {Regime::Uniform,  Regime::AllEmpty, Regime::AllSingleton,
                            Regime::OneHub,   Regime::PowerLaw, Regime::SparseEmpty};
  // (8, 8), (8, 16) and (1, 16) take the compile-time edge_gather_sum rows on the CPU.
  const std::pair<int64_t, int64_t> head_dims[] = {{1, 1}, {1, 7}, {1, 16}, {8, 1}, {8, 8}, {8, 16}, {3, 33}};
  for (Regime regime : regimes) {
    for (auto [H, D] : head_dims) {
      auto g = random_graph<I>(rng, regime, 53, 70, 5);
      check_graph<T, I>(device, g, H, D, rng, std::string("regime=") + regime_name(regime));
    }
  }
}

TEST_P(SddmmTest, FloatInt32MatchesReferenceInEveryRegime) { sweep<float, int32_t>(device(), 101); }
TEST_P(SddmmTest, FloatInt64MatchesReferenceInEveryRegime) { sweep<float, int64_t>(device(), 102); }
TEST_P(SddmmTest, DoubleMatchesReferenceInEveryRegime) { sweep<double, int32_t>(device(), 103); }

TEST_P(SddmmTest, EmptyGraphsAndEdgelessRows) {
  auto rng = rng_for(104);
  Graph<int32_t> no_rows{{0}, {}, 0};
  check_graph<float, int32_t>(device(), no_rows, 2, 3, rng, "no rows");
  Graph<int32_t> no_edges{{0, 0, 0, 0}, {}, 5};
  check_graph<float, int32_t>(device(), no_edges, 2, 3, rng, "no edges");
  Graph<int32_t> one_edge{{0, 0, 1, 1}, {4}, 5};
  check_graph<float, int32_t>(device(), one_edge, 4, 2, rng, "one edge");
}

TEST_P(SddmmTest, LargeHubAndChunkBoundaries) {
  auto rng = rng_for(105);
  // More edges than one CPU chunk (4096) in one row, between empty rows.
  Graph<int64_t> hub;
  hub.offsets = {0, 0, 9000, 9000, 9001, 9001 + 4097};
  hub.sources = 300;
  std::uniform_int_distribution<int64_t> src(0, 299);
  for (int64_t e = 0; e < hub.offsets.back(); ++e) hub.indices.push_back(src(rng));
  check_graph<float, int64_t>(device(), hub, 2, 4, rng, "hub");
}

TEST_P(SddmmTest, ResultsAreBitwiseReproducibleAcrossThreadCounts) {
  auto rng = rng_for(106);
  auto g = random_graph<int32_t>(rng, Regime::PowerLaw, 2000, 3000, 20);
  const int64_t H = 4, D = 16, S = g.rows(), N = g.sources, E = g.edges();
  auto x = to_device(random_values<float>(rng, N * H * D, -1, 1), device());
  auto y = to_device(random_values<float>(rng, S * H * D, -1, 1), device());
  auto offsets = to_device(g.offsets, device());
  auto indices = to_device(g.indices, device());
  auto run = [&] {
    Context ctx(device());
    auto out = poisoned<float>(E * H, device());
    sddmm_dot<float, int32_t>(offsets.view(), indices.view(), x.matrix(N, H * D), y.matrix(S, H * D),
                              out.matrix(E, H), ctx);
    auto agg = poisoned<float>(S * H * D, device());
    edge_gather_sum<float, int32_t>(offsets.view(), indices.view(), {}, out.matrix(E, H), x.matrix(N, H * D),
                                    agg.matrix(S, H * D), ctx);
    return std::make_pair(out.to_host_vector(), agg.to_host_vector());
  };
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = run();
  omp_set_num_threads(std::max(2, threads));
  const auto many = run();
  omp_set_num_threads(threads);
  EXPECT_TRUE(equal_exactly(one.first, many.first));
  EXPECT_TRUE(equal_exactly(one.second, many.second));
}

// The dot form's order is part of its contract (the CPU copies and the CUDA thread follow
// it): from 16 features on, eight running sums of the features k mod 8 over the whole
// multiples of 8, a fixed tree, then the tail in order; below 16, one running sum. On
// the CPU that order is reproduced bit for bit (sddmm_cpu.cpp is compiled without FMA
// contraction; the products here are volatile for the same reason), at the widths the
// driver fixes at compile time and at run-time widths with a tail.
TEST(SddmmDot, FollowsTheDocumentedSummationOrder) {
  auto rng = rng_for(107);
  for (int64_t D : {1, 7, 8, 15, 16, 17, 24, 32, 64, 67}) {
    SCOPED_TRACE("D " + std::to_string(D));
    const int64_t H = 2, S = 3, N = 4;
    const std::vector<int64_t> offsets{0, 2, 2, 5};
    const std::vector<int32_t> indices{3, 0, 1, 1, 2};
    // Wide exponent range, so that any other order rounds differently somewhere.
    auto x = random_values<float>(rng, N * H * D, -1, 1);
    auto y = random_values<float>(rng, S * H * D, -1, 1);
    for (size_t i = 0; i < x.size(); i += 3) x[i] *= 4096.0f;
    std::vector<float> out(static_cast<size_t>(5 * H), std::nanf(""));
    Context ctx(Device::cpu());
    sddmm_dot<float, int32_t>(VectorView<const int64_t>(offsets.data(), S + 1),
                              VectorView<const int32_t>(indices.data(), 5),
                              MatrixView<const float>(x.data(), N, H * D), MatrixView<const float>(y.data(), S, H * D),
                              MatrixView<float>(out.data(), 5, H), ctx);
    bool some_order_differs = false;
    for (int64_t v = 0; v < S; ++v) {
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) {
        for (int64_t h = 0; h < H; ++h) {
          const float* a = x.data() + indices[e] * H * D + h * D;
          const float* b = y.data() + v * H * D + h * D;
          float sequential = 0;
          for (int64_t k = 0; k < D; ++k) {
            volatile float p = a[k] * b[k];
            sequential = sequential + p;
          }
          float want = 0;
          int64_t k = 0;
          if (D >= 16) {
            float lane[8];
            for (int j = 0; j < 8; ++j) lane[j] = a[j] * b[j];
            for (k = 8; k + 8 <= D; k += 8) {
              for (int j = 0; j < 8; ++j) {
                volatile float p = a[k + j] * b[k + j];  // volatile: no contraction into FMA
                lane[j] = lane[j] + p;
              }
            }
            want = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
          }
          for (; k < D; ++k) {
            volatile float p = a[k] * b[k];
            want = want + p;
          }
          const float got = out[static_cast<size_t>(e * H + h)];
          EXPECT_EQ(std::memcmp(&got, &want, sizeof(float)), 0) << "edge " << e << " head " << h << ": " << got
                                                                 << " vs " << want;
          some_order_differs = some_order_differs || want != sequential;
        }
      }
    }
    if (D >= 16) {
      EXPECT_TRUE(some_order_differs) << "inputs too tame: the two orders agree everywhere";
    }
  }
}

struct BadCall {
  std::string op;  // "dot", "add", "gather"
  std::vector<int64_t> offsets;
  std::vector<int32_t> indices;
  std::vector<int64_t> edge_ids;
  int64_t out_rows, out_cols;
  int64_t x_cols;  // dot / gather: x's columns (x has 3 rows); add: a's columns
  std::string needle;
};

TEST_P(SddmmTest, BadInputThrowsNamingTheArgumentAndLeavesOutputsUntouched) {
  const Device dev = device();
  // Graph: 2 destination rows, 4 edges, 3 source rows; y / b have 2 rows.
  const std::vector<BadCall> cases = {
      {"dot", {0, 2, 4}, {0, 1, 3, 2}, {}, 4, 2, 4, "sddmm_dot: indices[2] (3) must lie in [0, 3)"},
      {"dot", {1, 2, 4}, {0, 1, 2, 2}, {}, 4, 2, 4, "sddmm_dot: offsets[0] (1) must be 0"},
      {"dot", {0, 2, 4}, {0, 1, 2, 2}, {}, 4, 3, 4, "sddmm_dot: x.cols() (4) must be a positive multiple of heads (3)"},
      {"dot", {0, 2, 4}, {0, 1, 2, 2}, {}, 3, 2, 4, "sddmm_dot: out must be [4, 2] (got [3, 2])"},
      {"dot", {0, 2, 3}, {0, 1, 2, 2}, {}, 4, 2, 4, "must equal the number of rows (4)"},
      {"add", {0, 2, 4}, {0, -1, 2, 2}, {}, 4, 2, 2, "sddmm_add: indices[1] (-1) must lie in [0, 3)"},
      {"add", {0, 2, 4}, {0, 1, 2, 2}, {}, 4, 2, 3, "sddmm_add: a must be [3, 2] (got [3, 3])"},
      {"add", {0, 4, 2}, {0, 1, 2, 2}, {}, 4, 2, 2, "sddmm_add: offsets[2] (2)"},
      {"gather", {0, 2, 4}, {0, 1, 2, 2}, {0, 1, 4, 3}, 2, 4, 4, "edge_gather_sum: edge_ids[2] (4) must lie in [0, 4)"},
      {"gather", {0, 2, 4}, {0, 1, 2, 7}, {}, 2, 4, 4, "edge_gather_sum: indices[3] (7) must lie in [0, 3)"},
      {"gather", {0, 2, 4}, {0, 1, 2, 2}, {0, 1}, 2, 4, 4, "edge_gather_sum: indices.size() (4) must equal the edge count (2)"},
      {"gather", {0, 2, 4}, {0, 1, 2, 2}, {}, 2, 6, 4, "edge_gather_sum: out must be [2, 4] (got [2, 6])"},
      {"gather", {0, 2, 4}, {0, 1, 2, 2}, {}, 2, 4, 3, "edge_gather_sum: x.cols() (3) must be a positive multiple"},
  };
  auto x = to_device(std::vector<float>(3 * 4, 0.5f), dev);  // room for [3, <= 4]
  auto y = to_device(std::vector<float>(2 * 4, 1.0f), dev);
  auto w = to_device(std::vector<float>(4 * 2, 1.0f), dev);
  for (const BadCall& c : cases) {
    SCOPED_TRACE(c.needle);
    auto offsets = to_device(c.offsets, dev);
    auto indices = to_device(c.indices, dev);
    auto edge_ids = to_device(c.edge_ids, dev);
    auto out = poisoned<float>(c.out_rows * c.out_cols, dev);
    const auto before = out.to_host_vector();
    MatrixView<float> out_view(out.data(), c.out_rows, c.out_cols, dev);
    Context ctx(dev);
    try {
      if (c.op == "dot") {
        sddmm_dot<float, int32_t>(offsets.view(), indices.view(), MatrixView<const float>(x.data(), 3, c.x_cols, dev),
                                  MatrixView<const float>(y.data(), 2, c.x_cols, dev), out_view, ctx);
      } else if (c.op == "add") {
        sddmm_add<float, int32_t>(offsets.view(), indices.view(), MatrixView<const float>(x.data(), 3, c.x_cols, dev),
                                  MatrixView<const float>(y.data(), 2, 2, dev),
                                  out_view, ctx);
      } else {
        edge_gather_sum<float, int32_t>(offsets.view(), indices.view(), edge_ids.view(), w.matrix(4, 2),
                                        MatrixView<const float>(x.data(), 3, c.x_cols, dev), out_view, ctx);
      }
      ADD_FAILURE() << "no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
    }
    EXPECT_EQ(std::memcmp(out.to_host_vector().data(), before.data(), before.size() * sizeof(float)), 0)
        << "out changed";
  }
}

TEST_P(SddmmTest, ViewsOnAnotherDeviceAreRejected) {
  const Device other = device().is_cpu() ? Device::cuda(0) : Device::cpu();
  std::vector<int64_t> offsets{0, 1};
  std::vector<int32_t> indices{0};
  std::vector<float> a{1}, b{2}, out{-1};
  Context ctx(device());
  // Pointers are never dereferenced: the device check comes first.
  EXPECT_THROW((sddmm_add<float, int32_t>(VectorView<const int64_t>(offsets.data(), 2, other),
                                         VectorView<const int32_t>(indices.data(), 1, other),
                                         MatrixView<const float>(a.data(), 1, 1, other),
                                         MatrixView<const float>(b.data(), 1, 1, other),
                                         MatrixView<float>(out.data(), 1, 1, other), ctx)),
               std::invalid_argument);
  EXPECT_EQ(out[0], -1.0f);
}

INSTANTIATE_TEST_SUITE_P(Devices, SddmmTest, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
