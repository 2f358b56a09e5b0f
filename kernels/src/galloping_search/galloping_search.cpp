// galloping_search: argument checks, then dispatch to the CPU or CUDA driver.
#include "edgewise/kernels/galloping_search.hpp"

#include "common/cuda_backend.hpp"
#include "common/validate.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/memory.hpp"
#include "galloping_search/galloping_search_backends.hpp"

namespace edgewise {

namespace {
constexpr const char* kOp = "galloping_search";

template <class V>
void require_data(const V& view, int64_t size, const char* name) {
  EW_REQUIRE(size >= 0, kOp, ": ", name, " has a negative size (", size, ")");
  EW_REQUIRE(view.data != nullptr || size == 0, kOp, ": ", name, " is null but has ", size, " elements");
}

// Whether two byte ranges share memory (empty ranges never do).
bool overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  if (a == nullptr || b == nullptr || a_bytes <= 0 || b_bytes <= 0) return false;
  const auto* pa = static_cast<const std::byte*>(a);
  const auto* pb = static_cast<const std::byte*>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

struct Region {
  const char* name;
  const void* data;
  int64_t bytes;
};

// An output must not alias any input (or the other output): the search reads
// values and queries while it writes.
void require_no_alias(const Region& output, std::initializer_list<Region> others) {
  for (const Region& other : others) {
    EW_REQUIRE(!overlap(output.data, output.bytes, other.data, other.bytes), kOp, ": ", output.name,
               " must not alias ", other.name);
  }
}

template <class T>
void check_common(VectorView<const T> values, VectorView<const T> queries, VectorView<int64_t> positions,
                  int64_t queries_per_tile, Context& ctx) {
  using detail::require_device;
  require_data(values, values.size, "values");
  require_data(queries, queries.size, "queries");
  require_data(positions, positions.size, "positions");
  EW_REQUIRE(positions.size == queries.size, kOp, ": positions.size() (", positions.size,
             ") must equal queries.size() (", queries.size, ")");
  EW_REQUIRE(queries_per_tile >= 1, kOp, ": queries_per_tile (", queries_per_tile, ") must be >= 1");
  require_device(kOp, "values", values.device, ctx);
  require_device(kOp, "queries", queries.device, ctx);
  require_device(kOp, "positions", positions.device, ctx);
}

void check_value_order(VectorView<const int64_t> order, int64_t value_count, Context& ctx) {
  int64_t bad = -1;
  if (order.device.is_cuda()) {
#if EDGEWISE_WITH_CUDA
    bad = galloping_search_detail::first_bad_order_cuda(order, value_count, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  } else {
    bad = galloping_search_detail::first_bad_order_cpu(order, value_count);
  }
  if (bad < 0) return;
  int64_t entry = 0;
  copy_bytes(&entry, Device::cpu(), order.data + bad, order.device, sizeof entry, ctx.stream());
  detail::throw_invalid_argument(kOp, ": value_order[", bad, "] (", entry, ") must lie in [0, ", value_count,
                                 ") (it names a row of values)");
}

template <class T>
void run(const galloping_search_detail::Args<T>& args, Context& ctx) {
  if (ctx.device().is_cpu()) {
    galloping_search_detail::galloping_search_cpu(args, ctx);
  } else {
#if EDGEWISE_WITH_CUDA
    galloping_search_detail::galloping_search_cuda(args, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}
}  // namespace

template <class T>
void galloping_search(VectorView<const T> values, VectorView<const int64_t> value_order,
                      VectorView<const T> queries, MatrixView<const int64_t> segments,
                      VectorView<int64_t> positions, VectorView<uint32_t> validation,
                      const GallopingSearchOptions& options, Context& ctx) {
  using detail::require_device;
  check_common(values, queries, positions, options.queries_per_tile, ctx);
  EW_REQUIRE(options.max_query_count >= -1, kOp, ": max_query_count (", options.max_query_count,
             ") must be >= 0, or -1 for no limit");
  EW_REQUIRE(segments.rows >= 0 && (segments.cols == 4 || segments.rows == 0), kOp,
             ": segments must be [S, 4] records [valueOffset, valueCount, queryOffset, queryCount] (got [",
             segments.rows, ", ", segments.cols, "])");
  require_data(segments, segments.size(), "segments");
  require_device(kOp, "segments", segments.device, ctx);
  EW_REQUIRE(validation.size == 1 && validation.data != nullptr, kOp,
             ": validation must be one uint32 word (got size ", validation.size, ")");
  require_device(kOp, "validation", validation.device, ctx);
  if (value_order.present()) {
    require_data(value_order, value_order.size, "value_order");
    require_device(kOp, "value_order", value_order.device, ctx);
  }
  const Region values_region{"values", values.data, values.size * int64_t{sizeof(T)}};
  const Region order_region{"value_order", value_order.data, value_order.size * 8};
  const Region queries_region{"queries", queries.data, queries.size * int64_t{sizeof(T)}};
  const Region segments_region{"segments", segments.data, segments.size() * 8};
  const Region positions_region{"positions", positions.data, positions.size * 8};
  require_no_alias(positions_region, {values_region, order_region, queries_region, segments_region});
  require_no_alias({"validation", validation.data, 4},
                   {values_region, order_region, queries_region, segments_region, positions_region});
  if (ctx.validate && value_order.present()) check_value_order(value_order, values.size, ctx);

  galloping_search_detail::Args<T> args;
  args.values = values.data;
  args.order = value_order.present() ? value_order.data : nullptr;
  args.value_size = value_order.present() ? value_order.size : values.size;
  args.queries = queries.data;
  args.query_size = queries.size;
  args.segments = segments.data;
  args.segment_count = segments.rows;
  args.queries_per_tile = options.queries_per_tile;
  args.max_query_count = options.max_query_count;
  args.positions = positions.data;
  args.validation = validation.data;
  args.preserve_validation = options.preserve_validation;
  if (args.segment_count == 0) args.segments = nullptr;  // nothing to read; S stays 0
  run(args, ctx);
}

template <class T>
void galloping_search(VectorView<const T> values, VectorView<const int64_t> value_order,
                      VectorView<const T> queries, MatrixView<const int64_t> segments,
                      VectorView<int64_t> positions, VectorView<uint32_t> validation,
                      const GallopingSearchOptions& options) {
  galloping_search(values, value_order, queries, segments, positions, validation, options,
                   default_context(values.device));
}

template <class T>
uint32_t galloping_search(VectorView<const T> values, VectorView<const T> queries, VectorView<int64_t> positions,
                          Context& ctx, int64_t queries_per_tile) {
  check_common(values, queries, positions, queries_per_tile, ctx);
  require_no_alias({"positions", positions.data, positions.size * 8},
                   {{"values", values.data, values.size * int64_t{sizeof(T)}},
                    {"queries", queries.data, queries.size * int64_t{sizeof(T)}}});
  uint32_t word = 0;
  galloping_search_detail::Args<T> args;
  args.values = values.data;
  args.value_size = values.size;
  args.queries = queries.data;
  args.query_size = queries.size;
  args.segments = nullptr;  // one implicit segment [0, N, 0, Q]
  args.segment_count = 1;
  args.queries_per_tile = queries_per_tile;
  args.positions = positions.data;
  args.word_out = &word;
  run(args, ctx);
  return word;
}

#define EW_INSTANTIATE(T)                                                                                      \
  template void galloping_search<T>(VectorView<const T>, VectorView<const int64_t>, VectorView<const T>,       \
                                    MatrixView<const int64_t>, VectorView<int64_t>, VectorView<uint32_t>,      \
                                    const GallopingSearchOptions&, Context&);                                  \
  template void galloping_search<T>(VectorView<const T>, VectorView<const int64_t>, VectorView<const T>,       \
                                    MatrixView<const int64_t>, VectorView<int64_t>, VectorView<uint32_t>,      \
                                    const GallopingSearchOptions&);                                            \
  template uint32_t galloping_search<T>(VectorView<const T>, VectorView<const T>, VectorView<int64_t>, Context&, \
                                        int64_t);
EW_INSTANTIATE(float)
EW_INSTANTIATE(uint32_t)
#undef EW_INSTANTIATE

}  // namespace edgewise
