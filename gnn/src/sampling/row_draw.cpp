// draw_row: the per-destination draw both hop samplers run (row_draw.hpp).
#include "row_draw.hpp"

#include <algorithm>
#include <cmath>

#include "edgewise/kernels/common/philox.hpp"
#include "sampling.hpp"
#include "sampling_core.hpp"

namespace edgewise::gnn::sampling {

namespace {

// A uniform double in [0, 1) for draw j of `node` (two per Philox block).
double uniform_draw(uint64_t seed, uint64_t stream, uint32_t node, uint64_t j) {
  const PhiloxBlock block = philox_block(seed, stream, draw_counter(node, j >> 1));
  const int half = static_cast<int>(j & 1);
  return uniform_double(block.v[2 * half], block.v[2 * half + 1]);
}

}  // namespace

void draw_row(int64_t first, int64_t last, const RowData& data, int64_t seed_time, int64_t count, bool replace,
              uint64_t seed, uint64_t stream, uint32_t node, RowDrawScratch& scratch, std::vector<int64_t>& picked) {
  std::vector<int64_t>& eligible = scratch.eligible;
  const double* weight = data.weight;
  // The candidate positions: [first, last), or `eligible` when some are filtered.
  bool listed = false;
  if (data.temporal()) {
    if (data.strategy == TemporalStrategy::Last) {
      // Sorted rows: the eligible positions are a prefix; take its newest `count`.
      int64_t lo = first, hi = last;
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (data.time_of(mid) <= seed_time) lo = mid + 1; else hi = mid;
      }
      last = lo;
      if (count >= 0) first = std::max(first, last - count);
    } else {
      eligible.clear();
      for (int64_t k = first; k < last; ++k) {
        if (data.time_of(k) <= seed_time) eligible.push_back(k);
      }
      listed = true;
    }
  }
  if (weight != nullptr) {  // zero weights are never drawn
    if (!listed) {
      eligible.clear();
      for (int64_t k = first; k < last; ++k) eligible.push_back(k);
      listed = true;
    }
    eligible.erase(std::remove_if(eligible.begin(), eligible.end(), [&](int64_t k) { return !(weight[k] > 0); }),
                   eligible.end());
  }
  const int64_t d = listed ? static_cast<int64_t>(eligible.size()) : last - first;
  const auto position = [&](int64_t j) { return listed ? eligible[j] : first + j; };
  picked.clear();
  if (d == 0 || count == 0) {
    // nothing
  } else if (count < 0 || (!replace && count >= d)) {
    for (int64_t j = 0; j < d; ++j) picked.push_back(position(j));
  } else if (replace && weight == nullptr) {
    PhiloxBlock block{};
    for (int64_t s = 0; s < count; ++s) {
      if ((s & 1) == 0) block = refresh_block(seed, stream, node, static_cast<uint64_t>(s));
      picked.push_back(position(static_cast<int64_t>(draw_below(block, static_cast<int>(s & 1),
                                                                 static_cast<uint64_t>(d)))));
    }
  } else if (replace) {  // weighted, with replacement: inverse CDF
    std::vector<double>& cdf = scratch.keys;
    cdf.resize(static_cast<size_t>(d));
    double total = 0;
    for (int64_t j = 0; j < d; ++j) cdf[j] = total += weight[position(j)];
    for (int64_t s = 0; s < count; ++s) {
      const double u = uniform_draw(seed, stream, node, static_cast<uint64_t>(s)) * total;
      const int64_t j = std::upper_bound(cdf.begin(), cdf.begin() + d, u) - cdf.begin();
      picked.push_back(position(std::min(j, d - 1)));
    }
  } else if (weight == nullptr) {
    picked.resize(static_cast<size_t>(count));
    choose_positions(seed, stream, node, d, count, picked.data(), scratch.bitmap);
    for (int64_t& p : picked) p = position(p);
  } else {  // weighted, without replacement: the `count` largest keys log(u) / w
    std::vector<double>& keys = scratch.keys;
    keys.resize(static_cast<size_t>(d));
    std::vector<int64_t>& order = scratch.order;
    order.resize(static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j) {
      const double u = uniform_draw(seed, stream, node, static_cast<uint64_t>(j));
      keys[j] = std::log(u > 0 ? u : 0x1.0p-60) / weight[position(j)];
      order[j] = j;
    }
    std::nth_element(order.begin(), order.begin() + count, order.end(),
                     [&](int64_t a, int64_t c) { return keys[a] > keys[c] || (keys[a] == keys[c] && a < c); });
    order.resize(static_cast<size_t>(count));
    std::sort(order.begin(), order.end());
    for (int64_t j : order) picked.push_back(position(j));
  }
}

int64_t row_unsorted_by_time(const int64_t* colptr, int64_t num_dst, const RowData& data) {
  int64_t unsorted = -1;
#pragma omp parallel for reduction(max : unsorted) if (num_dst > (1 << 16))
  for (int64_t v = 0; v < num_dst; ++v) {
    for (int64_t k = colptr[v] + 1; k < colptr[v + 1]; ++k) {
      if (data.time_of(k) < data.time_of(k - 1)) {
        unsorted = std::max(unsorted, v);
        break;
      }
    }
  }
  return unsorted;
}

}  // namespace edgewise::gnn::sampling
