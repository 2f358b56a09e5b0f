// NumPy's spelling of an array shape, for error messages: "(3,)", "(2, 5)", "()".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edgewise::gnn {

inline std::string npy_shape_str(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace edgewise::gnn
