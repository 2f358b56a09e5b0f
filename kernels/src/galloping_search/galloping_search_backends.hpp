// galloping_search backend entry points (arguments already checked by galloping_search.cpp).
#pragma once

#include <cstdint>

#include "edgewise/kernels/galloping_search.hpp"

namespace edgewise::galloping_search_detail {

// Raw, checked arguments of one call, all on ctx.device().
template <class T>
struct Args {
  const T* values = nullptr;
  int64_t value_size = 0;        // V: value_order's size when present, else N
  const int64_t* order = nullptr;  // value_order, or null
  const T* queries = nullptr;
  int64_t query_size = 0;        // Q
  const int64_t* segments = nullptr;  // [S, 4], or null: one segment [0, V, 0, Q]
  int64_t segment_count = 0;     // S (1 when segments is null)
  int64_t queries_per_tile = 32;
  int64_t max_query_count = -1;  // < 0: no cap
  int64_t* positions = nullptr;
  // The caller's validation word on the device, or null: then the word is kept in
  // scratch and, after the call, copied to the host at *word_out (CUDA synchronises).
  uint32_t* validation = nullptr;
  uint32_t* word_out = nullptr;
  bool preserve_validation = false;
};

template <class T>
void galloping_search_cpu(const Args<T>& args, Context& ctx);

template <class T>
void galloping_search_cuda(const Args<T>& args, Context& ctx);

// Index of the first value_order entry outside [0, value_count), or -1.
int64_t first_bad_order_cpu(VectorView<const int64_t> order, int64_t value_count);
int64_t first_bad_order_cuda(VectorView<const int64_t> order, int64_t value_count, Context& ctx);

}  // namespace edgewise::galloping_search_detail
