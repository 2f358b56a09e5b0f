// sort_by_key logic shared by the CPU and CUDA drivers: the order-preserving map of
// keys to unsigned bits, and which of those bits the radix passes must look at.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"

namespace edgewise::sort_by_key_detail {

// Keys as unsigned "ordered bits": unsigned order of the bits == numeric order of
// the keys. Signed keys get their sign bit flipped (the map CUB's radix sort
// applies too, so a bit range computed here means the same bits to CUB).
template <class K>
struct KeyBits;

template <>
struct KeyBits<uint32_t> {
  static EW_HD_INLINE uint64_t ordered(uint32_t key) { return key; }
  static EW_HD_INLINE uint32_t from_ordered(uint64_t bits) { return static_cast<uint32_t>(bits); }
};

template <>
struct KeyBits<int32_t> {
  static EW_HD_INLINE uint64_t ordered(int32_t key) { return static_cast<uint32_t>(key) ^ 0x80000000u; }
  static EW_HD_INLINE int32_t from_ordered(uint64_t bits) {
    return static_cast<int32_t>(static_cast<uint32_t>(bits) ^ 0x80000000u);
  }
};

template <>
struct KeyBits<int64_t> {
  static EW_HD_INLINE uint64_t ordered(int64_t key) { return static_cast<uint64_t>(key) ^ (uint64_t{1} << 63); }
  static EW_HD_INLINE int64_t from_ordered(uint64_t bits) {
    return static_cast<int64_t>(bits ^ (uint64_t{1} << 63));
  }
};

// Bits [lo, hi) of the ordered keys that contain every bit differing between two
// keys. Bits outside are the same in all keys, so sorting by [lo, hi) alone gives
// the full order. lo == hi (empty) when all keys are equal.
struct BitRange {
  int lo = 0;
  int hi = 0;
  EW_HD_INLINE int bits() const { return hi - lo; }
};

// From the OR and the AND of all ordered keys: a bit varies iff it is set in the
// OR but not in the AND.
EW_HD_INLINE BitRange varying_bits(uint64_t or_all, uint64_t and_all) {
  const uint64_t varying = or_all ^ and_all;
  BitRange r;
  if (varying == 0) return r;
  while (((varying >> r.lo) & 1u) == 0) ++r.lo;
  r.hi = 64;
  while (((varying >> (r.hi - 1)) & 1u) == 0) --r.hi;
  return r;
}

// Bits needed to hold every index in [0, n): 0 for n <= 1.
EW_HD_INLINE int index_bits(int64_t n) {
  int bits = 0;
  while (bits < 63 && (int64_t{1} << bits) < n) ++bits;
  return bits;
}

// How `bits` key bits are cut into LSD radix passes of at most `max_digit_bits`
// each: as few passes as possible, digits of (nearly) equal width.
struct DigitPlan {
  int passes = 0;
  int digit_bits = 0;
};

EW_HD_INLINE DigitPlan digit_plan(int bits, int max_digit_bits) {
  DigitPlan plan;
  if (bits <= 0) return plan;
  plan.passes = (bits + max_digit_bits - 1) / max_digit_bits;
  plan.digit_bits = (bits + plan.passes - 1) / plan.passes;
  return plan;
}

}  // namespace edgewise::sort_by_key_detail
