// canonical_edge_index: edges packed into 64-bit (source, destination) keys,
// LSD radix sorted in parallel, deduplicated and unpacked.
//
// Why a radix sort: a counting sort by source scatters every edge to a random
// place in an E-element array (a cache and TLB miss each: ~3 s for 10M edges
// here), while each radix pass streams through memory into 2^11 buckets.
#include "data/edge_list.hpp"

#include <omp.h>

#include <algorithm>
#include <utility>

#include "data/parallel.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

constexpr int kDigitBits = 11;
constexpr int64_t kBuckets = int64_t{1} << kDigitBits;

// [begin, end) of block t of n items split over nt threads.
inline std::pair<int64_t, int64_t> block(int64_t n, int t, int nt) { return {n * t / nt, n * (t + 1) / nt}; }

// Sorts the low `key_bits` bits of each key ascending (higher bits must be 0).
// Each pass is stable: per-thread histograms of contiguous blocks, offsets in
// (digit, thread) order, scatter. The sorted result does not depend on the
// thread count.
void radix_sort(std::vector<uint64_t>& keys, int key_bits) {
  const int64_t n = static_cast<int64_t>(keys.size());
  if (n < 2 || key_bits == 0) return;
  if (n < kMinParallelWork) {  // a comparison sort is quicker than the passes
    std::sort(keys.begin(), keys.end());
    return;
  }
  std::vector<uint64_t> tmp(keys.size());
  const int max_threads = omp_get_max_threads();
  std::vector<int64_t> offset(static_cast<size_t>(max_threads * kBuckets));
  for (int shift = 0; shift < key_bits; shift += kDigitBits) {
    const uint64_t* in = keys.data();
    uint64_t* out = tmp.data();
#pragma omp parallel num_threads(max_threads)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const auto [lo, hi] = block(n, t, nt);
      int64_t* mine = offset.data() + t * kBuckets;
      std::fill(mine, mine + kBuckets, 0);
      for (int64_t i = lo; i < hi; ++i) ++mine[(in[i] >> shift) & (kBuckets - 1)];
#pragma omp barrier
#pragma omp single
      {
        int64_t sum = 0;
        for (int64_t d = 0; d < kBuckets; ++d) {
          for (int u = 0; u < nt; ++u) {
            const int64_t c = offset[static_cast<size_t>(u * kBuckets + d)];
            offset[static_cast<size_t>(u * kBuckets + d)] = sum;
            sum += c;
          }
        }
      }
      for (int64_t i = lo; i < hi; ++i) out[mine[(in[i] >> shift) & (kBuckets - 1)]++] = in[i];
    }
    keys.swap(tmp);
  }
}

}  // namespace

int node_bits(int64_t num_nodes) {
  int bits = 0;
  while ((int64_t{1} << bits) < num_nodes) ++bits;
  return bits;
}

std::vector<int64_t> canonical_edge_index(int64_t num_nodes, std::vector<uint64_t> keys,
                                          const EdgeListOptions& options) {
  EW_REQUIRE(num_nodes >= 0 && num_nodes <= (int64_t{1} << 32), "canonical_edge_index: num_nodes (", num_nodes,
             ") must lie in [0, 2^32]");
  const int bits = node_bits(num_nodes);
  const uint64_t mask = bits == 0 ? 0 : (uint64_t{1} << bits) - 1;
  const bool drop_loops = options.remove_self_loops, sym = options.symmetrize;

  // 1. Drop self loops and add reverses, compacting by per-thread block counts
  // (a self loop is its own reverse, so it is never doubled).
  if (drop_loops || sym) {
    const int64_t E = static_cast<int64_t>(keys.size());
    const auto emitted = [&](uint64_t k) -> int64_t {
      if ((k >> bits) == (k & mask)) return drop_loops ? 0 : 1;
      return sym ? 2 : 1;
    };
    std::vector<uint64_t> out;
    const int max_threads = E >= kMinParallelWork ? omp_get_max_threads() : 1;
    std::vector<int64_t> start(static_cast<size_t>(max_threads) + 1, 0);
#pragma omp parallel num_threads(max_threads)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const auto [lo, hi] = block(E, t, nt);
      int64_t count = 0;
      for (int64_t e = lo; e < hi; ++e) count += emitted(keys[static_cast<size_t>(e)]);
      start[static_cast<size_t>(t) + 1] = count;
#pragma omp barrier
#pragma omp single
      {
        for (int u = 0; u < nt; ++u) start[static_cast<size_t>(u) + 1] += start[static_cast<size_t>(u)];
        out.resize(static_cast<size_t>(start[static_cast<size_t>(nt)]));
      }
      int64_t pos = start[static_cast<size_t>(t)];
      for (int64_t e = lo; e < hi; ++e) {
        const uint64_t k = keys[static_cast<size_t>(e)], u = k >> bits, v = k & mask;
        if (u == v && drop_loops) continue;
        out[static_cast<size_t>(pos++)] = k;
        if (sym && u != v) out[static_cast<size_t>(pos++)] = edge_key(v, u, bits);
      }
    }
    keys.swap(out);
  }

  // 2. Sort by (source, destination); 3. drop repeats.
  radix_sort(keys, 2 * bits);
  if (options.deduplicate) keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

  // 4. Unpack into edge_index [2, E'].
  const int64_t out_edges = static_cast<int64_t>(keys.size());
  std::vector<int64_t> edge_index(static_cast<size_t>(2 * out_edges));
  int64_t* out_src = edge_index.data();
  int64_t* out_dst = edge_index.data() + out_edges;
#pragma omp parallel for schedule(static) if (out_edges >= kMinParallelWork)
  for (int64_t i = 0; i < out_edges; ++i) {
    out_src[i] = static_cast<int64_t>(keys[static_cast<size_t>(i)] >> bits);
    out_dst[i] = static_cast<int64_t>(keys[static_cast<size_t>(i)] & mask);
  }
  return edge_index;
}

}  // namespace edgewise::gnn
