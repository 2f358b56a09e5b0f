// Python bindings of segment_matmul, its weight gradient and grouped_matmul (NumPy or
// DLPack arrays, CPU or CUDA; ptr always on the host; array_interop.hpp).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <vector>

#include "array_interop.hpp"
#include "dtype_dispatch.hpp"
#include "edgewise/kernels/segment_matmul.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

// A [T, K, M] weight stack (or a 2-D [T*K, M] one) as the kernels' [T*K, M] matrix.
template <class T>
MatrixView<const T> stacked(const Array& w, const char* op, const char* name) {
  if (w.ndim() != 3) return w.matrix<T>(op, name);
  require_float<T>(w, op, name);
  return {static_cast<const T*>(w.data), w.shape[0] * w.shape[1], w.shape[2], w.device};
}

// ptr [T + 1] as host int64s; the vector owns them for the call.
std::vector<int64_t> host_ptr(const py::object& ptr_in, const char* op) {
  EW_REQUIRE(!ptr_in.is_none(), op, ": ptr is required");
  py::array array;
  try {
    array = py::array::ensure(ptr_in);
  } catch (const py::error_already_set&) {
    array = py::array();
  }
  EW_REQUIRE(array && array.ndim() == 1, op, ": ptr must be a 1-D host integer array (a CPU tensor or NumPy array)");
  EW_REQUIRE(array.dtype().kind() == 'i' || array.dtype().kind() == 'u' || array.size() == 0, op,
             ": ptr must be an integer array (got dtype ", std::string(py::str(array.dtype())), ")");
  auto as64 = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(array);
  return {as64.data(), as64.data() + as64.size()};
}

py::object segment_matmul_py(const py::object& x_in, const py::object& ptr_in, const py::object& weight_in,
                             bool transpose_weight, const py::object& stream) {
  constexpr const char* kOp = "segment_matmul";
  const std::vector<int64_t> ptr = host_ptr(ptr_in, kOp);
  Call call(kOp);
  call.use_stream(stream);
  Array x = call.array(x_in, "x");
  Array weight = call.array(weight_in, "weight");
  EW_REQUIRE(x.ndim() == 2, kOp, ": x must be 2-D [N, K] (got ", x.ndim(), "-D)");
  EW_REQUIRE(weight.ndim() == 3, kOp, ": weight must be 3-D [T, K, M] (got ", weight.ndim(), "-D)");
  EW_REQUIRE(weight.shape[0] + 1 == static_cast<int64_t>(ptr.size()), kOp, ": weight has ", weight.shape[0],
             " types but ptr has ", ptr.size(), " elements (must be T + 1)");
  return dispatch_dtype(MatmulDTypes{}, x, kOp, "x", [&](auto t) -> py::object {
    using T = decltype(t);
    require_float<T>(weight, kOp, "weight");
    MatrixView<const T> xv = x.matrix<T>(kOp, "x");
    MatrixView<const T> wv = stacked<T>(weight, kOp, "weight");
    const int64_t m = transpose_weight ? weight.shape[1] : weight.shape[2];
    Array out = call.empty<T>({xv.rows, m});
    MatrixView<T> ov = out.mutable_matrix<T>();
    Context& ctx = call.context();
    {
      py::gil_scoped_release release;
      segment_matmul<T>({ptr.data(), static_cast<int64_t>(ptr.size())}, xv, wv, ov, ctx, transpose_weight);
    }
    return call.result(out);
  });
}

py::object segment_matmul_weight_grad_py(const py::object& x_in, const py::object& ptr_in,
                                         const py::object& grad_in, const py::object& stream) {
  constexpr const char* kOp = "segment_matmul_weight_grad";
  const std::vector<int64_t> ptr = host_ptr(ptr_in, kOp);
  Call call(kOp);
  call.use_stream(stream);
  Array x = call.array(x_in, "x");
  Array grad = call.array(grad_in, "grad_out");
  EW_REQUIRE(x.ndim() == 2, kOp, ": x must be 2-D [N, K] (got ", x.ndim(), "-D)");
  EW_REQUIRE(grad.ndim() == 2, kOp, ": grad_out must be 2-D [N, M] (got ", grad.ndim(), "-D)");
  EW_REQUIRE(!ptr.empty(), kOp, ": ptr must have T + 1 >= 2 elements (got 0)");
  return dispatch_dtype(MatmulDTypes{}, x, kOp, "x", [&](auto t) -> py::object {
    using T = decltype(t);
    require_float<T>(grad, kOp, "grad_out");
    MatrixView<const T> xv = x.matrix<T>(kOp, "x");
    MatrixView<const T> gv = grad.matrix<T>(kOp, "grad_out");
    const auto types = static_cast<int64_t>(ptr.size()) - 1;
    Array out = call.empty<T>({types, xv.cols, gv.cols});
    MatrixView<T> ov{static_cast<T*>(out.data), types * xv.cols, gv.cols, out.device};
    Context& ctx = call.context();
    {
      py::gil_scoped_release release;
      segment_matmul_weight_grad<T>({ptr.data(), static_cast<int64_t>(ptr.size())}, xv, gv, ov, ctx);
    }
    return call.result(out);
  });
}

py::object grouped_matmul_py(const py::sequence& a_in, const py::sequence& b_in, bool transpose_a, bool transpose_b,
                             const py::object& stream) {
  constexpr const char* kOp = "grouped_matmul";
  EW_REQUIRE(a_in.size() == b_in.size(), kOp, ": inputs and others must have one length (got ", a_in.size(), " and ",
             b_in.size(), ")");
  Call call(kOp);
  call.use_stream(stream);
  std::vector<Array> a, b;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < a_in.size(); ++i) {
    names.push_back("inputs[" + std::to_string(i) + "]");
    a.push_back(call.array(a_in[i], names.back().c_str()));
    EW_REQUIRE(a.back().ndim() == 2, kOp, ": ", names.back(), " must be 2-D (got ", a.back().ndim(), "-D)");
    names.push_back("others[" + std::to_string(i) + "]");
    b.push_back(call.array(b_in[i], names.back().c_str()));
    EW_REQUIRE(b.back().ndim() == 2, kOp, ": ", names.back(), " must be 2-D (got ", b.back().ndim(), "-D)");
  }
  py::list results;
  if (a.empty()) return results;
  return dispatch_dtype(MatmulDTypes{}, a[0], kOp, "inputs[0]", [&](auto t) -> py::object {
    using T = decltype(t);
    std::vector<MatrixView<const T>> av, bv;
    std::vector<MatrixView<T>> ov;
    std::vector<Array> outs;
    for (std::size_t i = 0; i < a.size(); ++i) {
      require_float<T>(a[i], kOp, names[2 * i].c_str());
      require_float<T>(b[i], kOp, names[2 * i + 1].c_str());
      av.push_back(a[i].matrix<T>(kOp, names[2 * i].c_str()));
      bv.push_back(b[i].matrix<T>(kOp, names[2 * i + 1].c_str()));
      const int64_t m = transpose_a ? av.back().cols : av.back().rows;
      const int64_t n = transpose_b ? bv.back().rows : bv.back().cols;
      outs.push_back(call.empty<T>({m, n}));
      ov.push_back(outs.back().mutable_matrix<T>());
    }
    Context& ctx = call.context();
    {
      py::gil_scoped_release release;
      grouped_matmul<T>(av, bv, ov, ctx, {transpose_a, transpose_b});
    }
    for (const Array& out : outs) results.append(call.result(out));
    return results;
  });
}

// grouped_matmul on host memory named by address: edgewise.torch's CPU path, which
// would otherwise spend more time converting a few hundred small tensors to and from
// the binding than multiplying them. rows [P, 3] of addresses (a, b, out) and shapes
// [P, 3] of (m, n, k), both int64; the kernel checks shapes and overlaps as usual.
void grouped_matmul_at_py(const py::object& addresses_in, const py::object& shapes_in, const std::string& dtype,
                          bool transpose_a, bool transpose_b) {
  constexpr const char* kOp = "grouped_matmul_at";
  const auto addresses = as_int64(as_numpy(addresses_in, kOp, "addresses"), kOp, "addresses");
  const auto shapes = as_int64(as_numpy(shapes_in, kOp, "shapes"), kOp, "shapes");
  EW_REQUIRE(addresses.ndim() == 2 && addresses.shape(1) == 3, kOp, ": addresses must be [P, 3] (a, b, out)");
  EW_REQUIRE(shapes.ndim() == 2 && shapes.shape(1) == 3 && shapes.shape(0) == addresses.shape(0), kOp,
             ": shapes must be [P, 3] (m, n, k) with one row per row of addresses");
  const auto run = [&](auto t) {
    using T = decltype(t);
    const int64_t count = addresses.shape(0);
    std::vector<MatrixView<const T>> av, bv;
    std::vector<MatrixView<T>> ov;
    const auto at = [&](int64_t i, int64_t j) { return reinterpret_cast<T*>(static_cast<uintptr_t>(addresses.at(i, j))); };
    for (int64_t i = 0; i < count; ++i) {
      const int64_t m = shapes.at(i, 0), n = shapes.at(i, 1), k = shapes.at(i, 2);
      EW_REQUIRE(m >= 0 && n >= 0 && k >= 0, kOp, ": shapes[", i, "] must be >= 0");
      av.push_back(transpose_a ? MatrixView<const T>{at(i, 0), k, m} : MatrixView<const T>{at(i, 0), m, k});
      bv.push_back(transpose_b ? MatrixView<const T>{at(i, 1), n, k} : MatrixView<const T>{at(i, 1), k, n});
      ov.push_back({at(i, 2), m, n});
    }
    Context ctx;
    py::gil_scoped_release release;
    grouped_matmul<T>(av, bv, ov, ctx, {transpose_a, transpose_b});
  };
  if (dtype == "float32") run(float{});
  else if (dtype == "float64") run(double{});
  else if (dtype == "bfloat16") run(BFloat16{});
  else EW_REQUIRE(false, kOp, ": dtype must be float32, float64 or bfloat16 (got ", dtype, ")");
}

}  // namespace

void register_segment_matmul(py::module_& m) {
  m.def("segment_matmul", &segment_matmul_py, py::arg("x"), py::arg("ptr"), py::arg("weight"), py::kw_only(),
        py::arg("transpose_weight") = false, py::arg("stream") = py::none(),
        R"doc(Typed matrix product: out[r] = x[r] @ weight[t] for r in ptr[t]:ptr[t+1].

x: float32, float64 or bfloat16 (accumulated in float) [N, K]. ptr: host integer array [T + 1] (ptr[0] == 0,
nondecreasing, ptr[T] == N). weight: [T, K, M] of x's dtype ([T, M, K] with
transpose_weight, which multiplies by weight[t]^T: the input gradient).
Returns out [N, M] on x's device.)doc");
  m.def("segment_matmul_weight_grad", &segment_matmul_weight_grad_py, py::arg("x"), py::arg("ptr"),
        py::arg("grad_out"), py::kw_only(), py::arg("stream") = py::none(),
        R"doc(The weight gradient of segment_matmul: grad_weight[t] = x[ptr[t]:ptr[t+1]]^T @ grad_out[ptr[t]:ptr[t+1]].

x: [N, K], grad_out: [N, M] of x's dtype, ptr as in segment_matmul.
Returns grad_weight [T, K, M] (zeros for a type without rows).)doc");
  m.def("grouped_matmul", &grouped_matmul_py, py::arg("inputs"), py::arg("others"), py::kw_only(),
        py::arg("transpose_a") = false, py::arg("transpose_b") = false, py::arg("stream") = py::none(),
        R"doc(Independent products in one call: out[i] = op(inputs[i]) @ op(others[i]).

inputs, others: sequences of one length of 2-D float32, float64 or bfloat16 arrays, one dtype and
device; op transposes when transpose_a / transpose_b. Returns a list of outputs.)doc");
  m.def("grouped_matmul_at", &grouped_matmul_at_py, py::arg("addresses"), py::arg("shapes"), py::arg("dtype"),
        py::kw_only(), py::arg("transpose_a") = false, py::arg("transpose_b") = false,
        R"doc(Internal: grouped_matmul on host memory given by address (edgewise.torch's CPU path).

addresses: int64 [P, 3] (a, b, out) of live, C-contiguous host arrays the caller keeps
alive; shapes: int64 [P, 3] (m, n, k); dtype: "float32", "float64" or "bfloat16".
Writes out[i] = op(a[i]) @ op(b[i]). Shapes and overlaps are checked; addresses are not.)doc");
}

}  // namespace edgewise::python
