// NPY arrays: header parsing (magic, version 1/2/3, the Python-literal dict) and
// typed conversion of payloads.
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "edgewise/gnn/data/npz.hpp"
#include "data/io/byte_order.hpp"

namespace edgewise::gnn {

namespace {

[[noreturn]] void header_error(const std::string& source, const std::string& what) {
  throw DataFileError(source + ": bad NPY header: " + what);
}

// A cursor over the header dict, a Python literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2708, 1433), }
// Only what NumPy writes is accepted: strings, True/False and tuples of ints.
class DictParser {
 public:
  DictParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r'))
      ++pos_;
  }
  bool at(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!at(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool accept(char c) {
    if (!at(c)) return false;
    ++pos_;
    return true;
  }
  bool accept_word(std::string_view word) {
    skip_space();
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) fail("expected a string");
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  int64_t integer() {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '-') fail("negative dimension in shape");
    const size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (value > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("dimension too large");
      value = value * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start) fail("expected an integer");
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long literal
    return value;
  }
  std::vector<int64_t> int_tuple() {
    expect('(');
    std::vector<int64_t> values;
    while (!accept(')')) {
      values.push_back(integer());
      if (!accept(',')) {
        expect(')');
        break;
      }
    }
    return values;
  }
  [[noreturn]] void fail(const std::string& what) const {
    std::ostringstream msg;
    msg << what << " at character " << pos_ << " of " << text_;
    header_error(source_, msg.str());
  }

 private:
  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
};

NpyDtype parse_descr(const std::string& descr, const std::string& source) {
  const auto unsupported = [&](const std::string& why) {
    throw DataFileError(source + ": unsupported dtype '" + descr + "' (" + why +
                        "; supported: b1, i1/i2/i4/i8, u1/u2/u4/u8, f4/f8, little-endian)");
  };
  if (descr.size() < 3) unsupported("not a simple dtype");
  const char order = descr[0];
  NpyDtype dt;
  dt.kind = descr[1];
  int size = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9' || size > 1000) unsupported("not a simple dtype");
    size = size * 10 + (descr[i] - '0');
  }
  dt.itemsize = size;
  if (order != '<' && order != '>' && order != '|' && order != '=') unsupported("unknown byte order");
  if (order == '>' && size > 1) unsupported("big-endian data");
  const bool ok = (dt.kind == 'b' && size == 1) ||
                  ((dt.kind == 'i' || dt.kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
                  (dt.kind == 'f' && (size == 4 || size == 8));
  if (!ok) unsupported(dt.kind == 'f' ? "float width" : "kind or width");
  return dt;
}

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, uint8_t>) return "uint8";
  else if constexpr (std::is_same_v<T, int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, float>) return "float32";
  else return "float64";
}

template <class S>
S load(const std::byte* p) {
  S value;
  std::memcpy(&value, p, sizeof(S));
  return value;
}

template <class T, class S>
void convert(const NpyArray& a, T* out) {
  const int64_t n = a.size();
  const std::byte* src = a.data.data();
  if constexpr (std::is_same_v<S, T>) {
    if (n > 0) std::memcpy(out, src, static_cast<size_t>(n) * sizeof(T));
    return;
  } else {
    const auto bad = [&](int64_t i, auto value) {
      std::ostringstream msg;
      msg << a.source << ": element " << i << " (" << +value << ") of a " << a.dtype.str() << " array does not fit "
          << type_name<T>();
      throw DataFileError(msg.str());
    };
    for (int64_t i = 0; i < n; ++i) {
      const S v = load<S>(src + i * static_cast<int64_t>(sizeof(S)));
      if constexpr (std::is_floating_point_v<T>) {
        if constexpr (std::is_same_v<T, float> && std::is_same_v<S, double>) {
          // Out-of-range doubles become +-inf (explicit: the cast itself would be UB).
          const double lim = std::numeric_limits<float>::max();
          out[i] = v > lim ? std::numeric_limits<float>::infinity()
                   : v < -lim ? -std::numeric_limits<float>::infinity()
                              : static_cast<float>(v);
        } else {
          out[i] = static_cast<T>(v);
        }
      } else if constexpr (std::is_floating_point_v<S>) {
        // Only integral, in-range values convert to an integer type.
        const double d = static_cast<double>(v);
        // [lo, top) with top = 2^bits (unsigned) or -min (signed): both exact in double.
        const double lo = static_cast<double>(std::numeric_limits<T>::min());
        const double top = std::is_signed_v<T> ? -lo : static_cast<double>(std::numeric_limits<T>::max()) + 1.0;
        if (!(d >= lo && d < top) || std::trunc(d) != d) bad(i, d);
        out[i] = static_cast<T>(d);
      } else {
        if (!std::in_range<T>(v)) bad(i, v);
        out[i] = static_cast<T>(v);
      }
    }
  }
}

template <class T>
void convert_any(const NpyArray& a, T* out) {
  const int w = a.dtype.itemsize;
  switch (a.dtype.kind) {
    case 'b': {
      // NumPy bools are single bytes; any nonzero byte counts as true.
      const int64_t n = a.size();
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(a.data[static_cast<size_t>(i)] != std::byte{0});
      return;
    }
    case 'i':
      if (w == 1) return convert<T, int8_t>(a, out);
      if (w == 2) return convert<T, int16_t>(a, out);
      if (w == 4) return convert<T, int32_t>(a, out);
      return convert<T, int64_t>(a, out);
    case 'u':
      if (w == 1) return convert<T, uint8_t>(a, out);
      if (w == 2) return convert<T, uint16_t>(a, out);
      if (w == 4) return convert<T, uint32_t>(a, out);
      return convert<T, uint64_t>(a, out);
    default:
      if (w == 4) return convert<T, float>(a, out);
      return convert<T, double>(a, out);
  }
}

}  // namespace

std::string NpyDtype::str() const {
  return std::string(itemsize == 1 ? "|" : "<") + kind + std::to_string(itemsize);
}

int64_t NpyHeader::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // bounded by parse_npy_header
  return n;
}

int64_t NpyArray::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

NpyHeader parse_npy_header(const std::byte* bytes, std::size_t size, const std::string& source) {
  static constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (size < 10 || std::memcmp(bytes, kMagic, 6) != 0)
    throw DataFileError(source + ": not an NPY array (bad magic string; expected \\x93NUMPY)");
  NpyHeader h;
  h.version_major = static_cast<int>(bytes[6]);
  if (h.version_major < 1 || h.version_major > 3)
    header_error(source, "unsupported NPY version " + std::to_string(h.version_major) + "." +
                             std::to_string(static_cast<int>(bytes[7])) + " (1, 2 and 3 are supported)");
  const size_t prefix = h.version_major == 1 ? 10 : 12;
  if (size < prefix) header_error(source, "truncated before the header length");
  const uint64_t dict_len = h.version_major == 1 ? read_le16(bytes + 8) : read_le32(bytes + 8);
  if (dict_len > size - prefix)
    header_error(source, "header length " + std::to_string(dict_len) + " exceeds the " +
                             std::to_string(size - prefix) + " bytes available");
  h.header_bytes = static_cast<int64_t>(prefix + dict_len);
  std::string_view text(reinterpret_cast<const char*>(bytes + prefix), dict_len);

  DictParser p(text, source);
  std::string descr;
  bool have_descr = false, have_order = false, have_shape = false;
  p.expect('{');
  while (!p.accept('}')) {
    const std::string key = p.string_literal();
    p.expect(':');
    if (key == "descr") {
      if (p.at('[')) header_error(source, "structured dtypes are not supported");
      descr = p.string_literal();
      have_descr = true;
    } else if (key == "fortran_order") {
      if (p.accept_word("True")) h.fortran_order = true;
      else if (p.accept_word("False")) h.fortran_order = false;
      else p.fail("fortran_order must be True or False");
      have_order = true;
    } else if (key == "shape") {
      h.shape = p.int_tuple();
      have_shape = true;
    } else {
      p.fail("unexpected key '" + key + "'");
    }
    if (!p.accept(',')) {
      p.expect('}');
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape)
    header_error(source, std::string("missing key '") + (!have_descr ? "descr" : !have_order ? "fortran_order" : "shape") +
                             "' in " + std::string(text));
  h.dtype = parse_descr(descr, source);
  // Element and byte counts must fit int64 (a corrupt header must not overflow).
  int64_t bytes_total = h.dtype.itemsize;
  for (int64_t d : h.shape) {
    if (d != 0 && bytes_total > std::numeric_limits<int64_t>::max() / d)
      header_error(source, "shape overflows a 64-bit byte count");
    bytes_total *= d;
  }
  return h;
}

template <class T>
std::vector<T> NpyArray::as() const {
  std::vector<T> out(static_cast<size_t>(size()));
  convert_any<T>(*this, out.data());
  return out;
}

template <class T>
T NpyArray::scalar() const {
  if (size() != 1) {
    std::ostringstream msg;
    msg << source << ": expected a single value, got an array of " << size() << " elements";
    throw DataFileError(msg.str());
  }
  return as<T>()[0];
}

template std::vector<uint8_t> NpyArray::as<uint8_t>() const;
template std::vector<int32_t> NpyArray::as<int32_t>() const;
template std::vector<int64_t> NpyArray::as<int64_t>() const;
template std::vector<float> NpyArray::as<float>() const;
template std::vector<double> NpyArray::as<double>() const;
template uint8_t NpyArray::scalar<uint8_t>() const;
template int32_t NpyArray::scalar<int32_t>() const;
template int64_t NpyArray::scalar<int64_t>() const;
template float NpyArray::scalar<float>() const;
template double NpyArray::scalar<double>() const;

}  // namespace edgewise::gnn
