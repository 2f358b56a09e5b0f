// write_npz: NPY v1/v2 headers, a stored ZIP (zip64 when needed), written to a
// temporary file that is fsync'ed and renamed over the target.
#include "edgewise/gnn/data/npz_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <stdexcept>

#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

static_assert(std::endian::native == std::endian::little, "write_npz writes host memory as little-endian data");

namespace {

template <class T>
NpyDtype dtype_of() {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return {'f', static_cast<int>(sizeof(T))};
  } else if constexpr (std::is_signed_v<T>) {
    return {'i', static_cast<int>(sizeof(T))};
  } else {
    return {'u', static_cast<int>(sizeof(T))};
  }
}

using Bytes = std::vector<std::byte>;

void put(Bytes& b, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b.push_back(static_cast<std::byte>(v >> (8 * i)));
}

std::string shape_literal(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// As NumPy writes it: the dict padded with spaces so that the payload starts at a
// multiple of 64 bytes, ended by '\n'; version 2 when the dict needs it.
Bytes npy_header(const NpyArray& a) {
  std::string dict = "{'descr': '" + a.dtype.str() + "', 'fortran_order': False, 'shape': " + shape_literal(a.shape) +
                     ", }";
  const bool v2 = dict.size() + 1 + 10 + 63 > 0xFFFF;
  const size_t prefix = v2 ? 12 : 10;
  while ((prefix + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  Bytes b;
  const char magic[] = "\x93NUMPY";
  for (int i = 0; i < 6; ++i) b.push_back(static_cast<std::byte>(magic[i]));
  b.push_back(static_cast<std::byte>(v2 ? 2 : 1));
  b.push_back(std::byte{0});
  put(b, dict.size(), v2 ? 4 : 2);
  for (char c : dict) b.push_back(static_cast<std::byte>(c));
  return b;
}

void check_entries(const NpzEntries& entries) {
  std::set<std::string> seen;
  for (const auto& [key, a] : entries) {
    EW_REQUIRE(!key.empty() && key.find('/') == std::string::npos && key.find('\0') == std::string::npos,
               "write_npz: key '", key, "' must be non-empty and contain no '/' or NUL");
    EW_REQUIRE(seen.insert(key).second, "write_npz: duplicate key '", key, "'");
    const NpyDtype& d = a.dtype;
    const bool known = (d.kind == 'f' && (d.itemsize == 4 || d.itemsize == 8)) ||
                       ((d.kind == 'i' || d.kind == 'u') &&
                        (d.itemsize == 1 || d.itemsize == 2 || d.itemsize == 4 || d.itemsize == 8)) ||
                       (d.kind == 'b' && d.itemsize == 1);
    EW_REQUIRE(known, "write_npz: key '", key, "' has unsupported dtype kind '", d.kind, "' size ", d.itemsize);
    int64_t n = 1;
    for (int64_t dim : a.shape) {
      EW_REQUIRE(dim >= 0, "write_npz: key '", key, "' has a negative dimension ", dim);
      EW_REQUIRE(!__builtin_mul_overflow(n, dim, &n), "write_npz: key '", key, "' has a shape too large to index");
    }
    EW_REQUIRE(static_cast<uint64_t>(n) * static_cast<uint64_t>(d.itemsize) == a.data.size(), "write_npz: key '",
               key, "' has ", a.data.size(), " data bytes for shape ", shape_literal(a.shape), " of ", d.str());
  }
}

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  const std::string reason = err ? what + ": " + std::strerror(err) : what;
  throw std::runtime_error("write_npz: cannot write '" + path + "': " + reason);
}

// A file descriptor that writes everything or reports the failure.
class OutFile {
 public:
  OutFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  void write(const void* data, size_t bytes) {
    const auto* p = static_cast<const char*>(data);
    while (bytes > 0) {
      const ssize_t n = ::write(fd_, p, std::min<size_t>(bytes, size_t{1} << 30));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(path_, "write failed", n < 0 ? errno : ENOSPC);
      p += n;
      bytes -= static_cast<size_t>(n);
      offset_ += static_cast<uint64_t>(n);
    }
  }
  void write(const Bytes& b) { write(b.data(), b.size()); }
  uint64_t offset() const { return offset_; }

 private:
  std::string path_;
  int fd_;
  uint64_t offset_ = 0;
};

constexpr uint32_t kMax32 = 0xFFFFFFFFu;
constexpr uint16_t kDosDate = 0x21;  // 1980-01-01: fixed, so equal contents give equal files

struct Member {
  std::string name;
  Bytes header;  // NPY header
  const NpyArray* array;
  uint32_t crc;
  uint64_t size;  // header + payload (stored: compressed == uncompressed)
  uint64_t offset = 0;
  bool zip64 = false;
};

void write_archive(OutFile& out, const NpzEntries& entries, bool force_zip64) {
  std::vector<Member> members;
  for (const auto& [key, a] : entries) {
    Member m{key + ".npy", npy_header(a), &a, 0, 0};
    // (zlib returns its initial value for a null buffer, so an empty payload is skipped.)
    uLong crc = crc32_z(0, reinterpret_cast<const Bytef*>(m.header.data()), m.header.size());
    if (!a.data.empty()) crc = crc32_z(crc, reinterpret_cast<const Bytef*>(a.data.data()), a.data.size());
    m.crc = static_cast<uint32_t>(crc);
    m.size = m.header.size() + a.data.size();
    members.push_back(std::move(m));
  }
  for (Member& m : members) {
    m.offset = out.offset();
    m.zip64 = force_zip64 || m.size >= kMax32 || m.offset >= kMax32;
    Bytes h;
    put(h, 0x04034b50, 4);
    put(h, m.zip64 ? 45 : 20, 2);  // version needed
    put(h, 0, 2);                  // flags
    put(h, 0, 2);                  // method: stored
    put(h, 0, 2);                  // time
    put(h, kDosDate, 2);
    put(h, m.crc, 4);
    put(h, m.zip64 ? kMax32 : m.size, 4);
    put(h, m.zip64 ? kMax32 : m.size, 4);
    put(h, m.name.size(), 2);
    put(h, m.zip64 ? 20 : 0, 2);
    for (char c : m.name) h.push_back(static_cast<std::byte>(c));
    if (m.zip64) {
      put(h, 1, 2);
      put(h, 16, 2);
      put(h, m.size, 8);
      put(h, m.size, 8);
    }
    out.write(h);
    out.write(m.header);
    out.write(m.array->data.data(), m.array->data.size());
  }
  const uint64_t cd_offset = out.offset();
  Bytes cd;
  for (const Member& m : members) {
    const bool big_size = m.zip64;
    const bool big_offset = force_zip64 || m.offset >= kMax32;
    put(cd, 0x02014b50, 4);
    put(cd, 20, 2);                  // made by
    put(cd, m.zip64 || big_offset ? 45 : 20, 2);
    put(cd, 0, 2);
    put(cd, 0, 2);
    put(cd, 0, 2);
    put(cd, kDosDate, 2);
    put(cd, m.crc, 4);
    put(cd, big_size ? kMax32 : m.size, 4);
    put(cd, big_size ? kMax32 : m.size, 4);
    put(cd, m.name.size(), 2);
    put(cd, (big_size ? 16 : 0) + (big_offset ? 8 : 0) + (big_size || big_offset ? 4 : 0), 2);
    put(cd, 0, 2);  // comment
    put(cd, 0, 2);  // disk
    put(cd, 0, 2);  // internal attributes
    put(cd, 0, 4);  // external attributes
    put(cd, big_offset ? kMax32 : m.offset, 4);
    for (char c : m.name) cd.push_back(static_cast<std::byte>(c));
    if (big_size || big_offset) {
      put(cd, 1, 2);
      put(cd, (big_size ? 16 : 0) + (big_offset ? 8 : 0), 2);
      if (big_size) {
        put(cd, m.size, 8);
        put(cd, m.size, 8);
      }
      if (big_offset) put(cd, m.offset, 8);
    }
  }
  out.write(cd);
  const uint64_t n = members.size();
  const bool zip64_end = force_zip64 || n >= 0xFFFF || cd.size() >= kMax32 || cd_offset >= kMax32;
  Bytes end;
  if (zip64_end) {
    const uint64_t z64 = out.offset();
    put(end, 0x06064b50, 4);
    put(end, 44, 8);
    put(end, 45, 2);
    put(end, 45, 2);
    put(end, 0, 4);
    put(end, 0, 4);
    put(end, n, 8);
    put(end, n, 8);
    put(end, cd.size(), 8);
    put(end, cd_offset, 8);
    put(end, 0x07064b50, 4);
    put(end, 0, 4);
    put(end, z64, 8);
    put(end, 1, 4);
  }
  put(end, 0x06054b50, 4);
  put(end, 0, 2);
  put(end, 0, 2);
  put(end, zip64_end ? 0xFFFF : n, 2);
  put(end, zip64_end ? 0xFFFF : n, 2);
  put(end, zip64_end ? kMax32 : cd.size(), 4);
  put(end, zip64_end ? kMax32 : cd_offset, 4);
  put(end, 0, 2);
  out.write(end);
}

// A new file next to `target`, opened exclusively (never an existing one).
int create_temp(const std::filesystem::path& target, std::string& temp_path) {
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::filesystem::path p = target;
    p.replace_filename("." + target.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                       std::to_string(counter++));
    temp_path = p.string();
    const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// Makes the rename itself durable; best effort (some file systems refuse).
void sync_directory(const std::filesystem::path& target) {
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

template <class T>
NpyArray npy_array(std::span<const T> values, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t dim : shape) {
    EW_REQUIRE(dim >= 0, "npy_array: negative dimension ", dim);
    EW_REQUIRE(!__builtin_mul_overflow(n, dim, &n), "npy_array: shape ", shape_literal(shape), " is too large");
  }
  EW_REQUIRE(static_cast<size_t>(n) == values.size(), "npy_array: shape ", shape_literal(shape), " holds ", n,
             " elements, not ", values.size());
  NpyArray a;
  a.dtype = dtype_of<T>();
  a.shape = std::move(shape);
  a.data.resize(values.size_bytes());
  if (!values.empty()) std::memcpy(a.data.data(), values.data(), values.size_bytes());
  return a;
}

template <class T>
NpyDtype npy_dtype() {
  return dtype_of<T>();
}

template NpyDtype npy_dtype<uint8_t>();
template NpyDtype npy_dtype<int32_t>();
template NpyDtype npy_dtype<int64_t>();
template NpyDtype npy_dtype<uint64_t>();
template NpyDtype npy_dtype<float>();
template NpyDtype npy_dtype<double>();

template NpyArray npy_array<uint8_t>(std::span<const uint8_t>, std::vector<int64_t>);
template NpyArray npy_array<int32_t>(std::span<const int32_t>, std::vector<int64_t>);
template NpyArray npy_array<int64_t>(std::span<const int64_t>, std::vector<int64_t>);
template NpyArray npy_array<uint64_t>(std::span<const uint64_t>, std::vector<int64_t>);
template NpyArray npy_array<float>(std::span<const float>, std::vector<int64_t>);
template NpyArray npy_array<double>(std::span<const double>, std::vector<int64_t>);

void write_npz(const std::string& path, const NpzEntries& entries, const NpzWriteOptions& options) {
  check_entries(entries);
  const std::filesystem::path target(path);
  EW_REQUIRE(!target.filename().empty(), "write_npz: '", path, "' names no file");
  std::string temp;
  const int fd = create_temp(target, temp);
  if (fd < 0) fail(path, "cannot create a temporary file in its directory", errno);
  bool closed = false;
  try {
    OutFile out(path, fd);
    write_archive(out, entries, options.force_zip64);
    if (::fsync(fd) != 0) fail(path, "fsync failed", errno);
    closed = true;
    if (::close(fd) != 0) fail(path, "close failed", errno);
  } catch (...) {
    if (!closed) ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(path, "cannot rename the temporary file '" + temp + "' over it", err);
  }
  sync_directory(target);
}

}  // namespace edgewise::gnn
