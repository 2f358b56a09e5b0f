// Text entries of .npz files (NumPy bytes |S<n> and str <U<n>), which the numeric
// NPY reader refuses: scipy.sparse.save_npz stores its 'format' this way.
#include <cstring>
#include <filesystem>

#include "data/formats/formats.hpp"
#include "data/io/zip_entry_reader.hpp"

namespace edgewise::gnn::formats {

namespace {

// Text scalars are a few bytes; a bigger entry is not one.
constexpr uint64_t kMaxTextEntryBytes = 1 << 16;

// The quoted value after `'name':` in an NPY header dict ("" when absent).
std::string dict_value(const std::string& dict, const std::string& name) {
  const size_t at = dict.find("'" + name + "'");
  if (at == std::string::npos) return {};
  size_t p = dict.find(':', at);
  if (p == std::string::npos) return {};
  ++p;
  while (p < dict.size() && dict[p] == ' ') ++p;
  if (p >= dict.size()) return {};
  if (dict[p] == '\'' || dict[p] == '"') {
    const size_t end = dict.find(dict[p], p + 1);
    return end == std::string::npos ? std::string() : dict.substr(p + 1, end - p - 1);
  }
  const size_t end = dict.find(')', p);  // the shape tuple
  return end == std::string::npos ? std::string() : dict.substr(p, end - p + 1);
}

}  // namespace

std::string read_npz_text_scalar(const NpzArchive& archive, std::string_view key) {
  const ZipEntry* entry = nullptr;
  for (const ZipEntry& e : archive.entries()) {
    if (e.name == std::string(key) + ".npy" || e.name == key) entry = &e;
  }
  const std::string where = "npz '" + archive.path() + "': key '" + std::string(key) + "'";
  if (!entry) throw DataFileError(where + " is missing");
  if (entry->uncompressed_size > kMaxTextEntryBytes)
    throw DataFileError(where + " holds " + std::to_string(entry->uncompressed_size) +
                        " bytes, too many for a text scalar");
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(archive.path(), ec);
  if (ec) throw DataFileError(where + ": cannot read the file: " + ec.message());
  ZipEntryReader reader(archive.path(), *entry, file_size, where);
  std::string bytes(static_cast<size_t>(entry->uncompressed_size), '\0');
  reader.read(reinterpret_cast<std::byte*>(bytes.data()), bytes.size());
  reader.check_crc(reader.crc());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) throw DataFileError(where + " is not an NPY array");
  const bool v1 = bytes[6] == 1;
  const size_t prefix = v1 ? 10 : 12;
  size_t dict_len = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9]))
                                                               << 8;
  if (!v1 && bytes.size() >= 12)
    dict_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[10])) << 16 |
                static_cast<size_t>(static_cast<unsigned char>(bytes[11])) << 24;
  if (prefix + dict_len > bytes.size()) throw DataFileError(where + ": truncated NPY header");
  const std::string dict = bytes.substr(prefix, dict_len);
  const std::string payload = bytes.substr(prefix + dict_len);
  const std::string descr = dict_value(dict, "descr");
  const std::string shape = dict_value(dict, "shape");
  if (descr.find('O') != std::string::npos)
    throw DataFileError(where + " is a pickled object array, which is never unpickled; save it as bytes or str");
  if (shape != "()" && shape != "(1,)")
    throw DataFileError(where + " must be a single string, got shape " + (shape.empty() ? "?" : shape));
  const bool bytes_kind = descr.size() >= 3 && (descr[0] == '|' || descr[0] == '<') && descr[1] == 'S';
  const bool str_kind = descr.size() >= 3 && (descr[0] == '<' || descr[0] == '|') && descr[1] == 'U';
  if (!bytes_kind && !str_kind)
    throw DataFileError(where + " must be text (dtype |S<n> or <U<n>), got '" + descr + "'");
  const size_t width = std::strtoull(descr.c_str() + 2, nullptr, 10);
  const size_t unit = str_kind ? 4 : 1;
  if (payload.size() != width * unit)
    throw DataFileError(where + ": dtype '" + descr + "' needs " + std::to_string(width * unit) +
                        " payload bytes, the entry holds " + std::to_string(payload.size()));
  std::string text;
  for (size_t i = 0; i < width; ++i) {
    uint32_t c = 0;
    for (size_t b = 0; b < unit; ++b)
      c |= static_cast<uint32_t>(static_cast<unsigned char>(payload[i * unit + b])) << (8 * b);
    if (c == 0) break;  // NumPy pads with NULs
    text += c < 128 ? static_cast<char>(c) : '?';
  }
  return text;
}

}  // namespace edgewise::gnn::formats
