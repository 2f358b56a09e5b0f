// Shared libraries opened on first use (dlopen) instead of at load time. cuBLAS and
// cuSPARSE map about a gigabyte of address space when a process starts: linked
// directly, every `import edgewise` would pay for them, GPU or not (and fail under a
// small `ulimit -v`). The CUDA code calls them through EW_LAZY_FUNCTION instead.
#pragma once

namespace edgewise::detail {

// The address of `symbol` in the shared library `soname` (dlopen's search path), or,
// when that is not found, in `fallback_path` (the file the build found; may be
// empty). The library is opened on the first request and stays open. Thread-safe.
// Throws std::runtime_error naming the library and the symbol when either is missing.
void* lazy_symbol(const char* soname, const char* fallback_path, const char* symbol);

}  // namespace edgewise::detail

// The function `name` (declared by the library's header) from the library of
// `soname` / `fallback_path`, resolved once per call site: EW_LAZY_FUNCTION(
// EW_CUBLAS_SONAME, EW_CUBLAS_PATH, cublasCreate)(&handle). decltype is unevaluated,
// so the object file references no symbol of the library and the build links none.
#define EW_LAZY_FUNCTION(soname, fallback_path, name)                                                   \
  ([]() {                                                                                               \
    static const auto function = reinterpret_cast<decltype(&name)>(                                     \
        ::edgewise::detail::lazy_symbol(soname, fallback_path, #name));                                 \
    return function;                                                                                    \
  }())
