// Writing NumPy .npz archives: one stored (uncompressed) "<key>.npy" member per
// array, readable by numpy.load and NpzArchive, written atomically.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "edgewise/gnn/data/npz.hpp"

namespace edgewise::gnn {

// The dtype of T's arrays (T as below).
template <class T>
NpyDtype npy_dtype();

// An array to write: `values` in C order with `shape` (empty for a scalar). T is
// one of uint8_t, int32_t, int64_t, uint64_t, float, double. Throws
// std::invalid_argument when the shape does not hold values.size() elements.
template <class T>
NpyArray npy_array(std::span<const T> values, std::vector<int64_t> shape);
template <class T>
NpyArray npy_array(const std::vector<T>& values, std::vector<int64_t> shape) {
  return npy_array(std::span<const T>(values), std::move(shape));
}
template <class T>
NpyArray npy_scalar(T value) {
  return npy_array(std::span<const T>(&value, 1), {});
}

using NpzEntries = std::vector<std::pair<std::string, NpyArray>>;

struct NpzWriteOptions {
  // Zip64 records are written only for archives that need them (a member or an
  // offset at or above 4 GiB, 65535 members or more); this forces them (tests).
  bool force_zip64 = false;
};

// Writes `entries` (in order) as the archive `path`, atomically: the bytes go to a
// temporary file in path's directory, which is flushed to disk (fsync) and then
// renamed over `path`. Keys must be non-empty, unique and without '/' or '\0';
// each array's data must match its dtype and shape (std::invalid_argument naming
// the key otherwise, before anything is written). On an I/O failure the temporary
// file is removed, an existing file at `path` is left as it was, and
// std::runtime_error names `path` and the reason.
void write_npz(const std::string& path, const NpzEntries& entries, const NpzWriteOptions& options = {});

}  // namespace edgewise::gnn
