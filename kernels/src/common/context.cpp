// Per-thread default contexts.
#include "edgewise/kernels/common/context.hpp"

#include <map>
#include <tuple>
#include <utility>

namespace edgewise {

namespace {
Context& per_thread_context(Device device, bool validate) {
  thread_local std::map<std::tuple<int, int, bool>, Context> contexts;
  auto key = std::make_tuple(static_cast<int>(device.type), device.index, validate);
  auto it = contexts.find(key);
  if (it == contexts.end()) {
    it = contexts.emplace(key, Context(device)).first;
    it->second.validate = validate;
  }
  return it->second;
}
}  // namespace

Context& default_context(Device device) { return per_thread_context(device, true); }
Context& trusted_context(Device device) { return per_thread_context(device, false); }

}  // namespace edgewise
