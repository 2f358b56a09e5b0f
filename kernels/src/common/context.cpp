// Per-thread default contexts.
#include "edgewise/kernels/common/context.hpp"

#include <map>
#include <utility>

namespace edgewise {

Context& default_context(Device device) {
  thread_local std::map<std::pair<int, int>, Context> contexts;
  auto key = std::make_pair(static_cast<int>(device.type), device.index);
  auto it = contexts.find(key);
  if (it == contexts.end()) it = contexts.emplace(key, Context(device)).first;
  return it->second;
}

}  // namespace edgewise
