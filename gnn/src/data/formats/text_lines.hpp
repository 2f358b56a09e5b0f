// Line-by-line reading of text files, gzip-compressed or plain (zlib reads both),
// and the number fields of CSV / whitespace-separated lines.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace edgewise::gnn::formats {

class TextLines {
 public:
  // Throws DataFileError when `path` cannot be opened.
  explicit TextLines(const std::string& path);
  ~TextLines();
  TextLines(const TextLines&) = delete;
  TextLines& operator=(const TextLines&) = delete;

  // The next line without its end ("\n" or "\r\n"); false at the end of the file.
  // A UTF-8 byte-order mark opening the file is skipped. Throws DataFileError on a
  // read or decompression error, and on a NUL byte (a binary file, never text).
  bool next(std::string& line);
  int64_t line_number() const { return line_number_; }
  // "'<path>' line <n>", for error messages.
  std::string where() const;
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string path_;
  gzFile file_ = nullptr;
  int64_t line_number_ = 0;
  std::string buffer_;   // read but not yet returned
  size_t position_ = 0;  // of the next line in buffer_
  bool eof_ = false;
  bool refill();         // appends a block to buffer_; false at the end of the file
};

// The fields of `line`: split at ',' when it has one (each field trimmed), else at
// runs of spaces and tabs.
std::vector<std::string_view> split_fields(std::string_view line);

// The whole field as a number; false when it is not one (or out of range).
bool parse_int(std::string_view field, int64_t& value);
bool parse_float(std::string_view field, float& value);

// Whether the field is a number (an integer or a float in any notation).
bool is_number(std::string_view field);

// Whether the line holds nothing or is a comment ('#' or '%' first).
bool is_blank_or_comment(std::string_view line);

}  // namespace edgewise::gnn::formats
