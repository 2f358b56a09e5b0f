// Little-endian field access for ZIP and NPY headers (byte by byte: no alignment
// or host-endianness assumptions).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgewise::gnn {

inline uint16_t read_le16(const std::byte* p) {
  return static_cast<uint16_t>(static_cast<unsigned>(p[0]) | static_cast<unsigned>(p[1]) << 8);
}
inline uint32_t read_le32(const std::byte* p) {
  return static_cast<uint32_t>(read_le16(p)) | static_cast<uint32_t>(read_le16(p + 2)) << 16;
}
inline uint64_t read_le64(const std::byte* p) {
  return static_cast<uint64_t>(read_le32(p)) | static_cast<uint64_t>(read_le32(p + 4)) << 32;
}

}  // namespace edgewise::gnn
