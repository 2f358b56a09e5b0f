// Order-preserving float/int32/uint32/Half/BFloat16 -> uint32 and double/int64 ->
// uint64 keys, and the packed (key << 32) | ~row word that resolves min/max + arg in
// one 64-bit max (EW_HD). Half and BFloat16 take the key of their exact float value,
// so the 16-bit types go through the packed word like float.
//
// A 64-bit key (double, int64) already fills the word, so it cannot share it with
// its row: scatter_reduce resolves their min/max in two passes instead (keep the
// largest key; then, among the elements whose key equals it, the lowest row).
// Everything below that does not mention the packed word holds for them too.
//
// The packed word follows Reducer<Min|Max, T> exactly (reducer.hpp), so a
// reduction that keeps the largest word over its elements finds the same winner
// as one that folds them in row order:
//  - a larger value (max) or a smaller one (min) gives a larger key;
//  - NaN beats every number: any NaN, whatever its sign or payload, gets the
//    largest key 0xFFFFFFFF, above +inf for max and below -inf (as a key: above
//    the key of -inf) for min;
//  - -0 and +0 compare equal, as they do for Reducer, so they get one key;
//  - equal keys resolve to the lower row, because ~row is larger for lower rows.
// The row is stored in 32 bits: rows must be at most kPackedMaxRow, which keeps
// the low half of a real element's word nonzero, so 0 (kPackedEmpty) means
// "nothing folded yet" and is also the identity of the max.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "edgewise/kernels/common/float_bits.hpp"
#include "edgewise/kernels/common/half.hpp"
#include "edgewise/kernels/common/hd.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"

namespace edgewise {

// The word of an output no element reached; every real element's word is larger.
inline constexpr uint64_t kPackedEmpty = 0;
// The largest row a packed word can name (rows 0 .. 2^32 - 2).
inline constexpr int64_t kPackedMaxRow = int64_t{0xFFFFFFFE};

// The key type of T: 32 bits for float, int32, uint32 and the 16-bit types, 64 bits
// for double and int64.
template <class T>
using MonotoneKey = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

// The largest key (given to every NaN by extremum_key).
template <class T>
EW_HD_INLINE constexpr MonotoneKey<T> top_key() {
  return static_cast<MonotoneKey<T>>(~MonotoneKey<T>{0});
}

// Order-preserving map: a < b <=> monotone_key(a) < monotone_key(b) for numbers
// (floats: -0 and +0 both map to the key of +0). NaN is not ordered here; see
// extremum_key. Floats: flip every bit of negatives, set the sign bit of positives.
template <class T>
EW_HD_INLINE MonotoneKey<T> monotone_key(T v) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
                    std::is_same_v<T, uint32_t> || std::is_same_v<T, int64_t> || kHalfType<T>,
                "monotone_key: float, double, int32_t, uint32_t, int64_t, Half or BFloat16");
  if constexpr (kHalfType<T>) {
    return monotone_key(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return static_cast<uint64_t>(v) ^ 0x8000000000000000ull;
  } else if constexpr (std::is_same_v<T, double>) {
    uint64_t u = double_bits(v);
    u = u == 0x8000000000000000ull ? 0ull : u;  // -0 -> +0
    const uint64_t flip = static_cast<uint64_t>(static_cast<int64_t>(u) >> 63) | 0x8000000000000000ull;
    return u ^ flip;
  } else if constexpr (std::is_same_v<T, float>) {
    uint32_t u = float_bits(v);
    u = u == 0x80000000u ? 0u : u;  // -0 -> +0
    const uint32_t flip = static_cast<uint32_t>(static_cast<int32_t>(u) >> 31) | 0x80000000u;
    return u ^ flip;
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return static_cast<uint32_t>(v) ^ 0x80000000u;
  } else {
    return v;
  }
}

// Inverse of monotone_key on its image (-0 comes back as +0).
template <class T>
EW_HD_INLINE T monotone_value(MonotoneKey<T> key) {
  if constexpr (kHalfType<T>) {
    return T(monotone_value<float>(key));  // exact: the key came from T's float value
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return static_cast<int64_t>(key ^ 0x8000000000000000ull);
  } else if constexpr (std::is_same_v<T, double>) {
    return double_from_bits((key & 0x8000000000000000ull) ? (key & 0x7FFFFFFFFFFFFFFFull) : ~key);
  } else if constexpr (std::is_same_v<T, float>) {
    return float_from_bits((key & 0x80000000u) ? (key & 0x7FFFFFFFu) : ~key);
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return static_cast<int32_t>(key ^ 0x80000000u);
  } else {
    return key;
  }
}

// The key a min or max keeps the largest of: monotone_key for max, its
// complement for min (so the smallest value has the largest key), and
// top_key() for NaN in both, which therefore beats every number. A float,
// double or 16-bit float key is never 0 (only a NaN bit pattern could map there),
// so 0 can mean "nothing yet" for them; an integer key can be 0.
template <ReduceOp Op, class T>
EW_HD_INLINE MonotoneKey<T> extremum_key(T v) {
  static_assert(Op == ReduceOp::Min || Op == ReduceOp::Max, "extremum_key: min or max");
  if constexpr (kHalfType<T>) {
    return extremum_key<Op>(static_cast<float>(v));
  } else {
    const MonotoneKey<T> key = Op == ReduceOp::Max ? monotone_key(v) : static_cast<MonotoneKey<T>>(~monotone_key(v));
    if constexpr (std::is_same_v<T, double>) {
      const bool nan = (double_bits(v) & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
      return nan ? top_key<T>() : key;
    } else if constexpr (std::is_same_v<T, float>) {
      const bool nan = (float_bits(v) & 0x7FFFFFFFu) > 0x7F800000u;
      return nan ? 0xFFFFFFFFu : key;
    } else {
      return key;
    }
  }
}

// (key << 32) | ~row, row in [0, kPackedMaxRow].
EW_HD_INLINE uint64_t pack_key_row(uint32_t key, int64_t row) {
  return (static_cast<uint64_t>(key) << 32) | static_cast<uint32_t>(~static_cast<uint32_t>(row));
}
EW_HD_INLINE uint32_t packed_key(uint64_t word) { return static_cast<uint32_t>(word >> 32); }
// The row a word names; -1 for kPackedEmpty.
EW_HD_INLINE int64_t packed_row(uint64_t word) {
  return word == kPackedEmpty ? -1 : static_cast<int64_t>(static_cast<uint32_t>(~static_cast<uint32_t>(word)));
}

// The value behind an extremum_key: exact for integers and for every float but
// the two classes whose key merges several bit patterns, zero (-0 and +0) and
// NaN (any sign and payload); for those `ambiguous` is set and the caller reads
// the value back from the winning row when it needs the exact bits.
template <ReduceOp Op, class T>
EW_HD_INLINE T extremum_value(MonotoneKey<T> key, bool& ambiguous) {
  using K = MonotoneKey<T>;
  if constexpr (kFloatingElement<T>) {
    constexpr K kSign = K{1} << (8 * sizeof(K) - 1);  // the key of +0 (and -0) for max
    ambiguous = key == top_key<T>() || key == (Op == ReduceOp::Max ? kSign : static_cast<K>(~kSign));
  } else {
    ambiguous = false;
  }
  return monotone_value<T>(Op == ReduceOp::Max ? key : static_cast<K>(~key));
}

// The word element `v` of row `row` contributes to a min (Op == Min) or max
// (32-bit keys only).
template <ReduceOp Op, class T>
EW_HD_INLINE uint64_t extremum_word(T v, int64_t row) {
  static_assert(sizeof(MonotoneKey<T>) == 4, "extremum_word: a 64-bit key leaves no room for the row");
  return pack_key_row(extremum_key<Op>(v), row);
}

}  // namespace edgewise
