// Sequential oracle for gather_rows: obviously correct, never optimised.
#pragma once

#include <cstdint>
#include <vector>

namespace edgewise::reference {

// out [A * M, C] of gather_rows_csr: every segment writes its own rows; rows no
// segment covers keep their zeros.
template <class T>
std::vector<T> gather_rows_csr_ref(const std::vector<T>& values, const std::vector<int64_t>& offsets, int64_t Ao,
                                   int64_t A, int64_t M, int64_t C) {
  const int64_t S = static_cast<int64_t>(offsets.size()) / (Ao > 0 ? Ao : 1) - 1;
  std::vector<T> out(static_cast<size_t>(A * M * C), T{});  // all-zero bits for every T
  for (int64_t a = 0; a < A; ++a) {
    const int64_t* off = offsets.data() + (Ao == 1 ? 0 : a * (S + 1));
    for (int64_t s = 0; s < S; ++s) {
      for (int64_t r = off[s]; r < off[s + 1]; ++r) {
        for (int64_t c = 0; c < C; ++c) out[(a * M + r) * C + c] = values[(a * S + s) * C + c];
      }
    }
  }
  return out;
}

// out [A * E, C] of gather_rows_coo.
template <class T, class I>
std::vector<T> gather_rows_coo_ref(const std::vector<T>& values, const std::vector<I>& index, int64_t Ai, int64_t A,
                                   int64_t S, int64_t C) {
  const int64_t E = static_cast<int64_t>(index.size()) / (Ai > 0 ? Ai : 1);
  std::vector<T> out(static_cast<size_t>(A * E * C));
  for (int64_t a = 0; a < A; ++a) {
    for (int64_t e = 0; e < E; ++e) {
      const int64_t i = static_cast<int64_t>(index[(Ai == 1 ? 0 : a * E) + e]);
      for (int64_t c = 0; c < C; ++c) out[(a * E + e) * C + c] = values[(a * S + i) * C + c];
    }
  }
  return out;
}

}  // namespace edgewise::reference
