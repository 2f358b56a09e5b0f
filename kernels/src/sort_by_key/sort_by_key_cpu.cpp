// sort_by_key CPU driver: parallel radix sort (OpenMP), stable.
//
// One pass finds the key bits that vary (OR and AND of all keys) and whether the keys
// are already in order (then the permutation is the identity, no pass runs); only those are
// sorted, in as few digits of at most kMaxDigitBits bits as possible, so node ids
// below 2^20 take two digits whatever their type. When the varying bits and an
// index fit together in 64 bits (graph ids and up to billions of edges), each item
// is one word (field << index_bits | index) and a pass moves 8 bytes per key;
// otherwise items are (ordered key, index) pairs. The first pass reads the caller's
// keys directly and the last writes the caller's outputs directly, so no extra
// pass packs or unpacks.
//
// Small inputs run LSD passes. Large ones run one MSD pass on the top digit through
// memory, then sort each bucket by the low digits with LSD passes inside one
// thread's cache: a scatter through memory costs several times one in cache here,
// and this measured 1.6x (20-bit keys) to 1.9x (40-bit keys) faster than LSD.
// Every pass is stable: each thread counts its own contiguous block, the offsets put
// block t's items of digit d after those of blocks < t, each thread scatters its
// block in order. The output is the unique stable order, whatever the thread count.
#include <omp.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "edgewise/kernels/common/context.hpp"
#include "sort_by_key/sort_by_key_backends.hpp"
#include "sort_by_key/sort_by_key_core.hpp"

namespace edgewise::sort_by_key_detail {
namespace EW_CPU_ISA_NS {  // compiled once per ISA level (cpu_isa/dispatch.hpp)

namespace {

constexpr int kMaxDigitBits = 11;            // 2048 buckets: the scatter targets stay in L2
constexpr int64_t kSerialBelow = int64_t{1} << 14;  // smaller inputs: one thread, no fork/join
constexpr int64_t kHybridFrom = int64_t{1} << 17;   // smaller inputs: plain LSD (they fit in cache)
constexpr int64_t kLocalBucketMax = int64_t{1} << 16;  // items one thread sorts in its cache (L2)

// Items per 64-byte cache line (write-combining granule).
template <class Item>
constexpr int kLineItems = sizeof(Item) >= 64 ? 1 : static_cast<int>(64 / sizeof(Item));

// One word per item: the varying key field above the index.
struct PackedCodec {
  using Item = uint64_t;
  int lo = 0;              // lowest varying key bit
  int index_bits = 0;      // the index occupies bits [0, index_bits)
  uint64_t field_mask = 0; // the varying field, before shifting
  uint64_t common = 0;     // the bits every ordered key shares (outside the field)

  int base_shift() const { return index_bits; }
  Item make(uint64_t ordered, int64_t index) const {
    return (((ordered >> lo) & field_mask) << index_bits) | static_cast<uint64_t>(index);
  }
  static uint64_t word(Item item) { return item; }
  uint64_t ordered(Item item) const { return common | ((item >> index_bits) << lo); }
  int64_t index(Item item) const {
    return static_cast<int64_t>(item & ((uint64_t{1} << index_bits) - 1));
  }
};

// (ordered key, index) pairs, when the varying bits and the index need more than 64 bits.
struct PairCodec {
  struct Item {
    uint64_t bits;
    int64_t index;
  };
  int lo = 0;

  int base_shift() const { return lo; }
  static Item make(uint64_t ordered, int64_t index) { return {ordered, index}; }
  static uint64_t word(Item item) { return item.bits; }
  static uint64_t ordered(Item item) { return item.bits; }
  static int64_t index(Item item) { return item.index; }
};

// Where the last pass (or an all-equal input) writes: keys plus permutation...
template <class K>
struct PermutationSink {
  K* keys;
  int64_t* permutation;
  void put(int64_t pos, K key, int64_t index) const {
    keys[pos] = key;
    permutation[pos] = index;
  }
};

// ...or keys plus the caller's values gathered through the permutation.
template <class K, class P>
struct ValuesSink {
  K* keys;
  const P* values;
  P* sorted_values;
  void put(int64_t pos, K key, int64_t index) const {
    keys[pos] = key;
    sorted_values[pos] = values[index];
  }
};

// Counts the digits at `shift` of items [begin, end) into h[0, buckets) (zeroed here).
template <class Codec, class Load>
void count_digits(const Codec& codec, const Load& load, int64_t begin, int64_t end, int shift, int64_t buckets,
                  int64_t* h) {
  const uint64_t mask = static_cast<uint64_t>(buckets) - 1;
  std::fill(h, h + buckets, int64_t{0});
  for (int64_t i = begin; i < end; ++i) ++h[(codec.word(load(i)) >> shift) & mask];
}

// counts[t * buckets + d] (team rows) -> exclusive offsets in (digit, thread) order:
// the stable placement, block t's items of digit d after those of blocks < t.
inline void scan_counts(int64_t* counts, int64_t team, int64_t buckets) {
  int64_t running = 0;
  for (int64_t d = 0; d < buckets; ++d) {
    for (int64_t u = 0; u < team; ++u) {
      const int64_t count = counts[u * buckets + d];
      counts[u * buckets + d] = running;
      running += count;
    }
  }
}

// Writes one 64-byte line to 64-byte aligned `dst` around the caches (it is not read
// again soon), without first reading the line in.
inline void stream_line(void* dst, const void* line) {
#if defined(__AVX512F__)
  _mm512_stream_si512(static_cast<__m512i*>(dst), _mm512_load_si512(line));
#elif defined(__AVX__)
  for (int j = 0; j < 2; ++j) {
    _mm256_stream_si256(static_cast<__m256i*>(dst) + j, _mm256_load_si256(static_cast<const __m256i*>(line) + j));
  }
#elif defined(__SSE2__)
  for (int j = 0; j < 4; ++j) {
    _mm_stream_si128(static_cast<__m128i*>(dst) + j, _mm_load_si128(static_cast<const __m128i*>(line) + j));
  }
#else
  std::memcpy(dst, line, 64);
#endif
}

inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();  // streaming stores are weakly ordered: publish them before the barrier
#endif
}

// Stores of a pass into a scratch buffer.
template <class Item>
struct ToBuffer {
  Item* out;
  void operator()(int64_t pos, const Item& item) const { out[pos] = item; }
};

// Scatters items [begin, end) into out[offset of their digit ...], in order. For
// memory-sized outputs: single stores to 2^digit_bits scattered places cost a TLB
// walk and a read of the line before each write, so each bucket first collects a
// 64-byte line of items in `lines` (64-byte aligned; software write-combining) and
// full lines go out as aligned streaming stores. A bucket's first flush is cut short
// at the first line boundary of its output, so every full line is aligned.
template <class Codec, class Load>
void scatter_combined(const Codec& codec, const Load& load, typename Codec::Item* out, int64_t begin, int64_t end,
                      int shift, int64_t buckets, const int64_t* offsets, typename Codec::Item* lines) {
  using Item = typename Codec::Item;
  constexpr int kLine = kLineItems<Item>;
  const uint64_t mask = static_cast<uint64_t>(buckets) - 1;
  // Private copies: stores to `out` cannot alias them.
  int64_t next[int64_t{1} << kMaxDigitBits];
  int32_t fill[int64_t{1} << kMaxDigitBits];
  int32_t target[int64_t{1} << kMaxDigitBits];  // fill level that triggers a flush
  for (int64_t d = 0; d < buckets; ++d) {
    next[d] = offsets[d];
    fill[d] = 0;
    const auto misaligned = static_cast<int32_t>(reinterpret_cast<std::uintptr_t>(out + next[d]) % 64 / sizeof(Item));
    target[d] = misaligned == 0 ? kLine : kLine - misaligned;
  }
  auto flush = [&](int64_t d, int count) {
    Item* dst = out + next[d];
    const Item* line = lines + d * kLine;
    if (count == kLine) {
      stream_line(dst, line);
    } else {
      for (int j = 0; j < count; ++j) dst[j] = line[j];
    }
    next[d] += count;
  };
  for (int64_t i = begin; i < end; ++i) {
    const Item item = load(i);
    const int64_t d = static_cast<int64_t>((codec.word(item) >> shift) & mask);
    int f = fill[d];
    lines[d * kLine + f] = item;
    if (++f == target[d]) {
      flush(d, f);
      f = 0;
      target[d] = kLine;
    }
    fill[d] = f;
  }
  for (int64_t d = 0; d < buckets; ++d) flush(d, fill[d]);
  stream_fence();
}

// The same for cache-sized outputs: direct stores.
template <class Codec, class Load, class Store>
void scatter_direct(const Codec& codec, const Load& load, const Store& store, int64_t begin, int64_t end, int shift,
                    int64_t buckets, const int64_t* offsets) {
  const uint64_t mask = static_cast<uint64_t>(buckets) - 1;
  int64_t next[int64_t{1} << kMaxDigitBits];
  std::copy(offsets, offsets + buckets, next);
  for (int64_t i = begin; i < end; ++i) {
    const auto item = load(i);
    store(next[(codec.word(item) >> shift) & mask]++, item);
  }
}

// One stable LSD pass over n items with all threads: load(i) gives item i,
// store(pos, item) puts it at its place for the digit at `shift`. Each thread
// counts its own contiguous block, the counts are scanned, each thread scatters its
// block in order. Leaves in hist (threads << digit_bits) the scanned offsets: row 0
// holds where each digit's items start.
template <class Codec, class Load, class Store>
void radix_pass(const Codec& codec, int64_t n, int shift, int digit_bits, int threads, int64_t* hist,
                typename Codec::Item* combine, const Load& load, const Store& store) {
  const int64_t buckets = int64_t{1} << digit_bits;
#pragma omp parallel num_threads(threads)
  {
    const int64_t team = omp_get_num_threads();
    const int64_t t = omp_get_thread_num();
    const int64_t begin = n / team * t + std::min(t, n % team);
    const int64_t end = begin + n / team + (t < n % team ? 1 : 0);
    count_digits(codec, load, begin, end, shift, buckets, hist + t * buckets);
#pragma omp barrier
#pragma omp single
    scan_counts(hist, team, buckets);
    if constexpr (std::is_same_v<Store, ToBuffer<typename Codec::Item>>) {
      scatter_combined(codec, load, store.out, begin, end, shift, buckets, hist + t * buckets,
                       combine + t * buckets * kLineItems<typename Codec::Item>);
    } else {  // the caller's outputs, written only by a pass over cache-sized data or a big bucket
      scatter_direct(codec, load, store, begin, end, shift, buckets, hist + t * buckets);
    }
  }
}

// One thread sorts the m items at `in` (m <= kLocalBucketMax) by the digits of
// `plan` from bit `shift0` on. Every pass scatters into this thread's cache-sized
// temporaries (t[0], t[1]), which stay in cache from bucket to bucket; the result
// then goes out in order through store_last(pos, item), a sequential write.
template <class Codec, class StoreLast>
void local_lsd(const Codec& codec, const typename Codec::Item* in, typename Codec::Item* const t[2], int64_t m,
               int shift0, DigitPlan plan, int64_t* h, const StoreLast& store_last) {
  using Item = typename Codec::Item;
  const int64_t buckets = int64_t{1} << plan.digit_bits;
  const Item* from = in;
  for (int p = 0; p < plan.passes; ++p) {
    const int shift = shift0 + p * plan.digit_bits;
    auto load = [from](int64_t i) { return from[i]; };
    count_digits(codec, load, 0, m, shift, buckets, h);
    scan_counts(h, 1, buckets);
    scatter_direct(codec, load, ToBuffer<Item>{t[p % 2]}, 0, m, shift, buckets, h);
    from = t[p % 2];
  }
  for (int64_t i = 0; i < m; ++i) store_last(i, from[i]);
}

// Plain LSD: `plan` passes over all n items, each through memory.
template <class K, class Codec, class Sink>
void lsd_sort(const Codec& codec, const K* keys, int64_t n, DigitPlan plan, const Sink& sink, int threads,
              int64_t* hist, typename Codec::Item* combine, typename Codec::Item* const buf[2]) {
  using Item = typename Codec::Item;
  auto from_keys = [&codec, keys](int64_t i) { return codec.make(KeyBits<K>::ordered(keys[i]), i); };
  auto to_sink = [&codec, &sink](int64_t pos, const Item& item) {
    sink.put(pos, KeyBits<K>::from_ordered(codec.ordered(item)), codec.index(item));
  };
  for (int p = 0; p < plan.passes; ++p) {
    const int shift = codec.base_shift() + p * plan.digit_bits;
    const bool first = p == 0;
    const bool last = p == plan.passes - 1;
    const Item* in = first ? nullptr : buf[(p - 1) % 2];
    Item* out = last ? nullptr : buf[p % 2];
    auto from_buffer = [in](int64_t i) { return in[i]; };
    const ToBuffer<Item> to_buffer{out};
    if (first && last) {
      radix_pass(codec, n, shift, plan.digit_bits, threads, hist, combine, from_keys, to_sink);
    } else if (first) {
      radix_pass(codec, n, shift, plan.digit_bits, threads, hist, combine, from_keys, to_buffer);
    } else if (last) {
      radix_pass(codec, n, shift, plan.digit_bits, threads, hist, combine, from_buffer, to_sink);
    } else {
      radix_pass(codec, n, shift, plan.digit_bits, threads, hist, combine, from_buffer, to_buffer);
    }
  }
}

// Hybrid: one MSD pass through memory on the top digit (into buf[0]), then every
// bucket is sorted by the remaining low digits with LSD passes: inside one thread's
// cache when the bucket is small (buckets spread over threads dynamically; `temps`
// holds 2 x kLocalBucketMax items per thread), with all threads through memory when
// it is big. Stable: the MSD pass is stable and so is each bucket's LSD. For keys
// spread evenly only one pass scatters through memory.
template <class K, class Codec, class Sink>
void hybrid_sort(const Codec& codec, const K* keys, int64_t n, int bits, const Sink& sink, int threads,
                 int64_t* hist, typename Codec::Item* combine, typename Codec::Item* const buf[2],
                 typename Codec::Item* temps) {
  using Item = typename Codec::Item;
  const int top_bits = kMaxDigitBits;
  const DigitPlan low = digit_plan(bits - top_bits, kMaxDigitBits);
  const int64_t top_buckets = int64_t{1} << top_bits;
  auto from_keys = [&codec, keys](int64_t i) { return codec.make(KeyBits<K>::ordered(keys[i]), i); };
  radix_pass(codec, n, codec.base_shift() + bits - top_bits, top_bits, threads, hist, combine, from_keys,
             ToBuffer<Item>{buf[0]});
  std::vector<int64_t> start(hist, hist + top_buckets);  // row 0 of the scanned counts
  start.push_back(n);

  // A bucket one thread sorts must fit its cache and leave the others work (at
  // most a quarter of a thread's share).
  const int64_t local_max = std::min<int64_t>(kLocalBucketMax, std::max<int64_t>(n / (4 * threads), 1));
  std::vector<int64_t> local;
  for (int64_t d = 0; d < top_buckets; ++d) {
    const int64_t b0 = start[d], m = start[d + 1] - start[d];
    if (m == 0) continue;
    if (m <= local_max) {
      local.push_back(d);
      continue;
    }
    // A big bucket: LSD over its range with all threads, through memory.
    for (int p = 0; p < low.passes; ++p) {
      const int shift = codec.base_shift() + p * low.digit_bits;
      const Item* in = buf[p % 2] + b0;
      auto from_buffer = [in](int64_t i) { return in[i]; };
      if (p + 1 == low.passes) {
        auto to_sink = [&codec, &sink, b0](int64_t pos, const Item& item) {
          sink.put(b0 + pos, KeyBits<K>::from_ordered(codec.ordered(item)), codec.index(item));
        };
        radix_pass(codec, m, shift, low.digit_bits, threads, hist, combine, from_buffer, to_sink);
      } else {
        radix_pass(codec, m, shift, low.digit_bits, threads, hist, combine, from_buffer,
                   ToBuffer<Item>{buf[(p + 1) % 2] + b0});
      }
    }
  }
  const int64_t local_count = static_cast<int64_t>(local.size());
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num();
    Item* const mine[2] = {temps + 2 * t * kLocalBucketMax, temps + (2 * t + 1) * kLocalBucketMax};
    int64_t* h = hist + t * (int64_t{1} << kMaxDigitBits);
#pragma omp for schedule(dynamic, 4)
    for (int64_t j = 0; j < local_count; ++j) {
      const int64_t d = local[j];
      const int64_t b0 = start[d];
      auto to_sink = [&codec, &sink, b0](int64_t pos, const Item& item) {
        sink.put(b0 + pos, KeyBits<K>::from_ordered(codec.ordered(item)), codec.index(item));
      };
      local_lsd(codec, buf[0] + b0, mine, start[d + 1] - b0, codec.base_shift(), low, h, to_sink);
    }
  }
}

template <class K, class Codec, class Sink>
void run_passes(const Codec& codec, const K* keys, int64_t n, int bits, const Sink& sink, int threads, Context& ctx) {
  using Item = typename Codec::Item;
  const DigitPlan plan = digit_plan(bits, kMaxDigitBits);
  const bool hybrid = plan.passes >= 2 && n >= kHybridFrom;
  // Buffers: LSD ping-pongs through min(passes - 1, 2); the hybrid needs the second
  // one only for big buckets that take more than one low pass.
  const int buffers =
      hybrid ? (digit_plan(bits - kMaxDigitBits, kMaxDigitBits).passes >= 2 ? 2 : 1) : std::min(plan.passes - 1, 2);
  ScratchLayout layout;
  const std::size_t hist_at = layout.add<int64_t>(static_cast<int64_t>(threads) << kMaxDigitBits);
  const std::size_t combine_at = layout.add<Item>((static_cast<int64_t>(threads) << kMaxDigitBits) * kLineItems<Item>);
  const std::size_t a_at = layout.add<Item>(buffers >= 1 ? n : 0);
  const std::size_t b_at = layout.add<Item>(buffers >= 2 ? n : 0);
  const std::size_t temps_at = layout.add<Item>(hybrid ? 2 * threads * kLocalBucketMax : 0);
  void* base = ctx.scratch(layout.bytes());
  int64_t* hist = ScratchLayout::at<int64_t>(base, hist_at);
  Item* combine = ScratchLayout::at<Item>(base, combine_at);
  Item* const buf[2] = {ScratchLayout::at<Item>(base, a_at), ScratchLayout::at<Item>(base, b_at)};
  if (hybrid) {
    hybrid_sort(codec, keys, n, bits, sink, threads, hist, combine, buf, ScratchLayout::at<Item>(base, temps_at));
  } else {
    lsd_sort(codec, keys, n, plan, sink, threads, hist, combine, buf);
  }
}

template <class K, class Sink>
void radix_sort(const K* keys, int64_t n, const Sink& sink, Context& ctx) {
  if (n == 0) return;
  const int threads = n < kSerialBelow ? 1 : omp_get_max_threads();
  uint64_t or_all = 0, and_all = ~uint64_t{0};
  int descents = 0;  // keys already in order (a sampler's edges by destination) keep it
#pragma omp parallel for num_threads(threads) schedule(static) reduction(| : or_all) reduction(& : and_all) \
    reduction(| : descents)
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t bits = KeyBits<K>::ordered(keys[i]);
    or_all |= bits;
    and_all &= bits;
    descents |= i > 0 && KeyBits<K>::ordered(keys[i - 1]) > bits;
  }
  const BitRange range = varying_bits(or_all, and_all);
  if (range.bits() == 0 || descents == 0) {  // in order already (or one key): the identity permutation
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < n; ++i) sink.put(i, keys[i], i);
    return;
  }
  const int idx_bits = index_bits(n);
  if (range.bits() + idx_bits <= 64) {
    PackedCodec codec;
    codec.lo = range.lo;
    codec.index_bits = idx_bits;
    codec.field_mask = range.bits() == 64 ? ~uint64_t{0} : (uint64_t{1} << range.bits()) - 1;
    codec.common = and_all & ~(codec.field_mask << range.lo);
    run_passes(codec, keys, n, range.bits(), sink, threads, ctx);
  } else {
    PairCodec codec;
    codec.lo = range.lo;
    run_passes(codec, keys, n, range.bits(), sink, threads, ctx);
  }
}

}  // namespace

template <class K>
void sort_by_key_cpu(VectorView<const K> keys, VectorView<K> sorted_keys, VectorView<int64_t> permutation,
                     Context& ctx) {
  radix_sort(keys.data, keys.size, PermutationSink<K>{sorted_keys.data, permutation.data}, ctx);
}

template <class K, class P>
void sort_by_key_values_cpu(VectorView<const K> keys, VectorView<const P> values, VectorView<K> sorted_keys,
                            VectorView<P> sorted_values, Context& ctx) {
  radix_sort(keys.data, keys.size, ValuesSink<K, P>{sorted_keys.data, values.data, sorted_values.data}, ctx);
}

#define EW_INSTANTIATE(K)                                                                                  \
  template void sort_by_key_cpu<K>(VectorView<const K>, VectorView<K>, VectorView<int64_t>, Context&);    \
  template void sort_by_key_values_cpu<K, uint32_t>(VectorView<const K>, VectorView<const uint32_t>,      \
                                                    VectorView<K>, VectorView<uint32_t>, Context&);       \
  template void sort_by_key_values_cpu<K, uint64_t>(VectorView<const K>, VectorView<const uint64_t>,      \
                                                    VectorView<K>, VectorView<uint64_t>, Context&);
EW_INSTANTIATE(uint32_t)
EW_INSTANTIATE(int32_t)
EW_INSTANTIATE(int64_t)
#undef EW_INSTANTIATE

}  // namespace EW_CPU_ISA_NS
}  // namespace edgewise::sort_by_key_detail
