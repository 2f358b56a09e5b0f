// lazy_symbol: dlopen on first use, one handle per library for the process's life.
#include "edgewise/kernels/common/lazy_library.hpp"

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace edgewise::detail {

void* lazy_symbol(const char* soname, const char* fallback_path, const char* symbol) {
  static std::mutex mutex;
  static std::map<std::string, void*> libraries;  // never closed: function pointers outlive every caller
  std::lock_guard<std::mutex> lock(mutex);
  void*& library = libraries[soname];
  if (!library) {
    library = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
    std::string first_error = library ? "" : dlerror();
    if (!library && fallback_path && *fallback_path) library = dlopen(fallback_path, RTLD_LAZY | RTLD_LOCAL);
    if (!library)
      throw std::runtime_error(std::string("cannot load ") + soname + " (needed for " + symbol + "): " +
                               first_error + (fallback_path && *fallback_path
                                                  ? std::string("; nor ") + fallback_path + ": " + dlerror()
                                                  : std::string()));
  }
  dlerror();  // clear
  void* address = dlsym(library, symbol);
  if (!address) throw std::runtime_error(std::string(soname) + " has no symbol " + symbol + ": " + dlerror());
  return address;
}

}  // namespace edgewise::detail
