// Sequential oracle for sort_by_key: std::stable_sort of positions by key. Obviously
// correct, never optimised.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace edgewise::reference {

template <class K>
struct SortResult {
  std::vector<K> keys;               // sorted, nondecreasing
  std::vector<int64_t> permutation;  // keys[j] == input[permutation[j]]; increasing among equal keys
};

template <class K>
SortResult<K> sort_by_key_ref(const std::vector<K>& keys) {
  SortResult<K> r;
  r.permutation.resize(keys.size());
  std::iota(r.permutation.begin(), r.permutation.end(), int64_t{0});
  std::stable_sort(r.permutation.begin(), r.permutation.end(),
                   [&keys](int64_t a, int64_t b) { return keys[a] < keys[b]; });
  for (int64_t p : r.permutation) r.keys.push_back(keys[p]);
  return r;
}

}  // namespace edgewise::reference
