// Fuzz target: the .npz / .npy reader on arbitrary bytes. Every input must either
// read back consistently or throw DataFileError; anything else (a crash, a
// sanitizer report, another exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "edgewise/gnn/data/npz.hpp"
#include "memory_file.hpp"

using edgewise::gnn::DataFileError;
using edgewise::gnn::NpyArray;
using edgewise::gnn::NpyHeader;
using edgewise::gnn::NpzArchive;

namespace {

// The conversions may refuse a value (DataFileError), never anything worse.
template <class T>
void convert(const NpyArray& a) {
  try {
    const auto values = a.as<T>();
    if (static_cast<int64_t>(values.size()) != a.size()) std::abort();
  } catch (const DataFileError&) {
  }
  try {
    (void)a.scalar<T>();
  } catch (const DataFileError&) {
  }
}

void read_entries(const std::string& path) {
  const NpzArchive archive = NpzArchive::open(path);
  for (const std::string& key : archive.keys()) {
    if (!archive.contains(key)) std::abort();
    try {
      const NpyHeader h = archive.header(key);
      const NpyArray a = archive.read(key);
      // A successful read honours its header.
      if (a.shape != h.shape || a.dtype != h.dtype ||
          static_cast<int64_t>(a.data.size()) != a.size() * a.dtype.itemsize)
        std::abort();
      convert<uint8_t>(a);
      convert<int32_t>(a);
      convert<int64_t>(a);
      convert<float>(a);
      convert<double>(a);
    } catch (const DataFileError&) {
      // One bad entry does not stop the others from being tried.
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static edgewise::fuzz::MemoryFile file;
  // The bare NPY header parser on the raw bytes.
  try {
    const NpyHeader h = edgewise::gnn::parse_npy_header(reinterpret_cast<const std::byte*>(data), size, "fuzz");
    if (h.header_bytes > static_cast<int64_t>(size) || h.size() < 0) std::abort();
  } catch (const DataFileError&) {
  }
  // The archive reader, through a file.
  try {
    read_entries(file.write(data, size));
  } catch (const DataFileError&) {
  }
  return 0;
}
