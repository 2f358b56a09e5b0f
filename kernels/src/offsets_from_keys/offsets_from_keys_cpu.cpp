// offsets_from_keys CPU driver (OpenMP): the merged sequence of S + 1 boundaries and
// E keys is cut into one equal slice per thread; each thread finds its starting
// point by one binary search (merge path, offsets_from_keys_core.hpp) and writes the
// offsets of the boundaries in its slice. Slices own disjoint offsets: no atomics.
#include <omp.h>

#include <algorithm>

#include "offsets_from_keys/offsets_from_keys_backends.hpp"
#include "offsets_from_keys/offsets_from_keys_core.hpp"

namespace edgewise::offsets_detail {

namespace {
constexpr int64_t kSerialBelow = int64_t{1} << 15;  // smaller inputs: one thread, no fork/join
constexpr int64_t kSpan = 1024;                     // keys checked per vectorised step

int threads_for(int64_t items) { return items < kSerialBelow ? 1 : omp_get_max_threads(); }

// Slice t of `threads` equal slices of [0, items).
int64_t slice_begin(int64_t items, int64_t threads, int64_t t) {
  return items / threads * t + std::min(t, items % threads);
}
}  // namespace

template <class K>
int64_t first_bad_key_cpu(VectorView<const K> keys, int64_t segments) {
  const int64_t n = keys.size;
  int64_t first = n;
#pragma omp parallel num_threads(threads_for(n)) reduction(min : first)
  {
    const int64_t team = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t end = slice_begin(n, team, t + 1);
    // Spans are checked with a vectorised any-bad reduction; only a bad span is
    // searched for its first bad key, with the shared test.
    for (int64_t i0 = slice_begin(n, team, t); i0 < end; i0 += kSpan) {
      const int64_t i1 = std::min(end, i0 + kSpan);
      const K* k = keys.data;
      // As unsigned, a negative key is huge: one compare checks both ends of [0, S).
      const auto limit = static_cast<uint64_t>(segments);
      int bad = 0;
      for (int64_t i = i0; i < i1; ++i) bad |= static_cast<uint64_t>(static_cast<int64_t>(k[i])) >= limit;
      for (int64_t i = std::max<int64_t>(i0, 1); i < i1; ++i) bad |= k[i] < k[i - 1];
      if (!bad) continue;
      int64_t i = i0;
      while (key_status(k, i, segments) == KeyStatus::Ok) ++i;
      first = i;
      break;
    }
  }
  return first < n ? first : -1;
}

template <class K>
void offsets_from_keys_cpu(VectorView<const K> keys, VectorView<int64_t> offsets, Context&) {
  const int64_t segments = offsets.size - 1;
  const int64_t items = segments + 1 + keys.size;
#pragma omp parallel num_threads(threads_for(items))
  {
    const int64_t team = omp_get_num_threads(), t = omp_get_thread_num();
    write_offsets(keys.data, keys.size, segments, slice_begin(items, team, t), slice_begin(items, team, t + 1),
                  offsets.data);
  }
}

#define EW_INSTANTIATE(K)                                                             \
  template int64_t first_bad_key_cpu<K>(VectorView<const K>, int64_t);                \
  template void offsets_from_keys_cpu<K>(VectorView<const K>, VectorView<int64_t>, Context&);
EW_INSTANTIATE(int32_t)
EW_INSTANTIATE(int64_t)
EW_INSTANTIATE(uint32_t)
#undef EW_INSTANTIATE

}  // namespace edgewise::offsets_detail
