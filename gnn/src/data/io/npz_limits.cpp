// The reader's entry-size limit: NpzReadOptions, else $EDGEWISE_NPZ_MAX_BYTES, else 64 GiB.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "edgewise/gnn/data/npz.hpp"

namespace edgewise::gnn {

namespace {

constexpr uint64_t kDefaultMaxEntryBytes = uint64_t{64} << 30;
constexpr const char* kEnvName = "EDGEWISE_NPZ_MAX_BYTES";

// "4096", "512M", "64G": a positive count of bytes (suffixes are powers of 1024).
uint64_t parse_byte_count(const std::string& text) {
  auto bad = [&]() -> uint64_t {
    throw std::invalid_argument(std::string(kEnvName) + ": '" + text +
                                "' is not a positive byte count (e.g. 1073741824, 512M, 64G)");
  };
  std::size_t end = 0;
  uint64_t value = 0;
  try {
    if (text.empty() || text[0] < '0' || text[0] > '9') bad();
    value = std::stoull(text, &end, 10);
  } catch (const std::logic_error&) {  // stoull's out_of_range / invalid_argument
    bad();
  }
  int shift = 0;
  if (end + 1 == text.size()) {
    switch (text[end]) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      case 'T': case 't': shift = 40; break;
      default: bad();
    }
  } else if (end != text.size()) {
    bad();
  }
  if (value == 0 || value > (~uint64_t{0} >> shift)) bad();
  return value << shift;
}

}  // namespace

uint64_t npz_max_entry_bytes(const NpzReadOptions& options) {
  if (options.max_entry_bytes > 0) return options.max_entry_bytes;
  const char* env = std::getenv(kEnvName);
  if (env && *env) return parse_byte_count(env);
  return kDefaultMaxEntryBytes;
}

}  // namespace edgewise::gnn
