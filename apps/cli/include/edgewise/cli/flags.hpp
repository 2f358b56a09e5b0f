// Flags for the Edgewise programs (edgewise-train, edgewise-bench, the examples), on
// CLI11. Values are parsed as whole strings ("1e3", "12x", "0.01abc" are not
// integers or numbers), range-checked, and named in every error; booleans take
// 0, 1, true or false, or no value (1); output paths are checked writable while parsing. Both
// "--flag value" and "--flag=value" work; unknown flags are errors. parse() turns
// any error into exit code 2 with "<program>: error: --flag: ..." on stderr, so a
// program fails before it loads any data.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace edgewise::cli {

// Exit status of a usage error (bad flag or value), as getopt-based tools use.
inline constexpr int kUsageError = 2;

// Whole-string parsers: std::nullopt unless all of `text` is the value.
// parse_int: optional '-' then decimal digits, in int64 range. parse_uint64: decimal
// digits only. parse_real: a decimal or scientific float ("1e-3", "inf", "nan" parse;
// range checks reject the last two).
std::optional<int64_t> parse_int(std::string_view text);
std::optional<uint64_t> parse_uint64(std::string_view text);
std::optional<double> parse_real(std::string_view text);
// "0", "false" -> false; "1", "true" -> true; anything else std::nullopt.
std::optional<bool> parse_bool(std::string_view text);

// An integer flag with min <= value <= max.
CLI::Option* add_int(CLI::App& app, const std::string& name, int64_t& value, const std::string& help,
                     int64_t min = std::numeric_limits<int64_t>::min(),
                     int64_t max = std::numeric_limits<int64_t>::max());
// A non-negative 64-bit integer (seeds).
CLI::Option* add_uint64(CLI::App& app, const std::string& name, uint64_t& value, const std::string& help);

// Bounds of a real flag; the value is always required to be finite (in the
// destination type: 1e39 is not a float).
struct RealRange {
  double min = -std::numeric_limits<double>::infinity();
  bool min_inclusive = true;
  double max = std::numeric_limits<double>::infinity();
  bool max_inclusive = true;
};
CLI::Option* add_real(CLI::App& app, const std::string& name, float& value, const std::string& help,
                      RealRange range = {});
CLI::Option* add_real(CLI::App& app, const std::string& name, double& value, const std::string& help,
                      RealRange range = {});

// A boolean: "--flag" alone is 1; "--flag 0|1|true|false" and "--flag=false" set it.
CLI::Option* add_bool(CLI::App& app, const std::string& name, bool& value, const std::string& help);
// One of `choices`, matched exactly.
CLI::Option* add_choice(CLI::App& app, const std::string& name, std::string& value, const std::string& help,
                        const std::vector<std::string>& choices);
// A device: cpu, cuda, gpu or cuda:N (edgewise::Device::parse; whether it exists
// is checked when it is used).
CLI::Option* add_device(CLI::App& app, const std::string& name, std::string& value, const std::string& help);
// Any text (dataset names, regexes checked by the caller's own ->check()).
CLI::Option* add_text(CLI::App& app, const std::string& name, std::string& value, const std::string& help);
// A file the program will write: when given, it must be creatable (or an existing
// file openable for writing) at parse time — checked without changing an existing
// file (gnn::check_writable_file).
CLI::Option* add_output_path(CLI::App& app, const std::string& name, std::string& value, const std::string& help);

// A directory the program will write into (created when missing): it must exist
// and be writable, or be creatable below a writable directory, at parse time.
CLI::Option* add_output_dir(CLI::App& app, const std::string& name, std::string& value, const std::string& help);

// Parses the command line. std::nullopt: go on. Otherwise the program should return
// the value: 0 after --help (printed on stdout), kUsageError after an error (printed
// on stderr as "<app name>: error: <message>").
std::optional<int> parse(CLI::App& app, int argc, const char* const* argv);

}  // namespace edgewise::cli
