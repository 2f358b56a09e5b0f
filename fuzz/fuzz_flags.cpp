// Fuzz target: the programs' flag parser (edgewise_cli on CLI11). The input is split
// at NUL bytes into argv words and parsed against one flag of every kind the
// programs use. A parse must never crash; when it succeeds, every value must satisfy
// its declared range or choice, and the whole-string number parsers must agree with
// a strict reference (std::from_chars over the entire word).
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "edgewise/cli/flags.hpp"

namespace {

// The reference for parse_int: optional '-', then only decimal digits, in range.
bool reference_int(std::string_view text, int64_t& value) {
  if (text.empty() || text == "-") return false;
  for (std::size_t i = text[0] == '-' ? 1 : 0; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_flags: invariant violated: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::vector<std::string> words{"fuzz-flags"};
  std::string word;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      words.push_back(word);
      word.clear();
    } else {
      word.push_back(static_cast<char>(data[i]));
    }
  }
  if (!word.empty()) words.push_back(word);

  for (std::size_t i = 1; i < words.size(); ++i) {
    int64_t expected = 0;
    const bool reference_ok = reference_int(words[i], expected);
    const std::optional<int64_t> parsed = edgewise::cli::parse_int(words[i]);
    check(parsed.has_value() == reference_ok, "parse_int accepts exactly the decimal integers in range");
    if (parsed) check(*parsed == expected, "parse_int value");
    if (const std::optional<double> real = edgewise::cli::parse_real(words[i]); real && reference_ok)
      check(*real == static_cast<double>(expected) || std::fabs(*real - static_cast<double>(expected)) <=
                                                           1e-15 * std::fabs(static_cast<double>(expected)),
            "parse_real agrees with parse_int on integers");
  }

  CLI::App app("fuzzed flags", "fuzz-flags");
  int64_t count = 1, epochs = 5;
  uint64_t seed = 0;
  float lr = 0.01f;
  double dropout = 0.5;
  bool flag = false;
  std::string choice = "a", device = "cpu", text;
  edgewise::cli::add_int(app, "--count", count, "an int >= 1", 1);
  edgewise::cli::add_int(app, "--epochs", epochs, "an int in [1, 1000]", 1, 1000);
  edgewise::cli::add_uint64(app, "--seed", seed, "a seed");
  edgewise::cli::add_real(app, "--lr", lr, "a positive float", {.min = 0, .min_inclusive = false});
  edgewise::cli::add_real(app, "--dropout", dropout, "a probability", {.min = 0, .max = 1, .max_inclusive = false});
  edgewise::cli::add_bool(app, "--flag", flag, "a boolean");
  edgewise::cli::add_choice(app, "--choice", choice, "one of a, b, c", {"a", "b", "c"});
  edgewise::cli::add_device(app, "--device", device, "a device");
  edgewise::cli::add_text(app, "--text", text, "any text");

  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  const std::optional<int> exit_code = edgewise::cli::parse(app, static_cast<int>(argv.size()), argv.data());
  if (exit_code) {
    check(*exit_code == 0 || *exit_code == edgewise::cli::kUsageError, "exit code is 0 (help) or 2");
    return 0;
  }
  check(count >= 1, "--count range");
  check(epochs >= 1 && epochs <= 1000, "--epochs range");
  check(std::isfinite(lr) && lr > 0, "--lr range");
  check(std::isfinite(dropout) && dropout >= 0 && dropout < 1, "--dropout range");
  check(choice == "a" || choice == "b" || choice == "c", "--choice membership");
  return 0;
}
