// NumPy conversions that check values, not only layout (numpy_interop.hpp).
#include "numpy_interop.hpp"

#include <cmath>
#include <limits>

namespace edgewise::python {

py::array_t<float, py::array::c_style> as_nonnegative_float32_vector(const py::array& array, const char* op,
                                                                    const char* name) {
  EW_REQUIRE(array.ndim() == 1, op, ": ", name, " must be 1-D (got ", array.ndim(), "-D)");
  if (array.dtype().kind() == 'f' && array.itemsize() > 4) {
    const auto wide = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(array);
    const double smallest = std::numeric_limits<float>::denorm_min();
    for (py::ssize_t i = 0; i < wide.size(); ++i) {
      const double v = wide.data()[i];
      EW_REQUIRE(!(v > 0 && v < smallest / 2), op, ": ", name, "[", i, "] (", v,
                 ") is positive but rounds to 0 in float32 (the smallest is 1.4e-45): scale the values up, or "
                 "pass 0 for 'never'");
      EW_REQUIRE(!(std::isfinite(v) && std::fabs(v) > std::numeric_limits<float>::max()), op, ": ", name, "[", i,
                 "] (", v, ") overflows float32");
    }
  }
  return as_contiguous<float>(array);
}

}  // namespace edgewise::python
