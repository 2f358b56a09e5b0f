// Test helper: builds .npy arrays and .npz (ZIP) archives byte by byte — NPY
// v1/v2/v3 headers, stored or deflated (zlib) members, zip64 extra fields in
// local and/or central headers, zip64 end records — so the reader's tests
// control every field, and a scratch directory that removes itself.
#pragma once

#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace edgewise::test {

using Bytes = std::vector<uint8_t>;

inline void put16(Bytes& b, uint64_t v) {
  for (int i = 0; i < 2; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
inline void put32(Bytes& b, uint64_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
inline void put64(Bytes& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
inline void put_le(Bytes& b, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b[at + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
}

struct NpyOptions {
  int version = 1;
  bool fortran_order = false;
  std::string dict{};  // when set, the header dict verbatim (descr/shape ignored)
};

inline std::string shape_literal(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// An NPY file: magic, version, header length, the dict padded with spaces to a
// multiple of 64 and ended by '\n' (as NumPy writes it), then `payload`.
inline Bytes make_npy(const std::string& descr, const std::vector<int64_t>& shape, const Bytes& payload,
                      const NpyOptions& options = {}) {
  std::string dict = options.dict.empty() ? "{'descr': '" + descr + "', 'fortran_order': " +
                                                (options.fortran_order ? "True" : "False") +
                                                ", 'shape': " + shape_literal(shape) + ", }"
                                          : options.dict;
  const size_t prefix = options.version == 1 ? 10 : 12;
  while ((prefix + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(options.version), 0};
  if (options.version == 1) put16(b, dict.size());
  else put32(b, dict.size());
  b.insert(b.end(), dict.begin(), dict.end());
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

template <class T>
Bytes bytes_of(const std::vector<T>& values) {
  Bytes b(values.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), values.data(), b.size());
  return b;
}

// `values` (C order unless fortran_order, then the caller passes column-major data).
template <class T>
Bytes npy_of(const std::string& descr, const std::vector<T>& values, const std::vector<int64_t>& shape,
             const NpyOptions& options = {}) {
  return make_npy(descr, shape, bytes_of(values), options);
}

inline Bytes deflate_raw(const Bytes& in, int level = 6) {
  z_stream s{};
  if (deflateInit2(&s, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  Bytes out(deflateBound(&s, static_cast<uLong>(in.size())));
  s.next_in = const_cast<Bytef*>(in.data());
  s.avail_in = static_cast<uInt>(in.size());
  s.next_out = out.data();
  s.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&s, Z_FINISH);
  out.resize(s.total_out);
  deflateEnd(&s);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate failed");
  return out;
}

struct ZipMember {
  std::string name;
  Bytes data;
  bool deflate = true;
};

struct ZipOptions {
  bool zip64_local = false;    // numpy's style: zip64 extra in local headers, real sizes in the 32-bit fields
  bool zip64_central = false;  // 0xFFFFFFFF markers in the central directory + zip64 extra
  bool zip64_end = false;      // zip64 end record + locator, markers in the classic end record
  std::string comment{};
};

// Offsets of each member's fields, for tests that corrupt them.
struct ZipLayout {
  std::vector<size_t> local_header;  // offset of each local header
  std::vector<size_t> data;          // offset of each member's (compressed) data
  std::vector<size_t> central;       // offset of each central directory record
  size_t end_record = 0;
};

inline Bytes make_zip(const std::vector<ZipMember>& members, const ZipOptions& o = {}, ZipLayout* layout = nullptr) {
  Bytes zip, central;
  ZipLayout lay;
  struct Info {
    uint32_t crc;
    uint64_t csize, usize, offset;
  };
  std::vector<Info> infos;
  for (const ZipMember& m : members) {
    const Bytes body = m.deflate ? deflate_raw(m.data) : m.data;
    const uint32_t crc = static_cast<uint32_t>(crc32_z(0, m.data.data(), m.data.size()));
    const uint64_t offset = zip.size();
    lay.local_header.push_back(offset);
    put32(zip, 0x04034b50);
    put16(zip, o.zip64_local ? 45 : 20);
    put16(zip, 0);                    // flags
    put16(zip, m.deflate ? 8 : 0);    // method
    put16(zip, 0);                    // time
    put16(zip, 0x21);                 // date: 1980-01-01
    put32(zip, crc);
    put32(zip, body.size());
    put32(zip, m.data.size());
    put16(zip, m.name.size());
    put16(zip, o.zip64_local ? 20 : 0);
    zip.insert(zip.end(), m.name.begin(), m.name.end());
    if (o.zip64_local) {
      put16(zip, 1);
      put16(zip, 16);
      put64(zip, m.data.size());
      put64(zip, body.size());
    }
    lay.data.push_back(zip.size());
    zip.insert(zip.end(), body.begin(), body.end());
    infos.push_back({crc, body.size(), m.data.size(), offset});
  }
  const uint64_t cd_offset = zip.size();
  for (size_t i = 0; i < members.size(); ++i) {
    const ZipMember& m = members[i];
    const Info& f = infos[i];
    lay.central.push_back(cd_offset + central.size());
    put32(central, 0x02014b50);
    put16(central, 20);
    put16(central, o.zip64_central ? 45 : 20);
    put16(central, 0);
    put16(central, m.deflate ? 8 : 0);
    put16(central, 0);
    put16(central, 0x21);
    put32(central, f.crc);
    put32(central, o.zip64_central ? 0xFFFFFFFFu : f.csize);
    put32(central, o.zip64_central ? 0xFFFFFFFFu : f.usize);
    put16(central, m.name.size());
    put16(central, o.zip64_central ? 28 : 0);
    put16(central, 0);  // comment
    put16(central, 0);  // disk
    put16(central, 0);  // internal attributes
    put32(central, 0);  // external attributes
    put32(central, o.zip64_central ? 0xFFFFFFFFu : f.offset);
    central.insert(central.end(), m.name.begin(), m.name.end());
    if (o.zip64_central) {
      put16(central, 1);
      put16(central, 24);
      put64(central, f.usize);
      put64(central, f.csize);
      put64(central, f.offset);
    }
  }
  zip.insert(zip.end(), central.begin(), central.end());
  const uint64_t n = members.size();
  if (o.zip64_end) {
    const uint64_t z64 = zip.size();
    put32(zip, 0x06064b50);
    put64(zip, 44);
    put16(zip, 45);
    put16(zip, 45);
    put32(zip, 0);
    put32(zip, 0);
    put64(zip, n);
    put64(zip, n);
    put64(zip, central.size());
    put64(zip, cd_offset);
    put32(zip, 0x07064b50);
    put32(zip, 0);
    put64(zip, z64);
    put32(zip, 1);
  }
  lay.end_record = zip.size();
  put32(zip, 0x06054b50);
  put16(zip, 0);
  put16(zip, 0);
  put16(zip, o.zip64_end ? 0xFFFF : n);
  put16(zip, o.zip64_end ? 0xFFFF : n);
  put32(zip, o.zip64_end ? 0xFFFFFFFFu : central.size());
  put32(zip, o.zip64_end ? 0xFFFFFFFFu : cd_offset);
  put16(zip, o.comment.size());
  zip.insert(zip.end(), o.comment.begin(), o.comment.end());
  if (layout) *layout = lay;
  return zip;
}

inline void write_file(const std::filesystem::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// A fresh directory under the system temp dir, removed with its contents.
class TempDir {
 public:
  TempDir() {
    for (int attempt = 0; attempt < 100; ++attempt) {
      path_ = std::filesystem::temp_directory_path() /
              ("edgewise_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
      if (std::filesystem::create_directory(path_)) return;
    }
    throw std::runtime_error("cannot create a temp directory");
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path file(const std::string& name) const { return path_ / name; }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::filesystem::path path_;
};

}  // namespace edgewise::test
