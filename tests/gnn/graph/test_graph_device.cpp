// Graph built, derived and measured on the device its edges are on: CSR, permutation,
// transposed CSR, degrees, self loops and GCN weights against naive references on
// shapes that find bugs (a hub, isolated nodes, self loops, duplicates, no edges),
// and the CUDA path against the CPU path where a GPU exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "edgewise/gnn/graph/graph.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::Graph;

struct Edges {
  std::string name;
  int64_t num_nodes = 0;
  std::vector<int64_t> src, dst;
  std::vector<float> w;  // empty: unweighted
};

// A power-law-ish graph: node 0 a hub receiving a third of the edges, node 1 a hub
// sending a quarter, nodes >= n - 5 isolated, every 11th edge a self loop, and
// repeated edges (duplicates) from a small id range.
Edges skewed(uint64_t salt, int64_t n, int64_t e, bool weighted) {
  auto rng = rng_for(salt);
  std::uniform_int_distribution<int64_t> node(0, n - 6);
  std::uniform_int_distribution<int64_t> few(0, 4);
  std::uniform_real_distribution<float> weight(0.1f, 3.0f);
  Edges g{"skewed", n, {}, {}, {}};
  for (int64_t i = 0; i < e; ++i) {
    int64_t s = i % 4 == 0 ? 1 : node(rng);
    int64_t d = i % 3 == 0 ? 0 : node(rng);
    if (i % 11 == 0) d = s;
    if (i % 13 == 0) s = few(rng), d = few(rng);
    g.src.push_back(s);
    g.dst.push_back(d);
    if (weighted) g.w.push_back(weight(rng));
  }
  return g;
}

std::vector<Edges> shapes() {
  std::vector<Edges> all = {skewed(301, 200, 3000, false), skewed(302, 200, 3000, true),
                            skewed(303, 70000, 140000, true)};  // past the CPU's parallel threshold
  all.push_back({"no_edges", 5, {}, {}, {}});
  all.push_back({"no_nodes", 0, {}, {}, {}});
  all.push_back({"only_loops", 4, {0, 2, 2}, {0, 2, 2}, {0.5f, 1.5f, 2.0f}});
  all.push_back({"one_edge", 1, {0}, {0}, {}});
  return all;
}

// The reference CSR by destination: a stable sort of the input positions.
struct RefCsr {
  std::vector<int64_t> offsets, edge_ids, src, dst;
  std::vector<float> w;
};

RefCsr reference_csr(const Edges& g) {
  RefCsr r;
  const int64_t E = static_cast<int64_t>(g.src.size());
  r.edge_ids.resize(static_cast<size_t>(E));
  std::iota(r.edge_ids.begin(), r.edge_ids.end(), int64_t{0});
  std::stable_sort(r.edge_ids.begin(), r.edge_ids.end(), [&](int64_t a, int64_t b) { return g.dst[a] < g.dst[b]; });
  r.offsets.assign(static_cast<size_t>(g.num_nodes + 1), 0);
  for (int64_t d : g.dst) ++r.offsets[d + 1];
  for (int64_t v = 0; v < g.num_nodes; ++v) r.offsets[v + 1] += r.offsets[v];
  for (int64_t e : r.edge_ids) {
    r.src.push_back(g.src[e]);
    r.dst.push_back(g.dst[e]);
    if (!g.w.empty()) r.w.push_back(g.w[e]);
  }
  return r;
}

template <class T>
Buffer<T> upload(const std::vector<T>& host, Device device) {
  return Buffer<T>::from_host(std::span<const T>(host.data(), host.size()), device);
}

// Builds the graph from COO views that live on `device` (not from host vectors).
Graph build_on(const Edges& g, Device device) {
  const Buffer<int64_t> src = upload(g.src, device), dst = upload(g.dst, device);
  const Buffer<float> w = upload(g.w, device);
  return Graph::from_coo(src.view(), dst.view(), g.num_nodes,
                         g.w.empty() ? VectorView<const float>() : w.view());
}

template <class T, class U>
std::vector<int64_t> as_int64(const std::vector<U>& v) {
  return std::vector<int64_t>(v.begin(), v.end());
}

using GraphOnDevice = DeviceTest;

TEST_P(GraphOnDevice, CsrAndTransposedCsrEqualTheReference) {
  for (const Edges& g : shapes()) {
    SCOPED_TRACE(g.name + " N=" + std::to_string(g.num_nodes) + " E=" + std::to_string(g.src.size()));
    const Graph graph = build_on(g, device());
    ASSERT_EQ(graph.device(), device());
    const RefCsr ref = reference_csr(g);
    EXPECT_EQ(graph.offsets().to_host_vector(), ref.offsets);
    EXPECT_EQ(graph.edge_ids().to_host_vector(), ref.edge_ids);
    EXPECT_EQ((as_int64<int64_t>(graph.sources().to_host_vector())), ref.src);
    EXPECT_EQ((as_int64<int64_t>(graph.destinations().to_host_vector())), ref.dst);
    ASSERT_EQ(graph.has_edge_weight(), !g.w.empty());
    if (!g.w.empty()) {
      EXPECT_EQ(graph.edge_weight().to_host_vector(), ref.w);
    }
    // Transposed: CSR positions stably sorted by source.
    const gnn::TransposedCsr& t = graph.transposed();
    std::vector<int64_t> by_src(ref.src.size());
    std::iota(by_src.begin(), by_src.end(), int64_t{0});
    std::stable_sort(by_src.begin(), by_src.end(), [&](int64_t a, int64_t b) { return ref.src[a] < ref.src[b]; });
    std::vector<int64_t> t_dst;
    for (int64_t k : by_src) t_dst.push_back(ref.dst[k]);
    EXPECT_EQ(t.edge_ids.to_host_vector(), by_src);
    EXPECT_EQ((as_int64<int64_t>(t.destinations.to_host_vector())), t_dst);
    EXPECT_EQ(t.offsets.device(), device());
    // Edge offsets for the message form: 0..E, cached.
    std::vector<int64_t> identity(g.src.size() + 1);
    std::iota(identity.begin(), identity.end(), int64_t{0});
    EXPECT_EQ(graph.edge_offsets().to_host_vector(), identity);
    EXPECT_EQ(&graph.edge_offsets(), &graph.edge_offsets()) << "built once per graph";
    EXPECT_EQ(graph.edge_offsets().device(), device());
  }
}

TEST_P(GraphOnDevice, DegreesEqualANaiveCount) {
  for (const Edges& g : shapes()) {
    SCOPED_TRACE(g.name);
    const Graph graph = build_on(g, device());
    std::vector<double> in(static_cast<size_t>(g.num_nodes)), out(in), in_w(in), out_w(in);
    for (size_t e = 0; e < g.src.size(); ++e) {
      const double w = g.w.empty() ? 1.0 : g.w[e];
      in[g.dst[e]] += 1, out[g.src[e]] += 1, in_w[g.dst[e]] += w, out_w[g.src[e]] += w;
    }
    auto expect_degrees = [&](const gnn::Tensor& got, const std::vector<double>& want, const char* what) {
      ASSERT_EQ(got.rows(), g.num_nodes) << what;
      ASSERT_EQ(got.device(), device()) << what;
      const std::vector<float> h = got.to_host_vector();
      for (int64_t v = 0; v < g.num_nodes; ++v) {
        EXPECT_NEAR(h[v], want[v], 1e-6 * std::max(1.0, want[v])) << what << " of node " << v;
      }
    };
    expect_degrees(graph.in_degree(), in, "in_degree");
    expect_degrees(graph.out_degree(), out, "out_degree");
    expect_degrees(graph.in_degree(/*weighted=*/true), in_w, "weighted in_degree");
    expect_degrees(graph.out_degree(/*weighted=*/true), out_w, "weighted out_degree");
    // Counts are exact, not merely close.
    const std::vector<float> in_h = graph.in_degree().to_host_vector();
    for (int64_t v = 0; v < g.num_nodes; ++v) EXPECT_EQ(in_h[v], static_cast<float>(in[v]));
  }
}

TEST_P(GraphOnDevice, SelfLoopsAndGcnWeightsEqualTheReference) {
  for (const Edges& g : shapes()) {
    for (float fill : {1.0f, 2.5f}) {
      SCOPED_TRACE(g.name + " fill " + std::to_string(fill));
      const Graph graph = build_on(g, device());
      // Reference: each node's in-edges in CSR order, then its loop if it had none.
      const RefCsr ref = reference_csr(g);
      std::vector<char> has_loop(static_cast<size_t>(g.num_nodes), 0);
      for (size_t k = 0; k < ref.src.size(); ++k) {
        if (ref.src[k] == ref.dst[k]) has_loop[ref.src[k]] = 1;
      }
      std::vector<int64_t> src, dst;
      std::vector<double> w;
      for (int64_t v = 0; v < g.num_nodes; ++v) {
        for (int64_t k = ref.offsets[v]; k < ref.offsets[v + 1]; ++k) {
          src.push_back(ref.src[k]), dst.push_back(v), w.push_back(ref.w.empty() ? 1.0 : ref.w[k]);
        }
        if (!has_loop[v]) src.push_back(v), dst.push_back(v), w.push_back(fill);
      }
      const Graph loops = graph.with_self_loops(fill);
      ASSERT_EQ(loops.device(), device());
      EXPECT_EQ(loops.coo(), std::make_pair(src, dst));
      const bool weighted = !g.w.empty() || fill != 1.0f;
      ASSERT_EQ(loops.has_edge_weight(), weighted && !src.empty());
      if (loops.has_edge_weight()) {
        const std::vector<float> lw = loops.edge_weight().to_host_vector();
        for (size_t k = 0; k < w.size(); ++k) EXPECT_EQ(lw[k], static_cast<float>(w[k])) << "edge " << k;
      }
      // GCN: w_e / sqrt(deg(src) deg(dst)), deg the weighted in-degree with the loops.
      std::vector<double> deg(static_cast<size_t>(g.num_nodes));
      for (size_t k = 0; k < dst.size(); ++k) deg[dst[k]] += w[k];
      const Graph norm = graph.gcn_normalized(/*add_self_loops=*/true, fill);
      ASSERT_EQ(norm.device(), device());
      EXPECT_EQ(norm.coo(), std::make_pair(src, dst));
      const std::vector<float> nw = norm.edge_weight().to_host_vector();
      ASSERT_EQ(nw.size(), w.size());
      for (size_t k = 0; k < w.size(); ++k) {
        const double want = w[k] / std::sqrt(deg[src[k]] * deg[dst[k]]);
        EXPECT_NEAR(nw[k], want, 1e-6 * std::max(1.0, std::abs(want))) << "edge " << k;
      }
      // Without added loops an isolated destination keeps weight 0, not inf.
      const Graph plain = graph.gcn_normalized(/*add_self_loops=*/false);
      for (float x : plain.edge_weight().to_host_vector()) EXPECT_TRUE(std::isfinite(x));
    }
  }
}

TEST_P(GraphOnDevice, DevicePathEqualsCpuPath) {
  // On the CPU both sides are the same code; on a GPU this is the CUDA check.
  for (const Edges& g : shapes()) {
    SCOPED_TRACE(g.name);
    const Graph on_device = build_on(g, device());
    const Graph on_cpu = build_on(g, Device::cpu());
    EXPECT_EQ(on_device.coo(), on_cpu.coo());
    EXPECT_EQ(on_device.offsets().to_host_vector(), on_cpu.offsets().to_host_vector());
    EXPECT_EQ(on_device.edge_ids().to_host_vector(), on_cpu.edge_ids().to_host_vector());
    EXPECT_EQ(on_device.in_degree().to_host_vector(), on_cpu.in_degree().to_host_vector());
    EXPECT_EQ(on_device.out_degree().to_host_vector(), on_cpu.out_degree().to_host_vector());
    // Weighted sums may be added in another order on another device (hubs split on
    // the GPU): equal to rounding.
    auto expect_close = [](const std::vector<float>& a, const std::vector<float>& b, const char* what) {
      ASSERT_EQ(a.size(), b.size()) << what;
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_NEAR(a[i], b[i], 1e-6f * std::max(1.0f, std::abs(b[i]))) << what << " " << i;
      }
    };
    expect_close(on_device.in_degree(true).to_host_vector(), on_cpu.in_degree(true).to_host_vector(), "in_degree");
    expect_close(on_device.out_degree(true).to_host_vector(), on_cpu.out_degree(true).to_host_vector(), "out_degree");
    const Graph nd = on_device.gcn_normalized(), nc = on_cpu.gcn_normalized();
    EXPECT_EQ(nd.coo(), nc.coo());
    expect_close(nd.edge_weight().to_host_vector(), nc.edge_weight().to_host_vector(), "gcn weight");
  }
}

TEST_P(GraphOnDevice, BadEdgesOnTheDeviceAreNamedAndNothingIsBuilt) {
  auto message = [&](const Edges& g) -> std::string {
    try {
      build_on(g, device());
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message({"", 3, {0, 3, 1}, {1, 1, 9}, {}}).find("src[1] (3) must lie in [0, 3)"), std::string::npos);
  EXPECT_NE(message({"", 3, {0, 1, 1}, {1, 1, -2}, {}}).find("dst[2] (-2) must lie in [0, 3)"), std::string::npos);
  // The first bad edge wins, whichever end is bad.
  EXPECT_NE(message({"", 3, {0, 1, 7}, {5, 1, 1}, {}}).find("dst[0] (5)"), std::string::npos);
  EXPECT_NE(message({"", 3, {4, 1}, {5, 1}, {}}).find("src[0] (4)"), std::string::npos);
  EXPECT_NE(message({"", 3, {0, 1}, {1, 1}, {1.0f, INFINITY}}).find("edge_weight[1] (inf) must be finite"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Devices, GraphOnDevice, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
