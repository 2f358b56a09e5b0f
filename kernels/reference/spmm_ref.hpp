// Sequential oracles for spmm and its backward helpers: obviously correct, never optimised.
// The forward materialises the [E, C] messages w_e * x[src_e] (in T) and hands them to
// reduce_rows_ref; the backward helpers scatter over the FORWARD edges in double, so they
// share nothing with the transposed gathers they check.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgewise/kernels/common/reducer.hpp"
#include "segment_reduce_ref.hpp"

namespace edgewise::reference {

// offsets [S+1], indices [E], weights [E] or empty (all 1), x [N, C] -> out/arg [S, C].
// arg holds edge positions (the message rows).
template <class T, class I>
ReduceResult<T> spmm_ref(const std::vector<int64_t>& offsets, const std::vector<I>& indices,
                         const std::vector<T>& weights, const std::vector<T>& x, int64_t C, ReduceOp op) {
  const int64_t E = static_cast<int64_t>(indices.size());
  std::vector<T> messages(static_cast<size_t>(E * C));
  for (int64_t e = 0; e < E; ++e) {
    const T w = weights.empty() ? T(1) : weights[e];
    for (int64_t c = 0; c < C; ++c) messages[e * C + c] = w * x[static_cast<int64_t>(indices[e]) * C + c];
  }
  std::vector<std::vector<int64_t>> rows_of(offsets.size() - 1);
  for (size_t v = 0; v + 1 < offsets.size(); ++v) {
    for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) rows_of[v].push_back(e);
  }
  return reduce_rows_ref(messages, C, rows_of, op);
}

// The transposed CSR (edges grouped by source, in forward order within a source):
// t_offsets [N+1], t_indices [E] (destination of each), t_edge_ids [E] (forward position).
template <class I>
struct TransposedRef {
  std::vector<int64_t> offsets;
  std::vector<I> indices;
  std::vector<int64_t> edge_ids;
};

template <class I>
TransposedRef<I> transpose_ref(const std::vector<int64_t>& offsets, const std::vector<I>& indices, int64_t N) {
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1;
  std::vector<std::vector<int64_t>> edges_of(static_cast<size_t>(N));
  std::vector<int64_t> dst_of(indices.size());
  for (int64_t v = 0; v < S; ++v) {
    for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) {
      edges_of[static_cast<size_t>(indices[e])].push_back(e);
      dst_of[e] = v;
    }
  }
  TransposedRef<I> t;
  t.offsets.push_back(0);
  for (int64_t u = 0; u < N; ++u) {
    for (int64_t e : edges_of[u]) {
      t.indices.push_back(static_cast<I>(dst_of[e]));
      t.edge_ids.push_back(e);
    }
    t.offsets.push_back(static_cast<int64_t>(t.edge_ids.size()));
  }
  return t;
}

// dL/dx of spmm for every op, in double: each forward edge e (v <- src) sends
// w_e * grad_out[v] (sum), / deg(v) (mean), or only where arg[v, c] == e (min/max).
// The op's backward rule, for the rules these oracles cover (sum, mean, arg); any
// other rule throws rather than being computed as one of them.
inline BackwardRule checked_backward_rule(ReduceOp op) {
  const BackwardRule rule = backward_rule(op);
  switch (rule) {
    case BackwardRule::Sum:
    case BackwardRule::Mean:
    case BackwardRule::Arg: return rule;
    case BackwardRule::Product:
    case BackwardRule::Variance:
    case BackwardRule::StdDev: break;  // reduce_backward_ref.hpp (on the materialised messages)
  }
  throw std::invalid_argument("spmm backward oracle: no oracle for op " + std::string(to_string(op)));
}

template <class T, class I>
std::vector<double> spmm_grad_x_ref(const std::vector<int64_t>& offsets, const std::vector<I>& indices,
                                    const std::vector<T>& weights, const std::vector<T>& grad_out,
                                    const std::vector<int64_t>& arg, int64_t N, int64_t C, ReduceOp op) {
  const BackwardRule rule = checked_backward_rule(op);
  std::vector<double> grad_x(static_cast<size_t>(N * C), 0.0);
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1;
  for (int64_t v = 0; v < S; ++v) {
    const int64_t degree = offsets[v + 1] - offsets[v];
    for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) {
      double w = weights.empty() ? 1.0 : static_cast<double>(weights[e]);
      if (rule == BackwardRule::Mean) w /= static_cast<double>(degree);
      const int64_t u = static_cast<int64_t>(indices[e]);
      for (int64_t c = 0; c < C; ++c) {
        if (rule == BackwardRule::Arg && arg[v * C + c] != e) continue;
        grad_x[u * C + c] += w * static_cast<double>(grad_out[v * C + c]);
      }
    }
  }
  return grad_x;
}

// dL/dw of spmm, in double: grad_w[e] = sum_c grad_out[v, c] * x[src_e, c] (mean: / deg(v);
// min/max: only the columns where arg[v, c] == e).
template <class T, class I>
std::vector<double> spmm_grad_w_ref(const std::vector<int64_t>& offsets, const std::vector<I>& indices,
                                    const std::vector<T>& x, const std::vector<T>& grad_out,
                                    const std::vector<int64_t>& arg, int64_t C, ReduceOp op) {
  const BackwardRule rule = checked_backward_rule(op);
  std::vector<double> grad_w(indices.size(), 0.0);
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1;
  for (int64_t v = 0; v < S; ++v) {
    const int64_t degree = offsets[v + 1] - offsets[v];
    for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) {
      double dot = 0;
      for (int64_t c = 0; c < C; ++c) {
        if (rule == BackwardRule::Arg && arg[v * C + c] != e) continue;
        dot += static_cast<double>(grad_out[v * C + c]) * static_cast<double>(x[static_cast<int64_t>(indices[e]) * C + c]);
      }
      grad_w[e] = rule == BackwardRule::Mean ? dot / static_cast<double>(degree) : dot;
    }
  }
  return grad_w;
}

}  // namespace edgewise::reference
