// sort_by_key CPU driver: parallel LSD radix sort (OpenMP).
//
// One pass finds the key bits that vary (OR and AND of all keys); only those are
// sorted, in as few passes of at most kMaxDigitBits-bit digits as possible, so node
// ids below 2^20 take two passes whatever their type. When the varying bits and an
// index fit together in 64 bits (graph ids and up to billions of edges), each item
// is one word (field << index_bits | index) and a pass moves 8 bytes per key;
// otherwise items are (ordered key, index) pairs. The first pass reads the caller's
// keys directly and the last writes the caller's outputs directly, so no extra
// pass packs or unpacks.
//
// A pass is stable: every thread histograms its own contiguous block, the offsets
// put block t's items of digit d after those of blocks < t, then each thread
// scatters its block in order. The output is the unique stable order, whatever the
// thread count.
#include <omp.h>

#include <algorithm>

#include "edgewise/kernels/common/context.hpp"
#include "sort_by_key/sort_by_key_backends.hpp"
#include "sort_by_key/sort_by_key_core.hpp"

namespace edgewise::sort_by_key_detail {

namespace {

constexpr int kMaxDigitBits = 11;            // 2048 buckets: the scatter targets stay in L2
constexpr int64_t kSerialBelow = int64_t{1} << 14;  // smaller inputs: one thread, no fork/join

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

// One stable LSD pass over n items: load(i) gives item i, store(pos, item) puts it
// at its sorted position for the digit at `shift`. `hist` holds threads << digit_bits
// counters; `combine` holds threads << digit_bits cache lines of items.
//
// Scattered single stores to 2^digit_bits places thrash the TLB and read every
// line before writing it; instead each bucket collects a cache line of items in
// `combine` (software write-combining) and a full line goes out in one burst.
template <class Codec, class Load, class Store>
void radix_pass(const Codec& codec, int64_t n, int shift, int digit_bits, int threads, int64_t* hist,
                typename Codec::Item* combine, const Load& load, const Store& store) {
  using Item = typename Codec::Item;
  constexpr int kLine = kLineItems<Item>;
  const int64_t buckets = int64_t{1} << digit_bits;
  const uint64_t mask = static_cast<uint64_t>(buckets) - 1;
#pragma omp parallel num_threads(threads)
  {
    const int64_t team = omp_get_num_threads();
    const int64_t t = omp_get_thread_num();
    const int64_t begin = n / team * t + std::min(t, n % team);
    const int64_t end = begin + n / team + (t < n % team ? 1 : 0);
    int64_t* h = hist + t * buckets;
    std::fill(h, h + buckets, int64_t{0});
    for (int64_t i = begin; i < end; ++i) ++h[(codec.word(load(i)) >> shift) & mask];
#pragma omp barrier
#pragma omp single
    {
      // Exclusive scan in (digit, thread) order: the stable placement.
      int64_t running = 0;
      for (int64_t d = 0; d < buckets; ++d) {
        for (int64_t u = 0; u < team; ++u) {
          const int64_t count = hist[u * buckets + d];
          hist[u * buckets + d] = running;
          running += count;
        }
      }
    }
    // Private copies of this thread's offsets and line fill levels: stores through
    // `store` cannot alias them.
    int64_t next[int64_t{1} << kMaxDigitBits];
    int32_t fill[int64_t{1} << kMaxDigitBits];
    std::copy(h, h + buckets, next);
    std::fill(fill, fill + buckets, 0);
    Item* lines = combine + t * buckets * kLine;
    auto flush = [&](int64_t d, int count) {
      const int64_t pos = next[d];
      const Item* line = lines + d * kLine;
      for (int j = 0; j < count; ++j) store(pos + j, line[j]);
      next[d] = pos + count;
    };
    for (int64_t i = begin; i < end; ++i) {
      const Item item = load(i);
      const int64_t d = static_cast<int64_t>((codec.word(item) >> shift) & mask);
      int f = fill[d];
      lines[d * kLine + f] = item;
      if (++f == kLine) {
        flush(d, kLine);
        f = 0;
      }
      fill[d] = f;
    }
    for (int64_t d = 0; d < buckets; ++d) flush(d, fill[d]);
  }
}

template <class K, class Codec, class Sink>
void run_passes(const Codec& codec, const K* keys, int64_t n, DigitPlan plan, const Sink& sink, int threads,
                Context& ctx) {
  using Item = typename Codec::Item;
  const int buffers = std::min(plan.passes - 1, 2);
  ScratchLayout layout;
  const std::size_t hist_at = layout.add<int64_t>(static_cast<int64_t>(threads) << plan.digit_bits);
  const std::size_t combine_at = layout.add<Item>((static_cast<int64_t>(threads) << plan.digit_bits) * kLineItems<Item>);
  const std::size_t a_at = layout.add<Item>(buffers >= 1 ? n : 0);
  const std::size_t b_at = layout.add<Item>(buffers >= 2 ? n : 0);
  void* base = ctx.scratch(layout.bytes());
  int64_t* hist = ScratchLayout::at<int64_t>(base, hist_at);
  Item* combine = ScratchLayout::at<Item>(base, combine_at);
  Item* buf[2] = {ScratchLayout::at<Item>(base, a_at), ScratchLayout::at<Item>(base, b_at)};

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
    auto to_buffer = [out](int64_t pos, const Item& item) { out[pos] = item; };
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

template <class K, class Sink>
void radix_sort(const K* keys, int64_t n, const Sink& sink, Context& ctx) {
  if (n == 0) return;
  const int threads = n < kSerialBelow ? 1 : omp_get_max_threads();
  uint64_t or_all = 0, and_all = ~uint64_t{0};
#pragma omp parallel for num_threads(threads) schedule(static) reduction(| : or_all) reduction(& : and_all)
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t bits = KeyBits<K>::ordered(keys[i]);
    or_all |= bits;
    and_all &= bits;
  }
  const BitRange range = varying_bits(or_all, and_all);
  if (range.bits() == 0) {  // all keys equal (or one key): the identity permutation
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < n; ++i) sink.put(i, keys[i], i);
    return;
  }
  const DigitPlan plan = digit_plan(range.bits(), kMaxDigitBits);
  const int idx_bits = index_bits(n);
  if (range.bits() + idx_bits <= 64) {
    PackedCodec codec;
    codec.lo = range.lo;
    codec.index_bits = idx_bits;
    codec.field_mask = range.bits() == 64 ? ~uint64_t{0} : (uint64_t{1} << range.bits()) - 1;
    codec.common = and_all & ~(codec.field_mask << range.lo);
    run_passes(codec, keys, n, plan, sink, threads, ctx);
  } else {
    PairCodec codec;
    codec.lo = range.lo;
    run_passes(codec, keys, n, plan, sink, threads, ctx);
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

}  // namespace edgewise::sort_by_key_detail
