// The outputs of the reduction bindings (segment_reduce, scatter_reduce, spmm): out
// [rows] or [rows, cols] of T, 1-D when the input it mirrors is, and with return_arg
// the winners' positions arg (int64, the same shape).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "array_interop.hpp"

namespace edgewise::python {

template <class T>
struct ReduceOutputs {
  ReduceOutputs(Call& call, bool one_d, int64_t rows, int64_t cols, bool return_arg) {
    const std::vector<int64_t> shape = one_d ? std::vector<int64_t>{rows} : std::vector<int64_t>{rows, cols};
    out = call.empty<T>(shape);
    out_view = MatrixView<T>(static_cast<T*>(out.data), rows, cols, out.device);
    if (return_arg) {
      arg = call.empty<int64_t>(shape);
      arg_view = MatrixView<int64_t>(static_cast<int64_t*>(arg->data), rows, cols, arg->device);
    }
  }

  // out, or (out, arg), in the caller's framework.
  py::object result(Call& call) const {
    if (arg) return py::make_tuple(call.result(out), call.result(*arg));
    return call.result(out);
  }

  Array out;
  std::optional<Array> arg;
  MatrixView<T> out_view;
  MatrixView<int64_t> arg_view;  // empty without return_arg
};

}  // namespace edgewise::python
