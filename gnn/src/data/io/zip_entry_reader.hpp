// Pull reader of one ZIP entry's uncompressed bytes (stored: copied; deflate:
// zlib raw inflate), with size and CRC-32 verification at the entry's end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "edgewise/gnn/data/npz.hpp"

namespace edgewise::gnn {

class ZipEntryReader {
 public:
  // Opens `path` at `entry`'s local header and checks it (signature, name, data
  // inside [0, data_limit)). `where` prefixes every error message.
  ZipEntryReader(const std::string& path, const ZipEntry& entry, uint64_t data_limit, std::string where);
  ~ZipEntryReader();
  ZipEntryReader(const ZipEntryReader&) = delete;
  ZipEntryReader& operator=(const ZipEntryReader&) = delete;

  const std::string& where() const { return where_; }
  uint64_t remaining() const { return entry_.uncompressed_size - produced_; }
  // Reads exactly n uncompressed bytes (n <= remaining()) into dst; with
  // `track_crc` folds them into crc(). When the last byte has been produced,
  // checks that the deflate stream ends there.
  void read(std::byte* dst, std::size_t n, bool track_crc = true);
  // CRC-32 of the bytes read with track_crc.
  unsigned long crc() const { return crc_; }
  // Throws unless `crc` (of the whole entry) equals the recorded CRC-32.
  void check_crc(unsigned long crc) const;

 private:
  [[noreturn]] void fail(const std::string& what) const;
  void refill();
  void inflate_into(std::byte* dst, std::size_t n);
  void verify_end();

  ZipEntry entry_;
  std::string where_;
  // Closed by its own destructor: the constructor's checks throw after opening it,
  // and a throwing constructor runs no destructor of the class itself.
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, FileCloser> file_;
  struct Inflater;
  std::unique_ptr<Inflater> inflater_;  // deflate entries only
  std::vector<unsigned char> input_;    // compressed bytes read ahead
  uint64_t compressed_left_ = 0;        // compressed bytes not yet read from the file
  uint64_t produced_ = 0;
  unsigned long crc_ = 0;
};

}  // namespace edgewise::gnn
