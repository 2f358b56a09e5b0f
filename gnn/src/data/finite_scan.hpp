// Finding the first NaN or infinite node feature (dataset validation and loading).
#pragma once

#include <cstdint>
#include <optional>

#include "edgewise/gnn/data/dataset.hpp"

namespace edgewise::gnn {

struct FeaturePosition {
  int64_t row = 0, col = 0;
  float value = 0;
};

// The first non-finite entry of `f` in row-major order (the same at any thread
// count), or std::nullopt when every entry is finite.
std::optional<FeaturePosition> first_nonfinite(const Features& f);

}  // namespace edgewise::gnn
