// SegmentTree backend entry points (arguments already checked by segment_tree.cpp).
// `tree` is the [2 L] node array, `leaves` = L = 2^levels.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"

namespace edgewise::segment_tree_detail {

// Index of the first k with a bad indices[k] or priorities[k], or -1.
int64_t first_bad_update_cpu(const int64_t* indices, const float* priorities, int64_t count, int64_t capacity);
int64_t first_bad_update_cuda(const int64_t* indices, const float* priorities, int64_t count, int64_t capacity,
                              Context& ctx);

// Writes the batch's leaves (last write wins) and restores their ancestors. count > 0.
void update_cpu(float* tree, int64_t leaves, int levels, const int64_t* indices, const float* priorities,
                int64_t count, Context& ctx);
void update_cuda(float* tree, int64_t leaves, int levels, const int64_t* indices, const float* priorities,
                 int64_t count, Context& ctx);

// out[i] = draw i of n. n > 0.
void sample_cpu(const float* tree, int64_t leaves, uint64_t seed, bool stratified, int64_t* out, int64_t n);
void sample_cuda(const float* tree, int64_t leaves, uint64_t seed, bool stratified, int64_t* out, int64_t n,
                 Context& ctx);

}  // namespace edgewise::segment_tree_detail
