// run_length_encode backend entry points (arguments already validated by
// run_length_encode.cpp). with_lengths false means unique: values only.
#pragma once

#include "cpu_isa/dispatch.hpp"
#include "edgewise/kernels/run_length_encode.hpp"

namespace edgewise::rle_detail {

// Throws std::invalid_argument (naming `op`) when values (or, with_lengths, lengths)
// hold fewer than `runs` elements. Backends call it once the run count is known,
// before any write.
template <class K>
void require_run_capacity(const char* op, int64_t runs, VectorView<K> values, VectorView<int64_t> lengths,
                          bool with_lengths);

// The CPU driver, one copy per ISA level (run_length_encode_cpu.cpp; cpu_isa/dispatch.hpp).
EW_DECLARE_PER_CPU_ISA(
    template <class K>
    int64_t run_length_encode_cpu(const char* op, std::span<const VectorView<const K>> chunks, VectorView<K> values,
                                  VectorView<int64_t> lengths, bool with_lengths, Context& ctx);)

// The copy for cpu_isa().
template <class K>
int64_t run_length_encode_cpu(const char* op, std::span<const VectorView<const K>> chunks, VectorView<K> values,
                              VectorView<int64_t> lengths, bool with_lengths, Context& ctx) {
  return EW_DISPATCH_CPU_ISA(run_length_encode_cpu, op, chunks, values, lengths, with_lengths, ctx);
}

template <class K>
int64_t run_length_encode_cuda(const char* op, std::span<const VectorView<const K>> chunks, VectorView<K> values,
                               VectorView<int64_t> lengths, bool with_lengths, Context& ctx);

}  // namespace edgewise::rle_detail
