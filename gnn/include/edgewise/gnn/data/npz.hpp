// Reading NumPy .npz archives (ZIP of .npy entries, stored or deflated) and .npy arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace edgewise::gnn {

// Every problem with a data file: it cannot be opened or read, it is not a ZIP
// archive, it is truncated, an entry fails its CRC-32, it uses something this
// reader does not support (compression method, encryption, dtype, big-endian),
// an NPY header is malformed or disagrees with its payload, a key is missing, a
// value does not fit the requested type, or (dataset loading) the arrays break
// the dataset layout. The message names the file, the entry and what is wrong.
//
// It derives from std::invalid_argument, the house error for bad input, so it is
// a ValueError in Python (there: edgewise.DataFileError) and callers that catch
// std::invalid_argument see it too.
class DataFileError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// An element type of an NPY array: kind 'b' (bool), 'i' (signed), 'u' (unsigned)
// or 'f' (IEEE float), and its size in bytes. Only little-endian (or one-byte)
// data of these kinds is supported: b1, i1/i2/i4/i8, u1/u2/u4/u8, f4/f8.
struct NpyDtype {
  char kind = 'f';
  int itemsize = 4;

  // NumPy's spelling: "<f4", "<i8", "|u1", "|b1".
  std::string str() const;
  friend bool operator==(const NpyDtype&, const NpyDtype&) = default;
};

// What an NPY header says about its array.
struct NpyHeader {
  NpyDtype dtype;
  std::vector<int64_t> shape;  // empty for a 0-d (scalar) array
  bool fortran_order = false;  // column-major payload (read() transposes it to C order)
  int version_major = 1;       // 1, 2 or 3
  int64_t header_bytes = 0;    // bytes before the payload (magic + version + length + dict)

  // Number of elements: the product of shape (1 for a scalar).
  int64_t size() const;
  int64_t payload_bytes() const { return size() * dtype.itemsize; }
};

// A whole array in host memory, always in C (row-major) order.
struct NpyArray {
  NpyDtype dtype;
  std::vector<int64_t> shape;
  std::vector<std::byte> data;  // size() * dtype.itemsize bytes, little-endian
  std::string source;           // "<file>: <entry>", for error messages

  int64_t size() const;
  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }

  // The elements converted to T, in C order. T is one of uint8_t, int32_t,
  // int64_t, float, double. Conversions:
  //   bool / integer -> integer: exact; a value outside T's range throws
  //                              DataFileError naming the first bad element;
  //   bool / integer -> float:   rounded to nearest (int64 -> float may round);
  //   float -> float:            float64 -> float32 rounds to nearest (overflow -> inf);
  //   float -> integer:          only values that are integral and in range
  //                              (NaN, inf and fractions throw DataFileError).
  template <class T>
  std::vector<T> as() const;

  // The single element of a one-element array (shape (), (1,), (1, 1)...) as T,
  // with the conversions of as<T>().
  template <class T>
  T scalar() const;
};

// Parses an NPY header at the start of `bytes` (at least the whole header must
// be present). Throws DataFileError naming `source` on a bad magic string, an
// unknown version, a malformed dict, a structured / big-endian / unsupported
// dtype or a negative dimension.
NpyHeader parse_npy_header(const std::byte* bytes, std::size_t size, const std::string& source);

// One member of a ZIP archive, as its central directory records it (zip64
// extra fields applied).
struct ZipEntry {
  std::string name;             // e.g. "node_feat.npy"
  uint16_t method = 0;          // 0 stored, 8 deflate (others are refused on read)
  uint16_t flags = 0;           // general-purpose bit flags (bit 0: encrypted)
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
};

class NpzArchive;

// Resource limits of the reader: archive fields are untrusted, and a few bytes of
// ZIP can declare terabytes. Every entry is checked BEFORE anything is allocated
// for it: its declared uncompressed size must not exceed max_entry_bytes; a stored
// entry's uncompressed size must equal its compressed size; a deflated one cannot
// declare more than deflate can produce (about 1032 bytes per compressed byte);
// the NPY header's shape x itemsize must equal the entry's payload; an NPY header
// dict is at most 1 MiB. A refusal is a DataFileError naming the file and entry.
struct NpzReadOptions {
  // Largest uncompressed entry, in bytes. 0: $EDGEWISE_NPZ_MAX_BYTES when set (a
  // byte count, optionally with a K, M, G or T suffix: powers of 1024), else 64 GiB.
  uint64_t max_entry_bytes = 0;
};
// The entry limit open() uses for `options`: options.max_entry_bytes when nonzero,
// else the environment's, else 64 GiB. Throws std::invalid_argument naming
// EDGEWISE_NPZ_MAX_BYTES when that is set but is not a positive byte count.
uint64_t npz_max_entry_bytes(const NpzReadOptions& options = {});

// Sequential reader of one entry's NPY payload, straight into caller memory (no
// copy of the whole array is made). The CRC-32 and the exact payload size are
// verified when the last byte has been read; finish() checks that it has been.
class NpyStream {
 public:
  NpyStream(NpyStream&&) noexcept;
  NpyStream& operator=(NpyStream&&) noexcept;
  ~NpyStream();

  const NpyHeader& header() const;
  // Payload bytes not yet read.
  uint64_t remaining() const;
  // Reads exactly `bytes` payload bytes into `dst` (bytes <= remaining()).
  // Throws DataFileError on corrupt or truncated data, or a CRC mismatch once the
  // entry's end is reached.
  void read(void* dst, std::size_t bytes);
  // Reads all remaining payload in pieces of `piece_bytes` (the last may be
  // shorter) and pipelines it: while piece i+1 is being inflated, a second
  // thread folds piece i into the CRC-32 and hands it to `consume` (pieces in
  // order, one at a time; `consume` may be empty). With `dst`, the payload lands
  // in dst[0, remaining()); without, each piece lives in a reused buffer that is
  // valid only during its consume call. Pieces start at multiples of piece_bytes,
  // so a piece size that is a multiple of a row's bytes gives whole rows. Returns
  // after the CRC check; an exception from `consume` or a corrupt entry stops
  // both threads and is rethrown here.
  void read_pipelined(void* dst, std::size_t piece_bytes,
                      const std::function<void(const std::byte* data, std::size_t bytes)>& consume = {});
  // Requires the whole payload to have been read (else DataFileError).
  void finish() const;

 private:
  friend class NpzArchive;
  struct Impl;
  explicit NpyStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A .npz archive (numpy.savez / savez_compressed; any ZIP of .npy members).
//
// open() reads the central directory (zip64 aware) and checks that it is
// consistent with the file; entries are read on demand, each opening the file
// anew, so an archive may be shared by threads reading different entries.
// Stored entries are copied, deflated ones inflated with zlib; every entry's
// CRC-32 is verified. Errors: DataFileError (see above) — a missing file, a
// file that is not a ZIP archive or is truncated, an entry that is encrypted or
// uses a compression method other than 0/8, a bad CRC, a bad NPY header or one
// whose shape x itemsize differs from the entry's payload, a missing key, an
// entry over the limits of NpzReadOptions (checked before any allocation).
class NpzArchive {
 public:
  static NpzArchive open(const std::string& path, const NpzReadOptions& options = {});

  const std::string& path() const { return path_; }
  const std::vector<ZipEntry>& entries() const { return entries_; }
  // The array names: entry names without their ".npy" suffix, in archive order.
  std::vector<std::string> keys() const;
  // Whether `key` ("node_feat" or "node_feat.npy") names an entry.
  bool contains(std::string_view key) const;

  // The header of `key`'s array (only the entry's first bytes are read).
  NpyHeader header(std::string_view key) const;
  // The whole array of `key`, CRC-checked, in C order.
  NpyArray read(std::string_view key) const;
  // A stream over `key`'s payload (C-order or Fortran-order bytes as stored; see
  // header().fortran_order).
  NpyStream stream(std::string_view key) const;

 private:
  NpzArchive() = default;
  const ZipEntry& entry(std::string_view key) const;

  std::string path_;
  uint64_t file_size_ = 0;
  uint64_t central_directory_offset_ = 0;
  uint64_t max_entry_bytes_ = 0;
  std::vector<ZipEntry> entries_;
};

}  // namespace edgewise::gnn
