// spmm logic shared by the CPU and CUDA drivers (EW_HD): edge coefficients, the two
// "gathered row" sources the gather-reduce drivers run over, the weight-gradient term,
// and the index check. Hub rows are cut into pieces exactly as segment_reduce does.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"
#include "gather_reduce/gather_reduce_core.hpp"

namespace edgewise::spmm_detail {

using gather_reduce_detail::locate_piece;
using gather_reduce_detail::Packed;
using gather_reduce_detail::piece_count;
using gather_reduce_detail::piece_rows;
using gather_reduce_detail::RowsOut;

// The scalar an edge's gathered row is multiplied by: its weight (1 without weights;
// weights[weight_ids[e]] with the indirection), divided by the degree of the gathered
// row when degree_offsets is given (the mean backward: v's gradient is shared by deg(v)).
template <class T>
struct EdgeScale {
  const T* weights = nullptr;
  const int64_t* weight_ids = nullptr;
  const int64_t* degree_offsets = nullptr;

  EW_HD_INLINE bool trivial() const { return weights == nullptr && degree_offsets == nullptr; }

  EW_HD_INLINE T operator()(int64_t e, int64_t gathered_row) const {
    T w = T(1);
    if (weights != nullptr) w = weights[weight_ids != nullptr ? weight_ids[e] : e];
    if (degree_offsets != nullptr) {
      const int64_t degree = degree_offsets[gathered_row + 1] - degree_offsets[gathered_row];
      w = degree > 0 ? w / static_cast<T>(degree) : T(0);
    }
    return w;
  }
};

// Source for spmm and its sum/mean backward: the message of edge e at column c is
// scale(e, src) * x[src, c] with src = indices[e].
template <class T, class I>
struct GatherRows {
  const I* indices = nullptr;
  const T* x = nullptr;
  int64_t cols = 0;
  EdgeScale<T> scale;

  struct Edge {
    const T* row;
    T coef;
  };

  // The gathered row of edge e (what a CPU prefetch targets), and the matrix rows come from.
  EW_HD_INLINE const T* row_of(int64_t e) const { return x + static_cast<int64_t>(indices[e]) * cols; }
  EW_HD_INLINE const T* rows_base() const { return x; }

  template <bool kScaled>
  EW_HD_INLINE Edge edge(int64_t e) const {
    const int64_t src = static_cast<int64_t>(indices[e]);
    return {x + src * cols, kScaled ? scale(e, src) : T(1)};
  }

  template <bool kScaled>
  EW_HD_INLINE static T value(const Edge& edge, int64_t c) {
    if constexpr (kScaled) {
      return edge.coef * edge.row[c];
    } else {
      return edge.row[c];
    }
  }

  // V consecutive messages from column c (c % V == 0; 16-byte aligned when V == 4). No
  // `#pragma unroll` here: the host compiler sees this header too; V is a constant.
  template <int V>
  EW_HD_INLINE static void load(const Edge& edge, int64_t c, T (&out)[V]) {
    const Packed<T, V> p = *reinterpret_cast<const Packed<T, V>*>(edge.row + c);
    for (int j = 0; j < V; ++j) out[j] = edge.coef * p.v[j];
  }
};

// Source for the min/max backward over the transposed CSR: transposed edge t (forward
// edge e = edge_ids[t], destination v = dst[t]) carries w_e * grad[v, c] into column c
// only where the forward picked it (arg[v, c] == e), and 0 elsewhere.
template <class T, class I>
struct ArgGradRows {
  const I* dst = nullptr;
  const int64_t* edge_ids = nullptr;
  const T* grad = nullptr;
  const int64_t* arg = nullptr;
  int64_t cols = 0;
  const T* weights = nullptr;  // forward order; null: every weight 1

  struct Edge {
    const T* grad_row;
    const int64_t* arg_row;
    int64_t e;
    T coef;
  };

  EW_HD_INLINE const T* row_of(int64_t t) const { return grad + static_cast<int64_t>(dst[t]) * cols; }
  EW_HD_INLINE const int64_t* arg_row_of(int64_t t) const { return arg + static_cast<int64_t>(dst[t]) * cols; }
  EW_HD_INLINE const T* rows_base() const { return grad; }

  template <bool kScaled>
  EW_HD_INLINE Edge edge(int64_t t) const {
    const int64_t v = static_cast<int64_t>(dst[t]);
    const int64_t e = edge_ids[t];
    return {grad + v * cols, arg + v * cols, e, kScaled && weights != nullptr ? weights[e] : T(1)};
  }

  template <bool kScaled>
  EW_HD_INLINE static T value(const Edge& edge, int64_t c) {
    const T g = kScaled ? edge.coef * edge.grad_row[c] : edge.grad_row[c];
    return edge.arg_row[c] == edge.e ? g : T(0);
  }

  template <int V>
  EW_HD_INLINE static void load(const Edge& edge, int64_t c, T (&out)[V]) {
    const Packed<T, V> p = *reinterpret_cast<const Packed<T, V>*>(edge.grad_row + c);
    for (int j = 0; j < V; ++j) out[j] = edge.arg_row[c + j] == edge.e ? edge.coef * p.v[j] : T(0);
  }
};

// One column's term of dL/dw_e: grad_out[v, c] * x[src_e, c], masked to the columns the
// forward's arg credits to e for min/max.
template <bool kArg, class T>
EW_HD_INLINE T weight_grad_term(T grad, T x, int64_t arg_vc, int64_t e) {
  if constexpr (kArg) {
    return arg_vc == e ? grad * x : T(0);
  } else {
    return grad * x;
  }
}

// The factor a dot product of weight-gradient terms is multiplied by (mean: 1/deg).
template <class T>
EW_HD_INLINE T weight_grad_scale(bool mean, int64_t degree) {
  return mean && degree > 0 ? T(1) / static_cast<T>(degree) : T(1);
}

}  // namespace edgewise::spmm_detail
