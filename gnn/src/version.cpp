// The engine library's version string.
#include "edgewise/gnn/version.hpp"

namespace edgewise::gnn {
const char* version() noexcept { return "0.1.0"; }
}  // namespace edgewise::gnn
