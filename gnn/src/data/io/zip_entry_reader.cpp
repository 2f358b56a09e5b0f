// ZipEntryReader: local-header checks, chunked reads from the file, raw inflate
// straight into the caller's memory, and the end-of-entry size and CRC checks.
#include "data/io/zip_entry_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <sstream>

#include "data/io/byte_order.hpp"

namespace edgewise::gnn {

namespace {
constexpr std::size_t kInputChunk = std::size_t{1} << 18;  // compressed bytes per file read
constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr std::size_t kLocalHeaderSize = 30;

std::string hex32(uint64_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

struct ZipEntryReader::Inflater {
  z_stream stream{};
  bool initialised = false;
  bool ended = false;  // inflate() returned Z_STREAM_END
  ~Inflater() {
    if (initialised) inflateEnd(&stream);
  }
};

ZipEntryReader::ZipEntryReader(const std::string& path, const ZipEntry& entry, uint64_t data_limit,
                               std::string where)
    : entry_(entry), where_(std::move(where)) {
  if (entry_.flags & 0x1) fail("entry is encrypted (not supported)");
  if (entry_.method != 0 && entry_.method != 8)
    fail("unsupported compression method " + std::to_string(entry_.method) + " (only 0 stored and 8 deflate)");
  if (entry_.method == 0 && entry_.compressed_size != entry_.uncompressed_size)
    fail("stored entry has compressed size " + std::to_string(entry_.compressed_size) + " but uncompressed size " +
         std::to_string(entry_.uncompressed_size));
  // Deflate cannot expand by more than ~1032:1; a larger recorded size is corruption
  // (and must not drive an allocation).
  if (entry_.method == 8 && entry_.uncompressed_size / 1032 > entry_.compressed_size + 64)
    fail("recorded uncompressed size " + std::to_string(entry_.uncompressed_size) +
         " is impossible for " + std::to_string(entry_.compressed_size) + " deflated bytes");

  file_.reset(std::fopen(path.c_str(), "rb"));
  if (!file_) fail(std::string("cannot open the file: ") + std::strerror(errno));
  std::byte header[kLocalHeaderSize];
  if (entry_.local_header_offset + kLocalHeaderSize > data_limit ||
      fseeko(file_.get(), static_cast<off_t>(entry_.local_header_offset), SEEK_SET) != 0 ||
      std::fread(header, 1, kLocalHeaderSize, file_.get()) != kLocalHeaderSize)
    fail("local header at offset " + std::to_string(entry_.local_header_offset) + " lies past the entries' area");
  if (read_le32(header) != kLocalHeaderSignature)
    fail("no local header signature at offset " + std::to_string(entry_.local_header_offset));
  const uint64_t name_len = read_le16(header + 26), extra_len = read_le16(header + 28);
  std::string name(name_len, '\0');
  if (name_len > 0 && std::fread(name.data(), 1, name_len, file_.get()) != name_len) fail("truncated local header");
  if (name != entry_.name) fail("local header names '" + name + "', the central directory '" + entry_.name + "'");
  const uint64_t data_start = entry_.local_header_offset + kLocalHeaderSize + name_len + extra_len;
  if (data_start > data_limit || entry_.compressed_size > data_limit - data_start)
    fail("entry data (" + std::to_string(entry_.compressed_size) + " bytes at offset " + std::to_string(data_start) +
         ") runs past the end of the entries' area at " + std::to_string(data_limit) + ": truncated or corrupt");
  if (fseeko(file_.get(), static_cast<off_t>(data_start), SEEK_SET) != 0) fail("cannot seek to the entry data");
  compressed_left_ = entry_.compressed_size;
  crc_ = crc32_z(0L, Z_NULL, 0);
  if (entry_.method == 8) {
    inflater_ = std::make_unique<Inflater>();
    // Negative window bits: raw deflate, as ZIP stores it (no zlib header or trailer).
    if (inflateInit2(&inflater_->stream, -MAX_WBITS) != Z_OK) fail("zlib inflateInit2 failed");
    inflater_->initialised = true;
    input_.resize(static_cast<std::size_t>(std::min<uint64_t>(kInputChunk, std::max<uint64_t>(compressed_left_, 1))));
  }
  if (entry_.uncompressed_size == 0) {
    verify_end();
    check_crc(crc_);
  }
}

ZipEntryReader::~ZipEntryReader() = default;

void ZipEntryReader::fail(const std::string& what) const { throw DataFileError(where_ + ": " + what); }

void ZipEntryReader::refill() {
  const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(input_.size(), compressed_left_));
  if (n == 0) return;
  if (std::fread(input_.data(), 1, n, file_.get()) != n) fail("unexpected end of file inside the entry data (truncated)");
  compressed_left_ -= n;
  inflater_->stream.next_in = input_.data();
  inflater_->stream.avail_in = static_cast<uInt>(n);
}

void ZipEntryReader::inflate_into(std::byte* dst, std::size_t n) {
  z_stream& s = inflater_->stream;
  while (n > 0) {
    if (inflater_->ended)
      fail("deflate stream ends after " + std::to_string(produced_) + " bytes, but the entry records " +
           std::to_string(entry_.uncompressed_size));
    const uInt chunk = static_cast<uInt>(std::min<std::size_t>(n, UINT_MAX));
    s.next_out = reinterpret_cast<Bytef*>(dst);
    s.avail_out = chunk;
    while (s.avail_out > 0 && !inflater_->ended) {
      if (s.avail_in == 0) {
        if (compressed_left_ == 0)
          fail("deflate data ends after " + std::to_string(produced_ + (chunk - s.avail_out)) +
               " of " + std::to_string(entry_.uncompressed_size) + " bytes (truncated or corrupt)");
        refill();
      }
      const int rc = inflate(&s, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        inflater_->ended = true;
      } else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
        fail(std::string("corrupt deflate data (zlib: ") + (s.msg ? s.msg : "data error") + ")");
      } else if (rc == Z_MEM_ERROR) {
        fail("zlib ran out of memory");
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        fail("zlib inflate failed with code " + std::to_string(rc));
      }
    }
    const std::size_t got = chunk - s.avail_out;
    produced_ += got;
    dst += got;
    n -= got;
  }
}

void ZipEntryReader::read(std::byte* dst, std::size_t n, bool track_crc) {
  if (n > remaining())
    fail("read of " + std::to_string(n) + " bytes past the entry's end (" + std::to_string(remaining()) + " left)");
  if (n == 0) return;
  if (inflater_) {
    inflate_into(dst, n);
  } else {
    if (std::fread(dst, 1, n, file_.get()) != n) fail("unexpected end of file inside the entry data (truncated)");
    compressed_left_ -= n;
    produced_ += n;
  }
  if (track_crc) crc_ = crc32_z(crc_, reinterpret_cast<const Bytef*>(dst), n);
  if (remaining() == 0) verify_end();
}

void ZipEntryReader::verify_end() {
  if (inflater_) {
    // The deflate stream must end exactly here: drive it to its end-of-block
    // marker without accepting more output.
    unsigned char extra;
    z_stream& s = inflater_->stream;
    while (!inflater_->ended) {
      if (s.avail_in == 0) {
        if (compressed_left_ == 0)
          fail("deflate data is truncated (no end-of-stream marker after " + std::to_string(produced_) + " bytes)");
        refill();
      }
      s.next_out = &extra;
      s.avail_out = 1;
      const int rc = inflate(&s, Z_NO_FLUSH);
      if (rc == Z_STREAM_END && s.avail_out == 1) {
        inflater_->ended = true;
      } else if (s.avail_out == 0) {
        fail("entry inflates to more than its recorded size " + std::to_string(entry_.uncompressed_size));
      } else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
        fail(std::string("corrupt deflate data (zlib: ") + (s.msg ? s.msg : "data error") + ")");
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        fail("zlib inflate failed with code " + std::to_string(rc));
      }
    }
  }
}

void ZipEntryReader::check_crc(unsigned long crc) const {
  if (crc != entry_.crc32)
    fail("CRC-32 mismatch (the archive records " + hex32(entry_.crc32) + ", the data gives " + hex32(crc) +
         "): the file is corrupt");
}

}  // namespace edgewise::gnn
