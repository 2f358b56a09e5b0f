// The one conversion layer between Python arrays and Edgewise views, used by every
// binding: NumPy arrays (and array-likes) and any DLPack object (PyTorch, CuPy, JAX,
// NumPy's own __dlpack__, ...) in; results out in the caller's framework.
//
// Inputs (Call::array and friends):
//  - NumPy arrays and array-likes (lists, scalars): used without a copy when
//    C-contiguous with the dtype the op needs; otherwise converted once (the
//    NumPy behaviour the bindings always had).
//  - A CPU DLPack object: its capsule is consumed and viewed as a NumPy array
//    (no copy), which then follows the NumPy rule above: zero-copy when dtype and
//    layout fit, one documented copy otherwise (e.g. a transposed torch tensor).
//    A dtype NumPy lacks (bfloat16) is borrowed as it is, like a CUDA array: it must
//    be C-contiguous and of the dtype the op needs, never converted.
//  - A CUDA DLPack object (kDLCUDA): borrowed as it is, never copied or cast: it
//    must be C-contiguous and of the dtype the op needs, else ValueError naming the
//    argument. The capsule is requested on the caller's current stream (torch:
//    torch.cuda.current_stream(), CuPy: cupy.cuda.get_current_stream(), others: the
//    legacy default stream) through __dlpack__(stream=...), and the op runs on that
//    same stream (Call::context()). A binding's `stream` argument (Call::use_stream)
//    names another: the inputs are then requested, and the op run, on it.
//  - Any other device, an object that is no array, or a failing __dlpack__ (a
//    torch meta tensor, a tensor that requires grad) -> ValueError/TypeError naming
//    the argument. All arrays of one call must be on one device (mixed devices are
//    an error, not a copy).
//
// Outputs (Call::empty + Call::result): allocated by us on the inputs' device — a
// NumPy array on CPU (a CPU DeviceArray for bfloat16, which NumPy lacks), an
// edgewise._edgewise.DeviceArray (exposing __dlpack__ / __dlpack_device__) on CUDA —
// and handed to the caller's framework: the
// `from_dlpack` of the top-level module of the first non-NumPy input's type
// (torch.from_dlpack for torch tensors, cupy.from_dlpack for CuPy, ...), which
// wraps our buffer without a copy. NumPy inputs (or a producer whose module has no
// from_dlpack) get the NumPy array (CPU) or the DeviceArray (CUDA) itself.
#pragma once

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/device.hpp"
#include "edgewise/kernels/common/half.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise::python {

namespace py = pybind11;

// The DLPack dtype of T.
template <class T>
constexpr DLDataType dl_dtype_of() {
  if constexpr (std::is_same_v<T, Half>) {
    return {static_cast<uint8_t>(kDLFloat), 16, 1};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return {static_cast<uint8_t>(kDLBfloat), 16, 1};
  } else if constexpr (std::is_floating_point_v<T>) {
    return {static_cast<uint8_t>(kDLFloat), static_cast<uint8_t>(8 * sizeof(T)), 1};
  } else if constexpr (std::is_signed_v<T>) {
    return {static_cast<uint8_t>(kDLInt), static_cast<uint8_t>(8 * sizeof(T)), 1};
  } else {
    return {static_cast<uint8_t>(kDLUInt), static_cast<uint8_t>(8 * sizeof(T)), 1};
  }
}

// "float32", "int64", ... ("bfloat16", "complex64", "dtype(code=..)" for the rest).
std::string dtype_name(DLDataType dtype);

// One input or output array of a call: a C-contiguous block on one device.
struct Array {
  py::object owner;  // keeps `data` alive: a NumPy array, a DLPack capsule or a DeviceArray
  void* data = nullptr;
  std::vector<int64_t> shape;
  DLDataType dtype{};
  Device device{};

  int ndim() const { return static_cast<int>(shape.size()); }
  int64_t size() const;
  template <class T>
  bool is() const {
    constexpr DLDataType want = dl_dtype_of<T>();
    return dtype.code == want.code && dtype.bits == want.bits && dtype.lanes == want.lanes;
  }
  bool is_integer() const { return dtype.code == kDLInt || dtype.code == kDLUInt; }
  std::string dtype_str() const { return dtype_name(dtype); }

  // 1-D as a vector; 1-D or 2-D as a [rows, cols] matrix (1-D: cols = 1). The element
  // type must be the array's (checked).
  template <class T>
  VectorView<const T> vector(const char* op, const char* name) const {
    check_type<T>(op, name);
    EW_REQUIRE(ndim() == 1, op, ": ", name, " must be 1-D (got ", ndim(), "-D)");
    return {static_cast<const T*>(data), shape[0], device};
  }
  template <class T>
  MatrixView<const T> matrix(const char* op, const char* name) const {
    check_type<T>(op, name);
    EW_REQUIRE(ndim() == 1 || ndim() == 2, op, ": ", name, " must be 1-D or 2-D (got ", ndim(), "-D)");
    return {static_cast<const T*>(data), shape[0], ndim() == 2 ? shape[1] : 1, device};
  }
  template <class T>
  VectorView<T> mutable_vector() const {
    return {static_cast<T*>(data), size(), device};
  }
  template <class T>
  MatrixView<T> mutable_matrix() const {
    return {static_cast<T*>(data), ndim() >= 1 ? shape[0] : 1, ndim() == 2 ? shape[1] : 1, device};
  }

 private:
  template <class T>
  void check_type(const char* op, const char* name) const {
    EW_REQUIRE(is<T>(), op, ": ", name, " must be ", dtype_name(dl_dtype_of<T>()), " (got ", dtype_str(), ")");
  }
};

// What one binding call collects about its arguments: their common device, the
// caller's framework and stream, and the Context the op runs with.
class Call {
 public:
  explicit Call(const char* op) : op_(op) {}
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  const char* op() const { return op_; }

  // The binding's `stream` argument, before any array is read. None: the caller's
  // current stream in its framework. Otherwise a CUDA stream in the DLPack
  // convention — an int, 0 or 1 the legacy default stream, 2 the per-thread default
  // stream, larger a cudaStream_t — or an object exposing one (torch.cuda.Stream's
  // cuda_stream, CuPy's Stream.ptr, __cuda_stream__()). TypeError / ValueError
  // naming `stream` for anything else; a stream for CPU arrays is a ValueError
  // (raised by context()).
  void use_stream(py::handle stream);

  // Any dtype, C-contiguous (NumPy/CPU: one copy when it is not).
  Array array(py::handle object, const char* name);
  // Exactly T. NumPy/CPU inputs of another dtype are converted when `convert` (one
  // copy), else rejected; CUDA inputs are never converted.
  template <class T>
  Array array_of(py::handle object, const char* name, bool convert) {
    return typed(object, name, dl_dtype_of<T>(), convert);
  }
  // Any integer array as int64 (NumPy/CPU: other integer dtypes converted once).
  Array int64s(py::handle object, const char* name);
  // An array of this call (from array()) as int64, under the rules of int64s.
  Array to_int64(Array array, const char* name);
  // An index array kept as int32 or int64 (NumPy/CPU: other integer dtypes -> int64).
  Array indices(py::handle object, const char* name);
  // None -> nullopt.
  std::optional<Array> optional_array(py::handle object, const char* name);

  // The device of the arrays seen so far (CPU before any).
  Device device() const { return device_.value_or(Device::cpu()); }
  // The Context the op runs with: the arrays' device, on the caller's stream.
  Context& context();

  // A new uninitialised output of `shape` on the call's device.
  template <class T>
  Array empty(std::vector<int64_t> shape) {
    return empty_bytes(std::move(shape), dl_dtype_of<T>());
  }
  // The output in the caller's framework (see the file comment).
  py::object result(const Array& out);

  // For ops that run on CPU only: `object` as a NumPy array (a CPU DLPack object is
  // viewed without a copy; dtype/layout rules are then the caller's, as for NumPy
  // input). A CUDA array raises ValueError naming the argument.
  py::array numpy(py::handle object, const char* name);
  // `out` (a NumPy array, or a tuple holding some) in the caller's framework.
  py::object result(py::object out);

 private:
  Array typed(py::handle object, const char* name, DLDataType want, bool convert);
  Array from_numpy(const py::array& array, const char* name, std::optional<DLDataType> want, bool convert);
  Array from_dlpack(py::handle object, const char* name, std::optional<DLDataType> want, bool convert);
  Array convert_any(py::handle object, const char* name, std::optional<DLDataType> want, bool convert);
  void note_device(Device device, const char* name);
  void note_framework(py::handle object);
  Array empty_bytes(std::vector<int64_t> shape, DLDataType dtype);

  const char* op_;
  std::optional<Device> device_;
  const char* device_arg_ = nullptr;
  bool framework_seen_ = false;
  std::string framework_;      // top-level module of the first non-NumPy input ("" for none)
  py::object from_dlpack_fn_;  // its from_dlpack, or None
  intptr_t stream_ = 0;        // the caller's CUDA stream (0: legacy default)
  bool stream_known_ = false;
  bool stream_given_ = false;  // by use_stream
};

// For bindings that run on CPU only (Graph, samplers, datasets): any NumPy array,
// array-like or CPU DLPack object as a NumPy array (no copy; the caller's dtype and
// layout rules apply as before). A CUDA tensor raises ValueError naming the argument.
py::array as_numpy(py::handle object, const char* op, const char* name);

// A host buffer we own as a DLPack capsule ("dltensor", C-contiguous, CPU): `keep`
// holds the memory until the consumer (torch.from_dlpack, np.from_dlpack) releases
// it, so results reach the caller without a copy.
py::capsule host_dlpack(std::shared_ptr<void> keep, void* data, std::vector<int64_t> shape, DLDataType dtype);

// A 1-D int64 capsule that owns `values` (moved in, not copied).
inline py::capsule int64_capsule(std::vector<int64_t>&& values) {
  auto keep = std::make_shared<std::vector<int64_t>>(std::move(values));
  void* data = keep->data();
  const int64_t n = static_cast<int64_t>(keep->size());
  return host_dlpack(keep, data, {n}, dl_dtype_of<int64_t>());
}

// Registers edgewise._edgewise.DeviceArray (the DLPack producer of CUDA outputs).
void register_array_interop(py::module_& m);

// For the length of one kernel call whose outputs this binding just allocated: the
// context's outputs_fresh set (the kernel may check inputs while it writes), restored
// after (the per-thread context is shared with calls that write into caller-owned arrays).
class FreshOutputs {
 public:
  explicit FreshOutputs(Context& ctx) : ctx_(ctx), saved_(ctx.outputs_fresh) { ctx.outputs_fresh = true; }
  ~FreshOutputs() { ctx_.outputs_fresh = saved_; }
  FreshOutputs(const FreshOutputs&) = delete;
  FreshOutputs& operator=(const FreshOutputs&) = delete;

 private:
  Context& ctx_;
  bool saved_;
};

}  // namespace edgewise::python
