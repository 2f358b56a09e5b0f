// TextLines: gzip-transparent line reading via zlib; field splitting and number parsing.
#include "data/formats/text_lines.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>

#include "edgewise/gnn/data/npz.hpp"

namespace edgewise::gnn::formats {

TextLines::TextLines(const std::string& path) : path_(path) {
  file_ = gzopen(path.c_str(), "rb");
  if (!file_) throw DataFileError("'" + path + "': cannot open: " + std::strerror(errno));
}

TextLines::~TextLines() {
  if (file_) gzclose(file_);
}

bool TextLines::refill() {
  if (eof_) return false;
  if (position_ > 0) {
    buffer_.erase(0, position_);
    position_ = 0;
  }
  constexpr size_t kBlock = size_t{1} << 16;
  const size_t old = buffer_.size();
  buffer_.resize(old + kBlock);
  const int n = gzread(file_, buffer_.data() + old, static_cast<unsigned>(kBlock));
  if (n < 0) {
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    throw DataFileError("'" + path_ + "': cannot read after line " + std::to_string(line_number_) + ": " + message);
  }
  buffer_.resize(old + static_cast<size_t>(n));
  if (n == 0) eof_ = true;
  return n > 0;
}

bool TextLines::next(std::string& line) {
  line.clear();
  size_t end = std::string::npos;
  size_t scanned = position_;
  while ((end = buffer_.find('\n', scanned)) == std::string::npos) {
    scanned = buffer_.size() - position_;  // refill() moves the unread part to the front
    if (!refill()) break;
  }
  const size_t stop = end == std::string::npos ? buffer_.size() : end;
  if (stop == position_ && end == std::string::npos) return false;  // nothing left
  line.assign(buffer_, position_, stop - position_);
  position_ = end == std::string::npos ? buffer_.size() : end + 1;
  ++line_number_;
  if (line_number_ == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);  // UTF-8 byte-order mark
  if (const size_t nul = line.find('\0'); nul != std::string::npos)
    fail("holds a NUL byte at column " + std::to_string(nul + 1) + " (a binary file, not text)");
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return true;
}

std::string TextLines::where() const { return "'" + path_ + "' line " + std::to_string(line_number_); }

void TextLines::fail(const std::string& what) const { throw DataFileError(where() + ": " + what); }

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  const auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  if (line.find(',') != std::string_view::npos) {
    for (size_t start = 0;;) {
      const size_t comma = line.find(',', start);
      fields.push_back(
          trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return fields;
  }
  for (size_t i = 0; i < line.size();) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

bool parse_int(std::string_view field, int64_t& value) {
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  return ec == std::errc() && end == field.data() + field.size() && !field.empty();
}

bool parse_float(std::string_view field, float& value) {
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  return ec == std::errc() && end == field.data() + field.size() && !field.empty();
}

bool is_number(std::string_view field) {
  int64_t i = 0;
  float f = 0;
  return parse_int(field, i) || parse_float(field, f);
}

bool is_blank_or_comment(std::string_view line) {
  for (char c : line) {
    if (c == ' ' || c == '\t') continue;
    return c == '#' || c == '%';
  }
  return true;
}

}  // namespace edgewise::gnn::formats
