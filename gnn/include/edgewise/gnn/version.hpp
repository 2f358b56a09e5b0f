// Edgewise engine version.
#pragma once

namespace edgewise::gnn {
const char* version() noexcept;
}  // namespace edgewise::gnn
