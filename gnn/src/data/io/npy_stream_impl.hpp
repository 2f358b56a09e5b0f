// NpyStream's state, shared by npz.cpp (which opens streams) and npy_stream.cpp.
#pragma once

#include <string>

#include "edgewise/gnn/data/npz.hpp"
#include "data/io/zip_entry_reader.hpp"

namespace edgewise::gnn {

struct NpyStream::Impl {
  Impl(const std::string& path, const ZipEntry& entry, uint64_t data_limit, std::string where)
      : reader(path, entry, data_limit, std::move(where)) {}
  ZipEntryReader reader;
  NpyHeader header;
};

}  // namespace edgewise::gnn
