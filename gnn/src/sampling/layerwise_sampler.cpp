// LayerwiseSampler: FastGCN / LADIES layer-wise importance sampling on a SegmentTree,
// with importance-weighted (optionally row-normalised) blocks.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "edgewise/gnn/sampling/layerwise_sampler.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/philox.hpp"
#include "edgewise/kernels/galloping_search.hpp"
#include "edgewise/kernels/run_length_encode.hpp"
#include "edgewise/kernels/segment_reduce.hpp"
#include "edgewise/kernels/sort_by_key.hpp"
#include "sampling.hpp"

namespace edgewise::gnn {

namespace {
constexpr const char* kOp = "LayerwiseSampler";

// The SegmentTree seed of one layer: a Philox block of the generator's (seed, stream),
// so layers and batches never share draws.
uint64_t tree_seed(uint64_t seed, uint64_t stream) {
  const PhiloxBlock b = philox_block(seed, stream, 0);
  return (static_cast<uint64_t>(b.v[0]) << 32) | b.v[1];
}
}  // namespace

struct LayerwiseSampler::State {
  sampling::SortedRows rows;        // Â on the host, each row by ascending source
  std::vector<float> weight;        // Â(v, u) of each sorted entry
  std::vector<float> column_norm2;  // FastGCN: ||Â(:, u)||^2
  std::optional<SegmentTree> fastgcn_tree;
};

LayerwiseSampler::LayerwiseSampler(const Graph& graph, std::vector<int64_t> layer_sizes,
                                   LayerwiseSamplerOptions options)
    : layer_sizes_(std::move(layer_sizes)), options_(options) {
  EW_REQUIRE(graph.defined(), kOp, ": the graph is undefined");
  EW_REQUIRE(!layer_sizes_.empty(), kOp, ": layer_sizes must name at least one layer");
  for (size_t l = 0; l < layer_sizes_.size(); ++l) {
    EW_REQUIRE(layer_sizes_[l] >= 1, kOp, ": layer_sizes[", l, "] (", layer_sizes_[l], ") must be >= 1");
  }
  // More draws than nodes only repeat nodes (the estimate stays unbiased for any t),
  // and 10^9 draws on a small graph take a minute: t is clamped to N.
  for (int64_t& t : layer_sizes_) t = std::min(t, std::max<int64_t>(graph.num_nodes(), 1));
  device_ = options.device.value_or(graph.device());
  auto state = std::make_shared<State>();
  state->rows = sampling::sorted_rows(graph.gcn_normalized(options.add_self_loops));
  const Graph& a = state->rows.host;
  const std::vector<float> w = a.edge_weight().to_host_vector();
  const int64_t E = a.num_edges(), N = a.num_nodes();
  state->weight.resize(static_cast<size_t>(E));
  for (int64_t k = 0; k < E; ++k) state->weight[k] = w[state->rows.position(k)];
  if (options.scheme == LayerwiseScheme::FastGCN && N > 0) {
    std::vector<double> norm2(static_cast<size_t>(N), 0.0);
    const int32_t* src = state->rows.sources();
    for (int64_t k = 0; k < E; ++k) norm2[src[k]] += static_cast<double>(state->weight[k]) * state->weight[k];
    state->column_norm2.assign(norm2.begin(), norm2.end());
    std::vector<int64_t> all(static_cast<size_t>(N));
    std::iota(all.begin(), all.end(), int64_t{0});
    state->fastgcn_tree.emplace(N, Device::cpu());
    state->fastgcn_tree->update(VectorView<const int64_t>(all.data(), N),
                                VectorView<const float>(state->column_norm2.data(), N));
  }
  state_ = std::move(state);
}

const Graph& LayerwiseSampler::normalized_graph() const { return state_->rows.host; }

std::vector<double> LayerwiseSampler::fastgcn_proposal() const {
  std::vector<double> q;
  if (!state_->fastgcn_tree) {
    // Computed on demand for LADIES samplers (the same column norms).
    const int64_t N = state_->rows.host.num_nodes(), E = state_->rows.host.num_edges();
    q.assign(static_cast<size_t>(N), 0.0);
    for (int64_t k = 0; k < E; ++k) q[state_->rows.sources()[k]] += double(state_->weight[k]) * state_->weight[k];
  } else {
    q.assign(state_->column_norm2.begin(), state_->column_norm2.end());
  }
  const double total = std::accumulate(q.begin(), q.end(), 0.0);
  if (total > 0) {
    for (double& x : q) x /= total;
  }
  return q;
}

MiniBatch LayerwiseSampler::sample(const IndexTensor& seed_nodes, Generator& generator) const {
  const std::vector<int64_t> host = seed_nodes.to_host_vector();
  return sample(std::span<const int64_t>(host), generator);
}

MiniBatch LayerwiseSampler::sample(std::span<const int64_t> seed_nodes, Generator& generator) const {
  const State& st = *state_;
  const std::vector<int32_t> seeds = sampling::checked_seeds(seed_nodes, st.rows.host.num_nodes(), kOp);
  const int64_t L = static_cast<int64_t>(layer_sizes_.size());
  std::vector<uint64_t> streams(static_cast<size_t>(L));
  for (auto& s : streams) s = generator.next_stream();  // innermost layer first
  Context& ctx = trusted_context(Device::cpu());
  const int64_t* off = st.rows.offsets();
  const int32_t* src = st.rows.sources();

  std::vector<Block> blocks(static_cast<size_t>(L));
  std::vector<int32_t> frontier = seeds;
  for (int64_t l = L - 1; l >= 0; --l) {
    const int64_t t = layer_sizes_[l];
    const int64_t m = static_cast<int64_t>(frontier.size());
    // The Â rows of the destinations: every candidate edge u -> v, v in D.
    std::vector<int64_t> row_off(static_cast<size_t>(m + 1), 0);
    for (int64_t i = 0; i < m; ++i) row_off[i + 1] = row_off[i] + off[frontier[i] + 1] - off[frontier[i]];
    const int64_t M = row_off[m];
    std::vector<uint32_t> cand_src(static_cast<size_t>(M));
    std::vector<int64_t> cand_entry(static_cast<size_t>(M));  // sorted-entry index in Â
#pragma omp parallel for schedule(dynamic, 64) if (m > 256)
    for (int64_t i = 0; i < m; ++i) {
      const int64_t begin = off[frontier[i]];
      for (int64_t k = 0; k < row_off[i + 1] - row_off[i]; ++k) {
        cand_src[row_off[i] + k] = static_cast<uint32_t>(src[begin + k]);
        cand_entry[row_off[i] + k] = begin + k;
      }
    }

    // The proposal q and t draws from it: drawn ids (ascending, distinct), and for
    // each the factor c_u / (t q(u)).
    std::vector<uint32_t> drawn;
    std::vector<double> factor;
    const uint64_t seed = tree_seed(generator.seed(), streams[L - 1 - l]);
    auto take_draws = [&](const SegmentTree& tree, const std::vector<float>& q_raw, auto id_of) {
      const double total = static_cast<double>(tree.total());
      if (!(total > 0)) return;  // nothing to draw from: an empty block
      std::vector<int64_t> draws(static_cast<size_t>(t));
      tree.sample(VectorView<int64_t>(draws.data(), t), seed, /*stratified=*/false, ctx);
      std::sort(draws.begin(), draws.end());
      for (size_t k = 0; k < draws.size();) {
        size_t e = k;
        while (e < draws.size() && draws[e] == draws[k]) ++e;
        const double q = static_cast<double>(q_raw[draws[k]]) / total;
        drawn.push_back(static_cast<uint32_t>(id_of(draws[k])));
        factor.push_back(static_cast<double>(e - k) / (static_cast<double>(t) * q));
        k = e;
      }
    };
    if (options_.scheme == LayerwiseScheme::FastGCN) {
      if (st.fastgcn_tree) take_draws(*st.fastgcn_tree, st.column_norm2, [](int64_t u) { return u; });
    } else if (M > 0) {
      // LADIES: q(u) ∝ sum over the destinations' rows of Â(v, u)^2 — sort the
      // candidate entries by source, run-length encode, sum each run.
      std::vector<int32_t> keys(cand_src.begin(), cand_src.end());
      std::vector<float> sq(static_cast<size_t>(M));
      for (int64_t k = 0; k < M; ++k) sq[k] = st.weight[cand_entry[k]] * st.weight[cand_entry[k]];
      std::vector<int32_t> sorted_keys(static_cast<size_t>(M));
      std::vector<float> sorted_sq(static_cast<size_t>(M));
      sort_by_key<int32_t, float>(VectorView<const int32_t>(keys.data(), M), VectorView<const float>(sq.data(), M),
                                  VectorView<int32_t>(sorted_keys.data(), M), VectorView<float>(sorted_sq.data(), M),
                                  ctx);
      std::vector<int32_t> cand(static_cast<size_t>(M));
      std::vector<int64_t> lengths(static_cast<size_t>(M));
      const int64_t R = run_length_encode<int32_t>(VectorView<const int32_t>(sorted_keys.data(), M),
                                                   VectorView<int32_t>(cand.data(), M),
                                                   VectorView<int64_t>(lengths.data(), M), ctx);
      std::vector<int64_t> run_off(static_cast<size_t>(R + 1), 0);
      std::partial_sum(lengths.begin(), lengths.begin() + R, run_off.begin() + 1);
      std::vector<float> q_raw(static_cast<size_t>(R));
      segment_reduce<float>(MatrixView<const float>(sorted_sq.data(), M, 1),
                            VectorView<const int64_t>(run_off.data(), R + 1), ReduceOp::Sum,
                            MatrixView<float>(q_raw.data(), R, 1), MatrixView<int64_t>(), ctx);
      SegmentTree tree(R, Device::cpu());
      std::vector<int64_t> leaves(static_cast<size_t>(R));
      std::iota(leaves.begin(), leaves.end(), int64_t{0});
      tree.update(VectorView<const int64_t>(leaves.data(), R), VectorView<const float>(q_raw.data(), R), ctx);
      take_draws(tree, q_raw, [&cand](int64_t r) { return cand[r]; });
    }

    // Keep the candidate edges whose source was drawn: galloping search of each row's
    // (ascending) sources over the drawn ids.
    const int64_t S = static_cast<int64_t>(drawn.size());
    std::vector<int64_t> hit(static_cast<size_t>(M), -1);  // index into `drawn`, or -1
    if (S > 0 && M > 0) {
      std::vector<int64_t> segments(static_cast<size_t>(4 * m));
      for (int64_t i = 0; i < m; ++i) {
        segments[4 * i + 0] = 0;
        segments[4 * i + 1] = S;
        segments[4 * i + 2] = row_off[i];
        segments[4 * i + 3] = row_off[i + 1] - row_off[i];
      }
      std::vector<int64_t> positions(static_cast<size_t>(M));
      uint32_t validation = 0;
      galloping_search<uint32_t>(VectorView<const uint32_t>(drawn.data(), S), {},
                                 VectorView<const uint32_t>(cand_src.data(), M),
                                 MatrixView<const int64_t>(segments.data(), m, 4),
                                 VectorView<int64_t>(positions.data(), M), VectorView<uint32_t>(&validation, 1),
                                 GallopingSearchOptions{}, ctx);
      if (validation != 0) {
        throw std::logic_error("LayerwiseSampler: galloping_search raised validation bits " +
                               std::to_string(validation));
      }
      for (int64_t k = 0; k < M; ++k) {
        if (positions[k] < S && drawn[positions[k]] == cand_src[k]) hit[k] = positions[k];
      }
    }
    std::vector<int64_t> offsets(static_cast<size_t>(m + 1), 0);
    for (int64_t i = 0; i < m; ++i) {
      int64_t kept = 0;
      for (int64_t k = row_off[i]; k < row_off[i + 1]; ++k) kept += hit[k] >= 0;
      offsets[i + 1] = offsets[i] + kept;
    }
    const int64_t E = offsets[m];
    std::vector<uint32_t> sources(static_cast<size_t>(E));
    std::vector<int64_t> edge_ids(static_cast<size_t>(E));
    std::vector<float> weights(static_cast<size_t>(E));
#pragma omp parallel for schedule(dynamic, 64) if (m > 256)
    for (int64_t i = 0; i < m; ++i) {
      // Each destination writes only its own range: no atomics.
      int64_t o = offsets[i];
      double row_sum = 0;
      for (int64_t k = row_off[i]; k < row_off[i + 1]; ++k) {
        if (hit[k] < 0) continue;
        row_sum += static_cast<double>(st.weight[cand_entry[k]]) * factor[hit[k]];
      }
      const double scale = options_.row_normalize && row_sum > 0 ? 1.0 / row_sum : 1.0;
      for (int64_t k = row_off[i]; k < row_off[i + 1]; ++k) {
        if (hit[k] < 0) continue;
        sources[o] = cand_src[k];
        edge_ids[o] = st.rows.position(cand_entry[k]);
        weights[o] = static_cast<float>(static_cast<double>(st.weight[cand_entry[k]]) * factor[hit[k]] * scale);
        ++o;
      }
    }
    sampling::Relabelled ids = sampling::relabel(frontier, offsets, sources);
    blocks[l] = sampling::make_block(ids, m, offsets, edge_ids, weights, device_);
    frontier = std::move(ids.src_nodes);
  }
  return sampling::assemble(std::move(blocks), seeds, device_);
}

}  // namespace edgewise::gnn
