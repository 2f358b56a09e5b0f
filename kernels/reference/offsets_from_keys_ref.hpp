// Sequential oracle for offsets_from_keys: count the keys of each segment, then a
// running sum. Obviously correct, never optimised (and it does not need sorted keys).
#pragma once

#include <cstdint>
#include <vector>

namespace edgewise::reference {

template <class K>
std::vector<int64_t> offsets_from_keys_ref(const std::vector<K>& keys, int64_t segments) {
  std::vector<int64_t> count(static_cast<std::size_t>(segments), 0);
  for (K key : keys) ++count[static_cast<std::size_t>(key)];
  std::vector<int64_t> offsets(static_cast<std::size_t>(segments) + 1, 0);
  for (int64_t s = 0; s < segments; ++s) offsets[s + 1] = offsets[s] + count[s];
  return offsets;
}

}  // namespace edgewise::reference
