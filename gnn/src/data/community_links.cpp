// community_links: per-source counter streams, degrees first, then the edges
// written into each source's own range.
#include "data/community_links.hpp"

#include <numeric>

#include "data/parallel.hpp"
#include "data/random_draws.hpp"
#include "edgewise/kernels/common/counter_rng.hpp"

namespace edgewise::gnn {

CommunityMembers group_by_community(const std::vector<int64_t>& community, int64_t communities) {
  CommunityMembers g;
  g.start.assign(static_cast<size_t>(communities) + 1, 0);
  for (int64_t c : community) ++g.start[static_cast<size_t>(c) + 1];
  std::partial_sum(g.start.begin(), g.start.end(), g.start.begin());
  // A counting sort visiting ids in ascending order keeps each community's ids ascending.
  std::vector<int64_t> next(g.start.begin(), g.start.end() - 1);
  g.members.resize(community.size());
  for (size_t v = 0; v < community.size(); ++v)
    g.members[static_cast<size_t>(next[static_cast<size_t>(community[v])]++)] = static_cast<int64_t>(v);
  return g;
}

void community_links(const std::vector<int64_t>& src_community, const std::vector<int64_t>& dst_community,
                     int64_t communities, const LinkShape& shape, uint64_t seed, uint64_t tag,
                     std::vector<int64_t>& src, std::vector<int64_t>& dst) {
  src.clear();
  dst.clear();
  const int64_t num_src = static_cast<int64_t>(src_community.size());
  const int64_t num_dst = static_cast<int64_t>(dst_community.size());
  if (num_dst == 0) return;
  const CommunityMembers by_community = group_by_community(dst_community, communities);
  const auto stream = [&](int64_t u) { return CounterRng(seed, kSaltTypedEdges, typed_stream_id(tag, u)); };

  std::vector<int64_t> offsets(static_cast<size_t>(num_src) + 1, 0);
#pragma omp parallel for schedule(static) if (num_src >= kMinParallelWork / 16)
  for (int64_t u = 0; u < num_src; ++u) {
    CounterRng rng = stream(u);
    offsets[static_cast<size_t>(u) + 1] = poisson(rng, shape.mean_degree);
  }
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  const int64_t num_edges = offsets.back();
  src.resize(static_cast<size_t>(num_edges));
  dst.resize(static_cast<size_t>(num_edges));

  const int64_t* start = by_community.start.data();
  const int64_t* members = by_community.members.data();
  int64_t* out_src = src.data();
  int64_t* out_dst = dst.data();
  // No atomics: source u writes only [offsets[u], offsets[u + 1]). Its stream is
  // replayed from the start, so the degree draw repeats and the edge draws follow.
#pragma omp parallel for schedule(static) if (num_edges >= kMinParallelWork / 16)
  for (int64_t u = 0; u < num_src; ++u) {
    CounterRng rng = stream(u);
    const int64_t degree = poisson(rng, shape.mean_degree);
    const int64_t c = src_community[static_cast<size_t>(u)];
    const int64_t first = start[c], size = start[c + 1] - start[c];
    for (int64_t e = offsets[static_cast<size_t>(u)]; e < offsets[static_cast<size_t>(u)] + degree; ++e) {
      const bool inside = rng.uniform() < shape.homophily && size > 0;
      out_src[e] = u;
      out_dst[e] = inside ? members[first + skewed_pick(rng, size, shape.skew)] : skewed_pick(rng, num_dst, shape.skew);
    }
  }
}

}  // namespace edgewise::gnn
