// The gather-reduce engine's shared core (EW_HD, both backends): out[s] = op over
// the "edges" e in [offsets[s], offsets[s+1]) of a source row. segment_reduce is
// the gather-reduce over a contiguous source (ContiguousRows: edge e is row e);
// spmm the one over gathered, weighted rows (spmm_core.hpp: GatherRows). Hubs are
// cut into fixed pieces (fixed, so results do not depend on thread counts).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/bounds.hpp"
#include "edgewise/kernels/common/hd.hpp"

namespace edgewise::gather_reduce_detail {

// Rows (edges) per piece for C features: about `piece_elements` elements, at least one.
EW_HD_INLINE int64_t piece_rows(int64_t cols, int64_t piece_elements) {
  int64_t rows = piece_elements / (cols > 0 ? cols : 1);
  return rows > 0 ? rows : 1;
}

// Number of pieces a row of `length` edges is cut into (0: reduced whole).
EW_HD_INLINE int64_t piece_count(int64_t length, int64_t rows_per_piece) {
  return length > rows_per_piece ? (length + rows_per_piece - 1) / rows_per_piece : 0;
}

// Piece `piece` of the hub list whose exclusive piece scan is
// piece_start[0..long_count]: its hub (position in the list) and rank.
EW_HD_INLINE void locate_piece(const int64_t* piece_start, int64_t long_count, int64_t piece,
                               int64_t& list_position, int64_t& rank) {
  list_position = upper_bound_index(piece_start, 0, long_count + 1, piece) - 1;
  rank = piece - piece_start[list_position];
}

// V elements loaded as one 16-byte (V = 4 floats) access when aligned.
template <class T, int V>
struct alignas(sizeof(T) * V) Packed {
  T v[V];
};

// The destination side of a gather-reduce: rows [S] over `edges` edges by `offsets`
// [S+1], out [S, C], optional arg [S, C] (ops with an arg).
template <class T>
struct RowsOut {
  const int64_t* offsets = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t edges = 0;
  T* out = nullptr;
  int64_t* arg = nullptr;
};

// Source for segment_reduce: edge e is row e of values [M, cols]; no coefficient.
template <class T>
struct ContiguousRows {
  const T* values = nullptr;
  int64_t cols = 0;

  struct Edge {
    const T* row;
  };

  EW_HD_INLINE const T* row_of(int64_t e) const { return values + e * cols; }
  EW_HD_INLINE const T* rows_base() const { return values; }

  template <bool kScaled>
  EW_HD_INLINE Edge edge(int64_t e) const {
    return {values + e * cols};
  }
  template <bool kScaled>
  EW_HD_INLINE static T value(const Edge& edge, int64_t c) {
    return edge.row[c];
  }
  template <int V>
  EW_HD_INLINE static void load(const Edge& edge, int64_t c, T (&out)[V]) {
    const Packed<T, V> p = *reinterpret_cast<const Packed<T, V>*>(edge.row + c);
    for (int j = 0; j < V; ++j) out[j] = p.v[j];
  }
};

}  // namespace edgewise::gather_reduce_detail
