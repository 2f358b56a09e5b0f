// Sequential oracles for run_length_encode / unique (over the concatenated chunks)
// and the decoder the round-trip property uses. Obviously correct, never optimised.
#pragma once

#include <cstdint>
#include <vector>

namespace edgewise::reference {

template <class K>
struct RunLengths {
  std::vector<K> values;
  std::vector<int64_t> lengths;
};

// Runs of adjacent equal keys of the concatenation of `chunks`.
template <class K>
RunLengths<K> run_length_encode_ref(const std::vector<std::vector<K>>& chunks) {
  RunLengths<K> r;
  for (const auto& chunk : chunks) {
    for (K key : chunk) {
      if (!r.values.empty() && r.values.back() == key) {
        ++r.lengths.back();
      } else {
        r.values.push_back(key);
        r.lengths.push_back(1);
      }
    }
  }
  return r;
}

template <class K>
RunLengths<K> run_length_encode_ref(const std::vector<K>& keys) {
  return run_length_encode_ref(std::vector<std::vector<K>>{keys});
}

// values[r] repeated lengths[r] times, for r < count.
template <class K>
std::vector<K> run_length_decode_ref(const std::vector<K>& values, const std::vector<int64_t>& lengths,
                                     int64_t count) {
  std::vector<K> out;
  for (int64_t r = 0; r < count; ++r) out.insert(out.end(), static_cast<std::size_t>(lengths[r]), values[r]);
  return out;
}

}  // namespace edgewise::reference
