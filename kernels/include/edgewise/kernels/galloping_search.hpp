// galloping_search: many ordered lower-bound queries over segmented sorted values
// (the GPUGallopingSearch contract, reference/galloping-search.txt).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// Bits of the validation word. The word is the OR of the bits every segment and
// query of the call raised; it is data, part of the result, never an exception.
struct GallopingSearchErrors {
  static constexpr uint32_t kValueRange = 1;         // a segment's value range leaves the value view
  static constexpr uint32_t kQueryRange = 2;         // a segment's query range leaves `queries`, or its
                                                     // queryCount exceeds max_query_count
  static constexpr uint32_t kDecreasingQueries = 4;  // a query is smaller than the one before it in its tile
  static constexpr uint32_t kNonFiniteQuery = 8;     // a float query is NaN or +-inf
};

struct GallopingSearchOptions {
  // Queries per tile (>= 1). Each tile is searched independently (one CPU task
  // iteration, one GPU thread): a binary-search seed for its first query, then
  // each later query gallops from the previous answer. Larger tiles pay fewer
  // seeds, smaller ones expose more parallelism.
  int64_t queries_per_tile = 32;
  // The largest queryCount a segment may have; a segment above it raises
  // kQueryRange and is skipped. -1: no limit. (Kept from the reference contract,
  // where it fixes the dispatch size; here the work is sized from the actual
  // counts, so it is only a cap.)
  int64_t max_query_count = -1;
  // false: the call resets the validation word before OR-ing its bits in;
  // true: the bits are OR-ed into the word as the caller left it (so several
  // calls can share one word without a clear).
  bool preserve_validation = false;
};

// Sizes: N values, O value_order entries, Q queries, S segments; T is float or uint32_t.
//
// values      [N]      T. Read only where a segment points.
// value_order [O]      optional int64 (a default-constructed view = absent). When present,
//                      position p of the "value view" is values[value_order[p]] (a sorted
//                      secondary index over unsorted storage, without copying); when
//                      absent, position p is values[p]. V, the value view's length, is O
//                      or N respectively.
// queries     [Q]      T.
// segments    [S, 4]   int64 records [valueOffset, valueCount, queryOffset, queryCount]:
//                      segment s searches value-view positions [valueOffset,
//                      valueOffset + valueCount) for each query in [queryOffset,
//                      queryOffset + queryCount). Empty value or query ranges are valid.
// positions   [Q]      int64, written for each query of each well-formed segment:
//                      valueOffset + (number of the segment's values < the query), i.e. the
//                      lower bound as a position in the value view (the same addressing
//                      as value_order when it is present). Queries that no well-formed
//                      segment covers are left as they were.
// validation  [1]      uint32 word, see GallopingSearchErrors and `preserve_validation`.
//
// A segment is malformed when offset or count is negative or its range leaves its
// view (kValueRange: valueOffset + valueCount > V; kQueryRange: queryOffset +
// queryCount > Q, or queryCount > max_query_count). A malformed segment raises its
// bit(s) and writes nothing.
//
// Queries are cut into tiles of queries_per_tile consecutive queries of a segment
// (the last tile may be shorter). Within a tile, a query smaller than the previous
// non-NaN query of the tile raises kDecreasingQueries and is answered by a full
// lower-bound search, so its position is still exact (the next query gallops from
// it). A decrease across a tile boundary is not reported (the next tile starts with
// a full search anyway).
//
// Float queries: +-inf raise kNonFiniteQuery and still get their exact lower bound
// (-inf -> valueOffset; +inf -> the first +inf value, else the segment's end). NaN
// raises kNonFiniteQuery, sorts after every value (as in NumPy's searchsorted):
// its position is valueOffset + valueCount, and it takes no part in the order check.
//
// Preconditions, not checked (an O(N) check would cost more than the search; they are
// the caller's construction-time responsibility, as in the reference): each segment's
// values are sorted ascending under `<` with no NaN; query ranges of distinct segments
// do not overlap. If a segment is not sorted, its positions are still within
// [valueOffset, valueOffset + valueCount] but unspecified.
//
// All views must live on ctx.device(). The call checks the arguments' shapes and
// devices, and that positions and validation overlap no input nor each other, and
// throws std::invalid_argument naming the argument before anything is written
// (positions and the validation word are then untouched). With ctx.validate
// (the default) it also checks every value_order entry lies in [0, N) — O(O) work;
// set ctx.validate = false for a trusted index in a hot path.
//
// CUDA: the call is asynchronous on ctx.stream() (no host synchronisation unless
// ctx.validate checks a value_order); read the validation word after the stream.
template <class T>
void galloping_search(VectorView<const T> values, VectorView<const int64_t> value_order,
                      VectorView<const T> queries, MatrixView<const int64_t> segments,
                      VectorView<int64_t> positions, VectorView<uint32_t> validation,
                      const GallopingSearchOptions& options, Context& ctx);

// The same on a per-thread default context for the views' device.
template <class T>
void galloping_search(VectorView<const T> values, VectorView<const int64_t> value_order,
                      VectorView<const T> queries, MatrixView<const int64_t> segments,
                      VectorView<int64_t> positions, VectorView<uint32_t> validation,
                      const GallopingSearchOptions& options = {});

// Batched lower_bound over one sorted array: the same search with one segment
// [0, N, 0, Q] (no value_order). positions[q] = number of values < queries[q] (NaN: N).
// Returns the validation word (only kDecreasingQueries and kNonFiniteQuery can occur).
// On CUDA this waits for the stream to read the word back.
template <class T>
uint32_t galloping_search(VectorView<const T> values, VectorView<const T> queries, VectorView<int64_t> positions,
                          Context& ctx, int64_t queries_per_tile = 32);

#define EW_GALLOPING_SEARCH_DECLARE(T)                                                                       \
  extern template void galloping_search<T>(VectorView<const T>, VectorView<const int64_t>, VectorView<const T>, \
                                           MatrixView<const int64_t>, VectorView<int64_t>, VectorView<uint32_t>, \
                                           const GallopingSearchOptions&, Context&);                         \
  extern template void galloping_search<T>(VectorView<const T>, VectorView<const int64_t>, VectorView<const T>, \
                                           MatrixView<const int64_t>, VectorView<int64_t>, VectorView<uint32_t>, \
                                           const GallopingSearchOptions&);                                   \
  extern template uint32_t galloping_search<T>(VectorView<const T>, VectorView<const T>, VectorView<int64_t>,  \
                                               Context&, int64_t);
EW_GALLOPING_SEARCH_DECLARE(float)
EW_GALLOPING_SEARCH_DECLARE(uint32_t)
#undef EW_GALLOPING_SEARCH_DECLARE

}  // namespace edgewise
