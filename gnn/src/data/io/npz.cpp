// NpzArchive: the ZIP central directory (zip64 aware), NPY headers of entries
// (streams opened through ZipEntryReader), whole-array reads.
#include "edgewise/gnn/data/npz.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>

#include "data/io/byte_order.hpp"
#include "data/io/npy_shape.hpp"
#include "data/io/npy_stream_impl.hpp"
#include "data/io/zip_entry_reader.hpp"

namespace edgewise::gnn {

namespace {

constexpr uint32_t kEndSignature = 0x06054b50;           // end of central directory
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;  // zip64 end-of-central-directory locator
constexpr uint32_t kZip64EndSignature = 0x06064b50;      // zip64 end of central directory
constexpr uint32_t kCentralSignature = 0x02014b50;       // central directory file header
constexpr std::size_t kEndSize = 22, kZip64LocatorSize = 20, kZip64EndSize = 56, kCentralSize = 46;
constexpr uint64_t kMaxComment = 0xFFFF;
constexpr std::size_t kPieceBytes = std::size_t{4} << 20;  // read(): CRC pipelined per 4 MB
constexpr uint64_t kMaxNpyDictBytes = uint64_t{1} << 20;    // NumPy's headers are < 100 bytes

struct File {
  std::FILE* f = nullptr;
  ~File() {
    if (f) std::fclose(f);
  }
};

class ArchiveParser {
 public:
  explicit ArchiveParser(const std::string& path) : path_(path) {}

  [[noreturn]] void fail(const std::string& what) const { throw DataFileError("npz '" + path_ + "': " + what); }

  std::vector<std::byte> read_at(uint64_t offset, uint64_t size) {
    if (offset > size_ || size > size_ - offset) fail("read past the end of the file (truncated)");
    std::vector<std::byte> buf(static_cast<std::size_t>(size));
    if (fseeko(file_.f, static_cast<off_t>(offset), SEEK_SET) != 0 ||
        (size > 0 && std::fread(buf.data(), 1, buf.size(), file_.f) != buf.size()))
      fail("cannot read " + std::to_string(size) + " bytes at offset " + std::to_string(offset));
    return buf;
  }

  void open() {
    std::error_code ec;
    if (std::filesystem::is_directory(path_, ec)) fail("is a directory, not a file");
    file_.f = std::fopen(path_.c_str(), "rb");
    if (!file_.f) fail(std::string("cannot open: ") + std::strerror(errno));
    if (fseeko(file_.f, 0, SEEK_END) != 0) fail("cannot seek");
    size_ = static_cast<uint64_t>(ftello(file_.f));
  }

  // Finds the end-of-central-directory record, scanning back over a possible comment.
  uint64_t find_end_record() {
    if (size_ >= 6) {
      auto head = read_at(0, 6);
      if (std::memcmp(head.data(), "\x93NUMPY", 6) == 0)
        fail("is a single .npy array, not an .npz archive");
    }
    const uint64_t tail_len = std::min<uint64_t>(size_, kEndSize + kMaxComment);
    auto tail = read_at(size_ - tail_len, tail_len);
    for (uint64_t i = tail_len >= kEndSize ? tail_len - kEndSize + 1 : 0; i-- > 0;) {
      if (read_le32(tail.data() + i) != kEndSignature) continue;
      const uint64_t comment = read_le16(tail.data() + i + 20);
      if (i + kEndSize + comment <= tail_len) return size_ - tail_len + i;
    }
    bool local_first = false;
    if (size_ >= 4) local_first = read_le32(read_at(0, 4).data()) == 0x04034b50;
    if (local_first)
      fail("truncated or corrupt ZIP archive: it starts with a ZIP entry but has no end-of-central-directory record");
    fail("not a ZIP archive (no end-of-central-directory record in " + std::to_string(size_) + " bytes)");
  }

  uint64_t size() const { return size_; }

 private:
  std::string path_;
  File file_;
  uint64_t size_ = 0;
};

// Rewrites a Fortran-order (column-major) payload in C order.
std::vector<std::byte> to_c_order(const std::vector<std::byte>& fortran, const std::vector<int64_t>& shape,
                                  int itemsize) {
  std::vector<std::byte> out(fortran.size());
  const int64_t ndim = static_cast<int64_t>(shape.size());
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  if (total == 0) return out;
  // Walk the output in C order with an odometer, tracking the Fortran offset
  // (stride of dimension k = product of the dimensions before k).
  std::vector<int64_t> stride(static_cast<size_t>(ndim)), idx(static_cast<size_t>(ndim), 0);
  int64_t s = 1;
  for (int64_t k = 0; k < ndim; ++k) {
    stride[static_cast<size_t>(k)] = s;
    s *= shape[static_cast<size_t>(k)];
  }
  int64_t src = 0;
  for (int64_t i = 0; i < total; ++i) {
    std::memcpy(out.data() + i * itemsize, fortran.data() + src * itemsize, static_cast<size_t>(itemsize));
    for (int64_t k = ndim - 1; k >= 0; --k) {
      const auto uk = static_cast<size_t>(k);
      src += stride[uk];
      if (++idx[uk] < shape[uk]) break;
      src -= stride[uk] * shape[uk];
      idx[uk] = 0;
    }
  }
  return out;
}


}  // namespace

// ---- NpzArchive ---------------------------------------------------------------

NpzArchive NpzArchive::open(const std::string& path, const NpzReadOptions& options) {
  const uint64_t max_entry_bytes = npz_max_entry_bytes(options);
  ArchiveParser p(path);
  p.open();
  const uint64_t end = p.find_end_record();
  const auto rec = p.read_at(end, kEndSize);
  uint64_t disk = read_le16(rec.data() + 4), cd_disk = read_le16(rec.data() + 6);
  uint64_t count_disk = read_le16(rec.data() + 8), count = read_le16(rec.data() + 10);
  uint64_t cd_size = read_le32(rec.data() + 12), cd_offset = read_le32(rec.data() + 16);
  uint64_t directory_end = end;  // the central directory must end before this offset
  if (end >= kZip64LocatorSize) {
    const auto loc = p.read_at(end - kZip64LocatorSize, kZip64LocatorSize);
    if (read_le32(loc.data()) == kZip64LocatorSignature) {
      const uint64_t z64 = read_le64(loc.data() + 8);
      if (z64 > end - kZip64LocatorSize || end - kZip64LocatorSize - z64 < kZip64EndSize)
        p.fail("zip64 end record offset " + std::to_string(z64) + " is out of range (truncated or corrupt)");
      const auto r = p.read_at(z64, kZip64EndSize);
      if (read_le32(r.data()) != kZip64EndSignature) p.fail("no zip64 end record at offset " + std::to_string(z64));
      disk = read_le32(r.data() + 16);
      cd_disk = read_le32(r.data() + 20);
      count_disk = read_le64(r.data() + 24);
      count = read_le64(r.data() + 32);
      cd_size = read_le64(r.data() + 40);
      cd_offset = read_le64(r.data() + 48);
      directory_end = z64;
    }
  }
  if (disk != 0 || cd_disk != 0 || count_disk != count) p.fail("multi-disk (split) ZIP archives are not supported");
  if (cd_offset > directory_end || cd_size > directory_end - cd_offset)
    p.fail("central directory (" + std::to_string(cd_size) + " bytes at offset " + std::to_string(cd_offset) +
           ") runs past its end record at " + std::to_string(directory_end) + ": truncated or corrupt");
  if (count > cd_size / kCentralSize)
    p.fail("central directory of " + std::to_string(cd_size) + " bytes cannot hold " + std::to_string(count) +
           " entries (corrupt)");

  NpzArchive archive;
  archive.path_ = path;
  archive.file_size_ = p.size();
  archive.central_directory_offset_ = cd_offset;
  archive.max_entry_bytes_ = max_entry_bytes;
  const auto cd = p.read_at(cd_offset, cd_size);
  uint64_t pos = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const std::string where = "central directory entry " + std::to_string(i);
    if (cd_size - pos < kCentralSize) p.fail(where + " is truncated");
    const std::byte* h = cd.data() + pos;
    if (read_le32(h) != kCentralSignature) p.fail(where + ": bad signature (corrupt)");
    ZipEntry e;
    e.flags = read_le16(h + 8);
    e.method = read_le16(h + 10);
    e.crc32 = read_le32(h + 16);
    e.compressed_size = read_le32(h + 20);
    e.uncompressed_size = read_le32(h + 24);
    const uint64_t name_len = read_le16(h + 28), extra_len = read_le16(h + 30), comment_len = read_le16(h + 32);
    uint64_t entry_disk = read_le16(h + 34);
    e.local_header_offset = read_le32(h + 42);
    if (cd_size - pos - kCentralSize < name_len + extra_len + comment_len) p.fail(where + " is truncated");
    e.name.assign(reinterpret_cast<const char*>(h + kCentralSize), name_len);
    // zip64 extra field (id 1): 64-bit values for exactly those fields whose
    // 32-bit (16-bit for the disk) slot holds the all-ones marker, in this order.
    const bool need_u = e.uncompressed_size == 0xFFFFFFFFu, need_c = e.compressed_size == 0xFFFFFFFFu,
               need_o = e.local_header_offset == 0xFFFFFFFFu, need_d = entry_disk == 0xFFFFu;
    if (need_u || need_c || need_o || need_d) {
      const std::byte* x = h + kCentralSize + name_len;
      uint64_t xp = 0;
      bool found = false;
      while (extra_len - xp >= 4) {
        const uint64_t id = read_le16(x + xp), len = read_le16(x + xp + 2);
        if (len > extra_len - xp - 4) break;
        if (id == 1) {
          const uint64_t needed = 8 * (need_u + need_c + need_o) + 4 * need_d;
          if (len < needed) p.fail(where + " ('" + e.name + "'): zip64 extra field too short");
          const std::byte* f = x + xp + 4;
          if (need_u) e.uncompressed_size = read_le64(f), f += 8;
          if (need_c) e.compressed_size = read_le64(f), f += 8;
          if (need_o) e.local_header_offset = read_le64(f), f += 8;
          if (need_d) entry_disk = read_le32(f);
          found = true;
          break;
        }
        xp += 4 + len;
      }
      if (!found) p.fail(where + " ('" + e.name + "'): sizes need a zip64 extra field, and there is none");
    }
    if (entry_disk != 0) p.fail(where + " ('" + e.name + "'): multi-disk archives are not supported");
    if (e.local_header_offset > cd_offset)
      p.fail(where + " ('" + e.name + "'): local header offset " + std::to_string(e.local_header_offset) +
             " lies past the central directory (corrupt)");
    archive.entries_.push_back(std::move(e));
    pos += kCentralSize + name_len + extra_len + comment_len;
  }
  return archive;
}

std::vector<std::string> NpzArchive::keys() const {
  std::vector<std::string> out;
  for (const ZipEntry& e : entries_) {
    const bool npy = e.name.size() >= 4 && e.name.compare(e.name.size() - 4, 4, ".npy") == 0;
    out.push_back(npy ? e.name.substr(0, e.name.size() - 4) : e.name);
  }
  return out;
}

bool NpzArchive::contains(std::string_view key) const {
  for (const ZipEntry& e : entries_) {
    if (e.name == key || (e.name.size() == key.size() + 4 && e.name.starts_with(key) && e.name.ends_with(".npy")))
      return true;
  }
  return false;
}

const ZipEntry& NpzArchive::entry(std::string_view key) const {
  for (const ZipEntry& e : entries_) {
    if (e.name == key || (e.name.size() == key.size() + 4 && e.name.starts_with(key) && e.name.ends_with(".npy")))
      return e;
  }
  std::string names;
  for (const std::string& k : keys()) names += (names.empty() ? "" : ", ") + k;
  throw DataFileError("npz '" + path_ + "': no array named '" + std::string(key) + "' (it holds: " +
                      (names.empty() ? "nothing" : names) + ")");
}

NpyStream NpzArchive::stream(std::string_view key) const {
  const ZipEntry& e = entry(key);
  const std::string where = "npz '" + path_ + "': entry '" + e.name + "'";
  // Before anything is allocated for the entry (the ZIP reader checks the stored /
  // deflate size relations next).
  if (e.uncompressed_size > max_entry_bytes_)
    throw DataFileError(where + ": declares " + std::to_string(e.uncompressed_size) +
                        " uncompressed bytes, over the limit of " + std::to_string(max_entry_bytes_) +
                        " (NpzReadOptions::max_entry_bytes or EDGEWISE_NPZ_MAX_BYTES raise it)");
  auto impl = std::make_unique<NpyStream::Impl>(path_, e, central_directory_offset_, where);
  ZipEntryReader& r = impl->reader;
  if (r.remaining() < 10)
    throw DataFileError(where + ": " + std::to_string(r.remaining()) + " bytes, too short for an NPY header");
  std::vector<std::byte> head(12);
  r.read(head.data(), 10);
  const int version = static_cast<int>(head[6]);
  if (std::memcmp(head.data(), "\x93NUMPY", 6) != 0 || version < 1 || version > 3)
    parse_npy_header(head.data(), 10, where);  // throws the magic / version error
  std::size_t prefix = 10;
  if (version > 1) {
    if (r.remaining() < 2) throw DataFileError(where + ": truncated NPY header");
    r.read(head.data() + 10, 2);
    prefix = 12;
  }
  const uint64_t dict_len = version == 1 ? read_le16(head.data() + 8) : read_le32(head.data() + 8);
  if (dict_len > kMaxNpyDictBytes)
    throw DataFileError(where + ": bad NPY header: header length " + std::to_string(dict_len) + " exceeds " +
                        std::to_string(kMaxNpyDictBytes) + " bytes");
  if (dict_len > r.remaining())
    throw DataFileError(where + ": bad NPY header: header length " + std::to_string(dict_len) + " exceeds the " +
                        std::to_string(r.remaining()) + " bytes left in the entry");
  head.resize(prefix + dict_len);
  r.read(head.data() + prefix, dict_len);
  impl->header = parse_npy_header(head.data(), head.size(), where);
  const NpyHeader& h = impl->header;
  if (r.remaining() == 0) r.check_crc(r.crc());  // an entry that is all header
  const uint64_t payload = static_cast<uint64_t>(h.payload_bytes());
  if (payload != r.remaining()) {
    std::ostringstream msg;
    msg << where << ": shape " << npy_shape_str(h.shape) << " x itemsize " << h.dtype.itemsize << " = " << payload
        << " bytes, but the entry holds " << r.remaining() << " payload bytes after its header";
    throw DataFileError(msg.str());
  }
  return NpyStream(std::move(impl));
}

NpyHeader NpzArchive::header(std::string_view key) const { return stream(key).header(); }

NpyArray NpzArchive::read(std::string_view key) const {
  NpyStream s = stream(key);
  const NpyHeader& h = s.header();
  NpyArray a;
  a.dtype = h.dtype;
  a.shape = h.shape;
  a.source = s.impl_->reader.where();
  a.data.resize(static_cast<std::size_t>(s.remaining()));
  s.read_pipelined(a.data.data(), kPieceBytes);
  if (h.fortran_order && h.shape.size() > 1) a.data = to_c_order(a.data, a.shape, a.dtype.itemsize);
  return a;
}

}  // namespace edgewise::gnn
