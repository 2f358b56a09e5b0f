// When the dataset code parallelises: below kMinParallelWork elements an OpenMP
// team costs more than it saves (and on a busy machine a barrier can wait a
// whole scheduler slice for a descheduled thread).
#pragma once

#include <cstdint>

namespace edgewise::gnn {

constexpr int64_t kMinParallelWork = int64_t{1} << 16;

}  // namespace edgewise::gnn
