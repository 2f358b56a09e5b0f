// Argument-check macros: validation failures throw std::invalid_argument whose
// message names the op, the argument and the offending values (STYLE §4).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace edgewise {

// A CUDA runtime or library call failed; the message names file, line and statement.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace edgewise

namespace edgewise::detail {

template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

template <class... Parts>
[[noreturn]] void throw_invalid_argument(const Parts&... parts) {
  throw std::invalid_argument(concat(parts...));
}

}  // namespace edgewise::detail

// EW_REQUIRE(cond, "op: offsets.size() (", n, ") must equal ...") — message parts
// are streamed together only when the check fails.
#define EW_REQUIRE(cond, ...)                                \
  do {                                                       \
    if (!(cond)) ::edgewise::detail::throw_invalid_argument(__VA_ARGS__); \
  } while (0)
