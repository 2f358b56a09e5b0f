// segment_reduce logic shared by the CPU and CUDA drivers: how long segments are
// cut into fixed pieces (fixed, so results do not depend on thread counts).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/bounds.hpp"
#include "edgewise/kernels/common/hd.hpp"

namespace edgewise::segment_reduce_detail {

// Rows per piece for C features: about `piece_elements` elements, at least one row.
EW_HD_INLINE int64_t piece_rows(int64_t cols, int64_t piece_elements) {
  int64_t rows = piece_elements / (cols > 0 ? cols : 1);
  return rows > 0 ? rows : 1;
}

// Number of pieces a segment of `length` rows is cut into (0: reduced whole).
EW_HD_INLINE int64_t piece_count(int64_t length, int64_t rows_per_piece) {
  return length > rows_per_piece ? (length + rows_per_piece - 1) / rows_per_piece : 0;
}

// Piece `piece` of the long-segment list whose exclusive piece scan is
// piece_start[0..long_count]: its segment (position in the list) and rank.
EW_HD_INLINE void locate_piece(const int64_t* piece_start, int64_t long_count, int64_t piece,
                               int64_t& list_position, int64_t& rank) {
  list_position = upper_bound_index(piece_start, 0, long_count + 1, piece) - 1;
  rank = piece - piece_start[list_position];
}

}  // namespace edgewise::segment_reduce_detail
