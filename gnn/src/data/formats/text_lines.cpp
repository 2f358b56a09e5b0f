// TextLines: gzip-transparent line reading via zlib; field splitting and number parsing.
#include "data/formats/text_lines.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>

#include "edgewise/gnn/npz.hpp"

namespace edgewise::gnn::formats {

TextLines::TextLines(const std::string& path) : path_(path) {
  file_ = gzopen(path.c_str(), "rb");
  if (!file_) throw DataFileError("'" + path + "': cannot open: " + std::strerror(errno));
}

TextLines::~TextLines() {
  if (file_) gzclose(file_);
}

bool TextLines::next(std::string& line) {
  line.clear();
  char buffer[1 << 16];
  bool any = false;
  while (gzgets(file_, buffer, sizeof buffer)) {
    any = true;
    const size_t n = std::strlen(buffer);
    line.append(buffer, n);
    if (n > 0 && buffer[n - 1] == '\n') break;
  }
  if (!any) {
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    if (code != Z_OK && code != Z_STREAM_END)
      throw DataFileError("'" + path_ + "': cannot read after line " + std::to_string(line_number_) + ": " + message);
    return false;
  }
  ++line_number_;
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

bool is_blank_or_comment(std::string_view line) {
  for (char c : line) {
    if (c == ' ' || c == '\t') continue;
    return c == '#' || c == '%';
  }
  return true;
}

}  // namespace edgewise::gnn::formats
