// Edges between two typed node sets with planted communities: Poisson out-degrees,
// destinations inside the source's community with a set probability, power-law
// in-degrees. The edge model of the mag-like generator (synthetic_hetero.hpp).
#pragma once

#include <cstdint>
#include <vector>

namespace edgewise::gnn {

// The nodes of one type grouped by community: community c's members are
// members[start[c] .. start[c + 1]), ascending ids.
struct CommunityMembers {
  std::vector<int64_t> members;
  std::vector<int64_t> start;  // [K + 1]
};

// community [n] in [0, communities).
CommunityMembers group_by_community(const std::vector<int64_t>& community, int64_t communities);

// How one edge type links its sources to its destinations.
struct LinkShape {
  double mean_degree = 0;  // Poisson mean of a source's out-degree
  double homophily = 0;    // probability of drawing the destination inside the source's community
  double skew = 1;         // skewed_pick's exponent: larger, more skewed in-degrees
};

// Overwrites src and dst with the edges out of every source u, listed by u, each
// a skewed pick inside u's community among the destinations (when the uniform
// draw is below homophily and the community has destination members) or among
// all destinations. Source u draws only from stream (seed, kSaltTypedEdges,
// typed_stream_id(tag, u)): its degree, then per edge the inside draw and the
// pick, so the edges do not depend on the OpenMP thread count. No destinations:
// no edges.
void community_links(const std::vector<int64_t>& src_community, const std::vector<int64_t>& dst_community,
                     int64_t communities, const LinkShape& shape, uint64_t seed, uint64_t tag,
                     std::vector<int64_t>& src, std::vector<int64_t>& dst);

}  // namespace edgewise::gnn
