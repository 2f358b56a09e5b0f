// CLI11 flags with strict whole-string values (see flags.hpp).
#include "edgewise/cli/flags.hpp"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "edgewise/gnn/train/trainer.hpp"

namespace edgewise::cli {

namespace {

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

template <class T>
std::string to_text(T value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

[[noreturn]] void reject(const std::string& name, const std::string& message) {
  throw CLI::ValidationError(name, message);
}

// Every typed flag is a string option whose callback converts and checks the
// value, so CLI11's own lenient conversions (base prefixes, "yes", "-1" as a huge
// unsigned) never see it. The last occurrence of a repeated flag wins.
CLI::Option* add_converted(CLI::App& app, const std::string& name, const std::string& help, const std::string& type,
                           const std::string& default_text, std::function<void(const std::string&)> convert) {
  // CLI11 takes the word after a flag as its value even when it is another flag.
  auto checked = [name, convert = std::move(convert)](const std::string& text) {
    if (text.size() > 2 && text.starts_with("--")) reject(name, "needs a value, got the flag '" + text + "'");
    convert(text);
  };
  CLI::Option* option = app.add_option_function<std::string>(name, checked, help);
  option->type_name(type)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  if (!default_text.empty()) option->default_str(default_text);
  return option;
}

std::string range_text(const RealRange& r) {
  std::string out;
  if (std::isfinite(r.min)) out += std::string(r.min_inclusive ? ">= " : "> ") + to_text(r.min);
  if (std::isfinite(r.max)) out += (out.empty() ? "" : " and ") + std::string(r.max_inclusive ? "<= " : "< ") + to_text(r.max);
  return out;
}

template <class T>
CLI::Option* add_real_impl(CLI::App& app, const std::string& name, T& value, const std::string& help,
                           RealRange range) {
  return add_converted(app, name, help, "REAL", to_text(value), [name, &value, range](const std::string& text) {
    const std::optional<double> parsed = parse_real(text);
    if (!parsed) reject(name, in_quotes(text) + " is not a number");
    const T v = static_cast<T>(*parsed);
    const bool low_ok = range.min_inclusive ? v >= range.min : v > range.min;
    const bool high_ok = range.max_inclusive ? v <= range.max : v < range.max;
    if (!std::isfinite(v) || !low_ok || !high_ok) {
      const std::string bounds = range_text(range);
      reject(name, in_quotes(text) + " is out of range (must be finite" + (bounds.empty() ? "" : " and " + bounds) + ")");
    }
    value = v;
  });
}

}  // namespace

std::optional<int64_t> parse_int(std::string_view text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v, 10);
  if (text.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
  return v;
}

std::optional<uint64_t> parse_uint64(std::string_view text) {
  if (text.empty() || text[0] == '-') return std::nullopt;
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v, 10);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return v;
}

std::optional<double> parse_real(std::string_view text) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v, std::chars_format::general);
  if (text.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
  return v;
}

std::optional<bool> parse_bool(std::string_view text) {
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false") return false;
  return std::nullopt;
}

CLI::Option* add_int(CLI::App& app, const std::string& name, int64_t& value, const std::string& help, int64_t min,
                     int64_t max) {
  return add_converted(app, name, help, "INT", std::to_string(value), [name, &value, min, max](const std::string& text) {
    const std::optional<int64_t> v = parse_int(text);
    if (!v) {
      int64_t ignored = 0;
      const bool too_big = std::from_chars(text.data(), text.data() + text.size(), ignored).ec == std::errc::result_out_of_range;
      reject(name, in_quotes(text) + (too_big ? " is out of the 64-bit integer range" : " is not an integer"));
    }
    if (*v < min || *v > max) {
      std::string bounds;
      if (min != std::numeric_limits<int64_t>::min()) bounds = ">= " + std::to_string(min);
      if (max != std::numeric_limits<int64_t>::max()) bounds += (bounds.empty() ? "<= " : " and <= ") + std::to_string(max);
      reject(name, in_quotes(text) + " is out of range (must be " + bounds + ")");
    }
    value = *v;
  });
}

CLI::Option* add_uint64(CLI::App& app, const std::string& name, uint64_t& value, const std::string& help) {
  return add_converted(app, name, help, "UINT64", std::to_string(value), [name, &value](const std::string& text) {
    const std::optional<uint64_t> v = parse_uint64(text);
    if (!v) reject(name, in_quotes(text) + " is not a non-negative 64-bit integer");
    value = *v;
  });
}

CLI::Option* add_real(CLI::App& app, const std::string& name, float& value, const std::string& help, RealRange range) {
  return add_real_impl(app, name, value, help, range);
}

CLI::Option* add_real(CLI::App& app, const std::string& name, double& value, const std::string& help, RealRange range) {
  return add_real_impl(app, name, value, help, range);
}

CLI::Option* add_bool(CLI::App& app, const std::string& name, bool& value, const std::string& help) {
  // "--flag" alone means 1, as with CLI11's own flags: the value is optional (a
  // following word that is no flag is taken as the value, and must be a boolean).
  // CLI11 hands an absent value over as the option's default string, kept empty
  // here for that reason: the default is shown in the type name instead.
  CLI::Option* option =
      add_converted(app, name, help, std::string("[0|1] (default ") + (value ? "1" : "0") + ")", "",
                    [name, &value](const std::string& text) {
                      const std::optional<bool> v = text.empty() ? std::optional<bool>(true) : parse_bool(text);
                      if (!v) reject(name, in_quotes(text) + " is not a boolean (0, 1, true or false)");
                      value = *v;
                    });
  return option->expected(0, 1);
}

CLI::Option* add_choice(CLI::App& app, const std::string& name, std::string& value, const std::string& help,
                        const std::vector<std::string>& choices) {
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : "|") + c;
  return add_converted(app, name, help, list, value, [name, &value, choices](const std::string& text) {
    for (const std::string& c : choices) {
      if (text == c) {
        value = text;
        return;
      }
    }
    std::string expected;
    for (size_t i = 0; i < choices.size(); ++i)
      expected += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
    reject(name, in_quotes(text) + " is not one of " + expected);
  });
}

CLI::Option* add_device(CLI::App& app, const std::string& name, std::string& value, const std::string& help) {
  return add_converted(app, name, help, "cpu|cuda|cuda:N", value, [name, &value](const std::string& text) {
    try {
      (void)Device::parse(text);
    } catch (const std::exception&) {
      reject(name, in_quotes(text) + " is not a device (cpu, cuda or cuda:N)");
    }
    value = text;
  });
}

CLI::Option* add_text(CLI::App& app, const std::string& name, std::string& value, const std::string& help) {
  return add_converted(app, name, help, "TEXT", value, [&value](const std::string& text) { value = text; });
}

CLI::Option* add_output_path(CLI::App& app, const std::string& name, std::string& value, const std::string& help) {
  return add_converted(app, name, help, "FILE", value, [name, &value](const std::string& text) {
    if (text.empty()) reject(name, "needs a file name");
    try {
      gnn::check_writable_file(text);
    } catch (const std::exception& e) {
      reject(name, e.what());
    }
    value = text;
  });
}

CLI::Option* add_output_dir(CLI::App& app, const std::string& name, std::string& value, const std::string& help) {
  return add_converted(app, name, help, "DIR", value, [name, &value](const std::string& text) {
    namespace fs = std::filesystem;
    if (text.empty()) reject(name, "needs a directory");
    // The nearest existing ancestor must be a writable directory: then every missing
    // level below it can be created. Nothing is created here.
    std::error_code ec;
    fs::path existing = fs::absolute(fs::path(text), ec).lexically_normal();
    while (!existing.empty() && !fs::exists(existing, ec)) {
      if (existing == existing.parent_path()) break;
      existing = existing.parent_path();
    }
    if (!fs::is_directory(existing, ec))
      reject(name, in_quotes(text) + " cannot be created: '" + existing.string() + "' is not a directory");
    if (::access(existing.c_str(), W_OK) != 0)
      reject(name, in_quotes(text) + " cannot be written: '" + existing.string() + "' is not writable");
    value = text;
  });
}

std::optional<int> parse(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
    std::fprintf(stderr, "%s: error: %s\n(see %s --help)\n", app.get_name().c_str(), e.what(), app.get_name().c_str());
    return kUsageError;
  }
  return std::nullopt;
}

}  // namespace edgewise::cli
