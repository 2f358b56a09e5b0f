// Python binding of the engine's Philox dropout mask (the one its layers use).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "edgewise/gnn/tensor/ops.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

constexpr const char* kOp = "dropout";

py::array_t<float> dropout_py(const py::array& x_in, float p, uint64_t seed, uint64_t stream, const py::object& out_in) {
  EW_REQUIRE(has_dtype<float>(x_in), kOp, ": x must be float32 (got ", dtype_name(x_in), ")");
  EW_REQUIRE(p >= 0.0f && p < 1.0f, kOp, ": p (", p, ") must lie in [0, 1)");
  auto x = as_contiguous<float>(x_in);
  py::array_t<float> out;
  if (out_in.is_none()) {
    out = py::array_t<float>(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
  } else {
    out = py::array_t<float>::ensure(out_in);
    EW_REQUIRE(out && has_dtype<float>(out) && (out.flags() & py::array::c_style) && out.writeable(), kOp,
               ": out must be a writable C-contiguous float32 array");
    EW_REQUIRE(out.size() == x.size(), kOp, ": out has ", out.size(), " elements, x has ", x.size());
  }
  const int64_t n = static_cast<int64_t>(x.size());
  VectorView<const float> xv(x.data(), n);
  VectorView<float> yv(out.mutable_data(), n);
  {
    py::gil_scoped_release release;
    gnn::ops::dropout_values(xv, p, seed, stream, yv);
  }
  return out;
}

}  // namespace

void register_dropout(py::module_& m) {
  m.def("dropout", &dropout_py, py::arg("x"), py::arg("p"), py::arg("seed"), py::arg("stream") = 0,
        py::arg("out") = py::none(),
        R"doc(Inverted dropout with the engine's counter-based Philox mask.

x: float32 array of any shape. Element i (row-major) is kept, scaled by 1 / (1 - p),
when the Philox uniform keyed by (seed, stream, i) is >= p, else set to 0; the mask is
a pure function of (seed, stream, i), so the backward pass applies the same call to the
gradient. p in [0, 1). out: optional writable C-contiguous float32 array with x's
number of elements (may be x itself). Returns out (a new array when None).)doc");
}

}  // namespace edgewise::python
