// The conversion layer of array_interop.hpp: NumPy / DLPack inputs, outputs in the
// caller's framework, and DeviceArray, the DLPack producer of CUDA outputs.
#include "array_interop.hpp"

#include <functional>
#include <map>
#include <memory>
#include <utility>

#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/common/memory.hpp"

namespace edgewise::python {

namespace {

constexpr uint8_t kDLBoolCode = 6;  // kDLBool in DLPack >= 0.8 (the installed header may predate it)

// What the DLPack protocol's stream argument means for the legacy default stream.
constexpr intptr_t kDLPackLegacyStream = 1;

DLDataType numpy_dtype_to_dl(const py::dtype& dtype) {
  const auto bits = static_cast<uint8_t>(8 * dtype.itemsize());
  switch (dtype.kind()) {
    case 'f': return {static_cast<uint8_t>(kDLFloat), bits, 1};
    case 'i': return {static_cast<uint8_t>(kDLInt), bits, 1};
    case 'u': return {static_cast<uint8_t>(kDLUInt), bits, 1};
    case 'b': return {kDLBoolCode, bits, 1};
    case 'c': return {static_cast<uint8_t>(kDLComplex), bits, 1};
    default: return {255, bits, 1};
  }
}

// The NumPy dtype of a DLPack dtype, or None when NumPy has no such dtype.
py::object dl_to_numpy_dtype(DLDataType dtype) {
  if (dtype.lanes != 1) return py::none();
  std::string name;
  switch (dtype.code) {
    case kDLFloat: name = "float"; break;
    case kDLInt: name = "int"; break;
    case kDLUInt: name = "uint"; break;
    case kDLComplex: name = "complex"; break;
    case kDLBoolCode: return dtype.bits == 8 ? py::object(py::dtype("bool")) : py::object(py::none());
    default: return py::none();
  }
  try {
    return py::dtype(name + std::to_string(dtype.bits));
  } catch (const std::exception&) {
    return py::none();
  }
}

std::string device_name(const DLDevice& device) {
  switch (device.device_type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda:" + std::to_string(device.device_id);
    case kDLCUDAHost: return "cuda_host";
    case kDLROCM: return "rocm:" + std::to_string(device.device_id);
    default: return "device type " + std::to_string(static_cast<int>(device.device_type));
  }
}

// A consumed DLPack capsule: `owner` calls the producer's deleter when the last
// reference goes (the protocol makes the consumer responsible once it renames the
// capsule "used_dltensor").
struct Consumed {
  py::capsule owner;
  DLTensor* tensor = nullptr;
};

void delete_managed(void* pointer) {
  auto* managed = static_cast<DLManagedTensor*>(pointer);
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

Consumed consume_capsule(py::object capsule, const char* op, const char* name) {
  PyObject* raw = capsule.ptr();
  if (!PyCapsule_IsValid(raw, "dltensor")) {
    throw py::type_error(detail::concat(op, ": ", name,
                                        ": __dlpack__() did not return a DLPack capsule named \"dltensor\""));
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(raw, "dltensor"));
  if (PyCapsule_SetName(raw, "used_dltensor") != 0) throw py::error_already_set();
  Consumed consumed{py::capsule(managed, &delete_managed), &managed->dl_tensor};
  return consumed;
}

// Whether a DLPack tensor is C-contiguous (size-1 dimensions may have any stride, and
// an array without elements any strides at all).
bool is_c_contiguous(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] == 0) return true;
  }
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

// The caller's current CUDA stream in the given framework (0: the legacy default).
intptr_t current_stream(const std::string& framework, int device_index) {
  try {
    if (framework == "torch") {
      py::object torch = py::module_::import("torch");
      return torch.attr("cuda").attr("current_stream")(device_index).attr("cuda_stream").cast<intptr_t>();
    }
    if (framework == "cupy") {
      py::object cupy = py::module_::import("cupy");
      return cupy.attr("cuda").attr("get_current_stream")().attr("ptr").cast<intptr_t>();
    }
  } catch (const py::error_already_set&) {
    // No CUDA in that framework here: the legacy default stream.
  }
  return 0;
}

}  // namespace

py::capsule host_dlpack(std::shared_ptr<void> keep, void* data, std::vector<int64_t> shape, DLDataType dtype) {
  struct Managed {
    DLManagedTensor tensor{};
    std::vector<int64_t> shape;
    std::shared_ptr<void> keep;
  };
  static int64_t empty_storage = 0;  // consumers want a pointer even for no elements
  auto* managed = new Managed{{}, std::move(shape), std::move(keep)};
  DLTensor& t = managed->tensor.dl_tensor;
  t.data = data != nullptr ? data : &empty_storage;
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(managed->shape.size());
  t.dtype = dtype;
  t.shape = managed->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  managed->tensor.manager_ctx = managed;
  managed->tensor.deleter = [](DLManagedTensor* self) { delete static_cast<Managed*>(self->manager_ctx); };
  PyObject* capsule = PyCapsule_New(&managed->tensor, "dltensor", [](PyObject* self) {
    if (PyCapsule_IsValid(self, "dltensor")) delete_managed(PyCapsule_GetPointer(self, "dltensor"));
  });
  if (capsule == nullptr) {
    managed->tensor.deleter(&managed->tensor);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

namespace {

// An output buffer exposed through DLPack: CUDA outputs, and CPU outputs of a dtype
// NumPy lacks (bfloat16).
class DeviceArray {
 public:
  DeviceArray(std::vector<int64_t> shape, DLDataType dtype, Device device, intptr_t stream)
      : shape_(std::move(shape)), dtype_(dtype), device_(device), stream_(stream) {
    int64_t count = 1;
    for (int64_t extent : shape_) count *= extent;
    storage_ = std::make_shared<Buffer<std::byte>>(count * (dtype.bits / 8) * dtype.lanes, device);
  }

  void* data() const { return storage_->data(); }
  const std::vector<int64_t>& shape() const { return shape_; }

  py::tuple dlpack_device() const {
    return py::make_tuple(static_cast<int>(device_.is_cuda() ? kDLCUDA : kDLCPU), device_.is_cuda() ? device_.index : 0);
  }

  // The producer side of the protocol. Our results were queued on stream_; a consumer
  // on another stream gets them after a host-side synchronisation of stream_ (simple
  // and always correct; the torch path never needs it, as it hands us its own stream).
  py::capsule dlpack(const py::object& stream, const py::object& /*max_version*/, const py::object& dl_device,
                     const py::object& copy) const {
    if (!copy.is_none() && copy.cast<bool>()) {
      throw py::buffer_error("DeviceArray.__dlpack__: copy=True is not supported (pass copy=None or False)");
    }
    const int own_type = static_cast<int>(device_.is_cuda() ? kDLCUDA : kDLCPU);
    const int own_index = device_.is_cuda() ? device_.index : 0;
    if (!dl_device.is_none()) {
      const auto wanted = dl_device.cast<py::tuple>();
      if (wanted[0].cast<int>() != own_type || wanted[1].cast<int>() != own_index) {
        throw py::buffer_error("DeviceArray.__dlpack__: the array lives on " + device_.str() +
                               " and cannot be exported to another device");
      }
    }
    if (device_.is_cuda() && !stream.is_none()) {
      intptr_t consumer = stream.cast<intptr_t>();
      if (consumer == kDLPackLegacyStream) consumer = 0;
      if (consumer != -1 && consumer != stream_) {
        py::gil_scoped_release release;
        synchronize(device_, reinterpret_cast<void*>(stream_));
      }
    }
    struct Managed {
      DLManagedTensor tensor{};
      std::vector<int64_t> shape;
      std::shared_ptr<Buffer<std::byte>> keep;
    };
    auto* managed = new Managed{{}, shape_, storage_};
    DLTensor& t = managed->tensor.dl_tensor;
    t.data = storage_->data();
    t.device = {static_cast<DLDeviceType>(own_type), own_index};
    t.ndim = static_cast<int32_t>(shape_.size());
    t.dtype = dtype_;
    t.shape = managed->shape.data();
    t.strides = nullptr;  // C-contiguous
    t.byte_offset = 0;
    managed->tensor.manager_ctx = managed;
    managed->tensor.deleter = [](DLManagedTensor* self) { delete static_cast<Managed*>(self->manager_ctx); };
    PyObject* capsule = PyCapsule_New(&managed->tensor, "dltensor", [](PyObject* self) {
      // Still named "dltensor": nobody consumed it, so the deleter is ours to call.
      if (PyCapsule_IsValid(self, "dltensor")) {
        delete_managed(PyCapsule_GetPointer(self, "dltensor"));
      }
    });
    if (capsule == nullptr) {
      managed->tensor.deleter(&managed->tensor);
      throw py::error_already_set();
    }
    return py::reinterpret_steal<py::capsule>(capsule);
  }

 private:
  std::vector<int64_t> shape_;
  DLDataType dtype_;
  Device device_;
  intptr_t stream_;
  std::shared_ptr<Buffer<std::byte>> storage_;
};

// Calls __dlpack_device__ (when present) and __dlpack__, turning the producer's
// errors into ValueError naming the argument.
Consumed export_dlpack(py::handle object, const char* op, const char* name,
                       const std::function<intptr_t(int)>& stream_for) {
  try {
    std::optional<py::object> stream_arg;
    if (py::hasattr(object, "__dlpack_device__")) {
      const auto device = object.attr("__dlpack_device__")().cast<py::tuple>();
      const int type = device[0].cast<int>();
      if (type == kDLCUDA) {
        const intptr_t stream = stream_for(device[1].cast<int>());
        stream_arg = py::int_(stream == 0 ? kDLPackLegacyStream : stream);
      }
    }
    py::object capsule = stream_arg ? object.attr("__dlpack__")(py::arg("stream") = *stream_arg)
                                    : object.attr("__dlpack__")();
    return consume_capsule(std::move(capsule), op, name);
  } catch (py::error_already_set& e) {
    throw py::value_error(detail::concat(op, ": ", name, " could not be read through DLPack: ", e.what()));
  }
}

// A CPU DLPack tensor viewed as a NumPy array (no copy; the view keeps the capsule).
py::array numpy_view(const Consumed& consumed, const char* op, const char* name) {
  const DLTensor& t = *consumed.tensor;
  py::object dtype = dl_to_numpy_dtype(t.dtype);
  if (dtype.is_none()) {
    throw py::type_error(detail::concat(op, ": ", name, " has dtype ", dtype_name(t.dtype),
                                        ", which no Edgewise op takes"));
  }
  const auto itemsize = static_cast<int64_t>(py::dtype::from_args(dtype).itemsize());
  std::vector<py::ssize_t> shape(t.shape, t.shape + t.ndim);
  std::vector<py::ssize_t> strides(static_cast<size_t>(t.ndim));
  int64_t compact = itemsize;
  for (int d = t.ndim - 1; d >= 0; --d) {
    strides[d] = t.strides != nullptr ? t.strides[d] * itemsize : compact;
    compact *= t.shape[d];
  }
  auto* data = static_cast<char*>(t.data) + t.byte_offset;
  return py::array(py::dtype::from_args(dtype), shape, strides, data, consumed.owner);
}

}  // namespace

std::string dtype_name(DLDataType dtype) {
  std::string base;
  switch (dtype.code) {
    case kDLFloat: base = "float"; break;
    case kDLInt: base = "int"; break;
    case kDLUInt: base = "uint"; break;
    case kDLBfloat: base = "bfloat"; break;
    case kDLComplex: base = "complex"; break;
    case kDLBoolCode: return "bool";
    default: return "dtype(code=" + std::to_string(dtype.code) + ", bits=" + std::to_string(dtype.bits) + ")";
  }
  base += std::to_string(dtype.bits);
  if (dtype.lanes != 1) base += "x" + std::to_string(dtype.lanes);
  return base;
}

int64_t Array::size() const {
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  return n;
}

void Call::note_device(Device device, const char* name) {
  if (!device_) {
    device_ = device;
    device_arg_ = name;
    return;
  }
  EW_REQUIRE(*device_ == device, op_, ": ", name, " is on ", device.str(), " but ", device_arg_, " is on ",
             device_->str(), " (mixed devices are an error, not a copy)");
}

void Call::note_framework(py::handle object) {
  if (framework_seen_) return;
  framework_seen_ = true;
  const std::string module = py::str(py::type::of(object).attr("__module__"));
  framework_ = module.substr(0, module.find('.'));
  try {
    py::module_ package = py::module_::import(framework_.c_str());
    if (py::hasattr(package, "from_dlpack")) from_dlpack_fn_ = package.attr("from_dlpack");
  } catch (py::error_already_set&) {
    // A producer without an importable package: results stay NumPy / DeviceArray.
  }
}

Array Call::from_numpy(const py::array& array, const char* name, std::optional<DLDataType> want, bool convert) {
  const DLDataType have = numpy_dtype_to_dl(array.dtype());
  EW_REQUIRE(have.code != 255 || array.size() == 0, op_, ": ", name, " must be a numeric array (got dtype ",
             std::string(py::str(array.dtype())), ")");
  py::object numpy = py::module_::import("numpy");
  py::array contiguous;
  if (want && !(have.code == want->code && have.bits == want->bits)) {
    EW_REQUIRE(convert, op_, ": ", name, " must be ", dtype_name(*want), " (got ", dtype_name(have), ")");
    contiguous = numpy.attr("ascontiguousarray")(array, dl_to_numpy_dtype(*want));
  } else {
    contiguous = numpy.attr("ascontiguousarray")(array);
  }
  note_device(Device::cpu(), name);
  Array out;
  out.data = const_cast<void*>(contiguous.data());
  out.shape.assign(contiguous.shape(), contiguous.shape() + contiguous.ndim());
  out.dtype = numpy_dtype_to_dl(contiguous.dtype());
  out.device = Device::cpu();
  out.owner = std::move(contiguous);
  return out;
}

Array Call::from_dlpack(py::handle object, const char* name, std::optional<DLDataType> want, bool convert) {
  note_framework(object);
  Consumed consumed = export_dlpack(object, op_, name, [&](int index) {
    if (!stream_known_) {
      stream_ = current_stream(framework_, index);
      stream_known_ = true;
    }
    return stream_;
  });
  const DLTensor& t = *consumed.tensor;
  const bool host = t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost;
  // A host dtype NumPy has no name for (bfloat16) is borrowed as it is, like CUDA memory.
  if (host && !dl_to_numpy_dtype(t.dtype).is_none()) {
    return from_numpy(numpy_view(consumed, op_, name), name, want, convert);
  }
  if (!host && t.device.device_type != kDLCUDA) {
    throw py::value_error(detail::concat(op_, ": ", name, " is on ", device_name(t.device),
                                         "; Edgewise takes CPU and CUDA arrays"));
  }
  const Device device = host ? Device::cpu() : Device::cuda(t.device.device_id);
  const char* kind = host ? "bfloat16 arrays" : "CUDA arrays";
  note_device(device, name);
  if (want) {
    EW_REQUIRE(t.dtype.code == want->code && t.dtype.bits == want->bits && t.dtype.lanes == 1, op_, ": ", name,
               " must be ", dtype_name(*want), " (got ", dtype_name(t.dtype), "; ", kind, " are never converted)");
  }
  EW_REQUIRE(is_c_contiguous(t), op_, ": ", name, " must be C-contiguous (", kind,
             " are never copied; call .contiguous() first)");
  Array out;
  out.data = static_cast<char*>(t.data) + t.byte_offset;
  out.shape.assign(t.shape, t.shape + t.ndim);
  out.dtype = t.dtype;
  out.device = device;
  out.owner = std::move(consumed.owner);
  return out;
}

Array Call::convert_any(py::handle object, const char* name, std::optional<DLDataType> want, bool convert) {
  if (py::isinstance<py::array>(object)) {
    return from_numpy(py::reinterpret_borrow<py::array>(object), name, want, convert);
  }
  if (py::hasattr(object, "__dlpack__")) return from_dlpack(object, name, want, convert);
  py::array array = py::array::ensure(object);
  if (!array) {
    PyErr_Clear();
    throw py::type_error(detail::concat(op_, ": ", name,
                                        " must be an array (NumPy, or an object with __dlpack__), got ",
                                        std::string(py::str(py::type::of(object).attr("__name__")))));
  }
  return from_numpy(array, name, want, convert);
}

Array Call::array(py::handle object, const char* name) { return convert_any(object, name, std::nullopt, false); }

Array Call::typed(py::handle object, const char* name, DLDataType want, bool convert) {
  return convert_any(object, name, want, convert);
}

Array Call::int64s(py::handle object, const char* name) { return to_int64(array(object, name), name); }

Array Call::to_int64(Array a, const char* name) {
  EW_REQUIRE(a.is_integer() || a.size() == 0, op_, ": ", name, " must be an integer array (got dtype ", a.dtype_str(),
             ")");
  if (a.is<int64_t>()) return a;
  EW_REQUIRE(a.device.is_cpu(), op_, ": ", name, " must be int64 (got ", a.dtype_str(),
             "; CUDA arrays are never converted)");
  return from_numpy(py::reinterpret_borrow<py::array>(a.owner), name, dl_dtype_of<int64_t>(), true);
}

Array Call::indices(py::handle object, const char* name) {
  Array a = array(object, name);
  if (a.is<int32_t>()) return a;
  EW_REQUIRE(a.is_integer() || a.size() == 0, op_, ": ", name, " must be an integer array (got dtype ", a.dtype_str(),
             ")");
  if (a.is<int64_t>()) return a;
  EW_REQUIRE(a.device.is_cpu(), op_, ": ", name, " must be int32 or int64 (got ", a.dtype_str(),
             "; CUDA arrays are never converted)");
  return from_numpy(py::reinterpret_borrow<py::array>(a.owner), name, dl_dtype_of<int64_t>(), true);
}

std::optional<Array> Call::optional_array(py::handle object, const char* name) {
  if (object.is_none()) return std::nullopt;
  return array(object, name);
}

namespace {

// A `stream` argument's value as an int: the int itself, or what a stream object exposes.
py::object stream_value(py::handle stream) {
  if (py::isinstance<py::bool_>(stream)) return py::none();
  if (py::isinstance<py::int_>(stream)) return py::reinterpret_borrow<py::object>(stream);
  if (py::hasattr(stream, "__cuda_stream__")) {
    py::object exposed = stream.attr("__cuda_stream__")();
    if (py::isinstance<py::tuple>(exposed) && py::len(exposed) == 2) return exposed.cast<py::tuple>()[1];
    return py::none();
  }
  for (const char* attr : {"cuda_stream", "ptr"}) {
    if (py::hasattr(stream, attr)) return stream.attr(attr);
  }
  return py::none();
}

}  // namespace

void Call::use_stream(py::handle stream) {
  if (stream.is_none()) return;
  EW_REQUIRE(!device_, op_, ": use_stream must come before the arrays are read");
  const py::object value = stream_value(stream);
  if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value)) {
    throw py::type_error(detail::concat(
        op_, ": stream must be None, an int (a cudaStream_t; 0 or 1: the legacy default stream, 2: the per-thread "
             "default stream) or a CUDA stream object (torch.cuda.Stream, cupy.cuda.Stream), got ",
        std::string(py::str(py::type::of(stream).attr("__name__")))));
  }
  long long raw = 0;
  try {
    raw = value.cast<long long>();
  } catch (const py::cast_error&) {
    throw py::value_error(detail::concat(op_, ": stream (", std::string(py::str(value)), ") is out of range"));
  }
  EW_REQUIRE(raw >= 0, op_, ": stream (", raw,
             ") must be >= 0 (0 or 1: the legacy default stream, 2: the per-thread default stream, larger: a "
             "cudaStream_t)");
  stream_ = raw == kDLPackLegacyStream ? 0 : static_cast<intptr_t>(raw);
  stream_known_ = true;
  stream_given_ = true;
}

Context& Call::context() {
  if (device().is_cpu()) {
    EW_REQUIRE(!stream_given_, op_, ": stream is for CUDA arrays, and the arrays of this call are on cpu "
                                    "(pass stream=None)");
    return default_context(Device::cpu());
  }
  // One Context per (device, stream) and host thread, kept: its scratch is reused by
  // the next op on that stream (stream order makes that safe) instead of being freed
  // (cudaFree synchronises the device) at the end of every call.
  thread_local std::map<std::pair<int, intptr_t>, std::unique_ptr<Context>> contexts;
  auto& ctx = contexts[{device().index, stream_}];
  if (!ctx) ctx = std::make_unique<Context>(device(), reinterpret_cast<void*>(stream_));
  return *ctx;
}

Array Call::empty_bytes(std::vector<int64_t> shape, DLDataType dtype) {
  Array out;
  out.shape = std::move(shape);
  out.dtype = dtype;
  out.device = device();
  if (out.device.is_cpu() && !dl_to_numpy_dtype(dtype).is_none()) {
    const py::dtype numpy_dtype = py::dtype::from_args(dl_to_numpy_dtype(dtype));
    const std::vector<py::ssize_t> shape_(out.shape.begin(), out.shape.end());
    int64_t count = 1;
    for (int64_t n : out.shape) count *= n;
    const auto bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(numpy_dtype.itemsize());
    // Large outputs come from the host block cache (memory.hpp): a fresh block from
    // mmap would page-fault and be zeroed page by page on every call (9 ms of a
    // 128 MB spmm output here), a cached one is reused as is.
    void* block = bytes > 0 ? device_allocate(bytes, Device::cpu()) : nullptr;
    py::array array = block != nullptr
                          ? py::array(numpy_dtype, shape_, {}, block,
                                      py::capsule(block, [](void* p) { device_free(p, Device::cpu()); }))
                          : py::array(numpy_dtype, shape_);
    out.data = array.mutable_data();
    out.owner = std::move(array);
  } else {
    py::object holder = py::cast(DeviceArray(out.shape, dtype, out.device, stream_));
    out.data = holder.cast<const DeviceArray&>().data();
    out.owner = std::move(holder);
  }
  return out;
}

py::object Call::result(const Array& out) {
  if (from_dlpack_fn_ && !from_dlpack_fn_.is_none()) return from_dlpack_fn_(out.owner);
  return out.owner;
}

py::array Call::numpy(py::handle object, const char* name) {
  if (!py::isinstance<py::array>(object) && py::hasattr(object, "__dlpack__")) note_framework(object);
  py::array array = as_numpy(object, op_, name);
  note_device(Device::cpu(), name);
  return array;
}

py::object Call::result(py::object out) {
  if (!from_dlpack_fn_ || from_dlpack_fn_.is_none()) return out;
  if (py::isinstance<py::tuple>(out)) {
    py::tuple items = py::reinterpret_borrow<py::tuple>(out);
    py::tuple converted(items.size());
    for (size_t i = 0; i < items.size(); ++i) converted[i] = result(py::reinterpret_borrow<py::object>(items[i]));
    return converted;
  }
  if (py::isinstance<py::array>(out)) return from_dlpack_fn_(out);
  return out;
}

py::array as_numpy(py::handle object, const char* op, const char* name) {
  if (py::isinstance<py::array>(object)) return py::reinterpret_borrow<py::array>(object);
  if (py::hasattr(object, "__dlpack__")) {
    Consumed consumed = export_dlpack(object, op, name, [](int) { return intptr_t{0}; });
    const DLTensor& t = *consumed.tensor;
    if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost) {
      throw py::value_error(detail::concat(op, ": ", name, " is on ", device_name(t.device), ", but ", op,
                                           " takes CPU arrays (move it to the CPU first, e.g. .cpu())"));
    }
    return numpy_view(consumed, op, name);
  }
  py::array array = py::array::ensure(object);
  if (!array) {
    PyErr_Clear();
    throw py::type_error(detail::concat(op, ": ", name,
                                        " must be an array (NumPy, or an object with __dlpack__), got ",
                                        std::string(py::str(py::type::of(object).attr("__name__")))));
  }
  return array;
}

void register_array_interop(py::module_& m) {
  py::class_<DeviceArray>(m, "DeviceArray", R"doc(A CUDA result buffer owned by Edgewise, exported through DLPack.

Ops return these for CUDA inputs whose framework has no from_dlpack; frameworks
import them without a copy (torch.from_dlpack(a), cupy.from_dlpack(a)).)doc")
      .def("__dlpack__", &DeviceArray::dlpack, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
           "The DLPack capsule of this buffer (consumers pass their stream; see the DLPack protocol).")
      .def("__dlpack_device__", &DeviceArray::dlpack_device, "(kDLCUDA, device index).")
      .def_property_readonly(
          "shape", [](const DeviceArray& a) { return py::tuple(py::cast(a.shape())); }, "The array's shape (a tuple).");

  m.def(
      "memory_stats",
      [](const std::string& device) {
        Device d;
        try {
          d = Device::parse(device);
        } catch (const std::invalid_argument& e) {
          throw py::value_error(std::string("memory_stats: device: ") + e.what());
        }
        const MemoryStats stats = edgewise::memory_stats(d);
        py::dict out;
        out["current_bytes"] = stats.current_bytes;
        out["peak_bytes"] = stats.peak_bytes;
        out["cached_bytes"] = stats.cached_bytes;
        return out;
      },
      py::arg("device") = "cpu",
      R"doc(Bytes Edgewise holds on a device: current_bytes (live buffers, including the
CPU outputs ops return, until those arrays are freed), peak_bytes, cached_bytes
(freed host blocks kept for reuse: large CPU outputs come from that cache instead of
page-faulting fresh memory on every call). device: "cpu", "cuda" or "cuda:N".)doc");
  m.def("empty_host_cache", &edgewise::empty_host_cache,
        "Returns the cached host blocks (see memory_stats) to the system.");
  m.def(
      "host_buffer",
      [](int64_t nbytes) {
        EW_REQUIRE(nbytes >= 0, "host_buffer: nbytes (", nbytes, ") must be >= 0");
        const std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(nbytes)};
        void* block = nbytes > 0 ? device_allocate(static_cast<std::size_t>(nbytes), Device::cpu()) : nullptr;
        if (block == nullptr) return py::array(py::dtype("uint8"), shape);
        return py::array(py::dtype("uint8"), shape, {}, block,
                         py::capsule(block, [](void* p) { device_free(p, Device::cpu()); }));
      },
      py::arg("nbytes"),
      R"doc(An uninitialised uint8 NumPy array of nbytes (64-byte aligned) from Edgewise's host
block cache, the memory large CPU outputs come from: a buffer reused across calls
is not page-faulted in again (edgewise.torch keeps its large temporaries there).)doc");
}

}  // namespace edgewise::python
