// JSON output files (see json_file.hpp).
#include "edgewise/cli/json_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace edgewise::cli {

void write_json_file(const std::string& path, const nlohmann::ordered_json& value) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
  out << value.dump(1) << '\n';
  out.close();
  if (!out) throw std::runtime_error("writing '" + path + "' failed: " + std::strerror(errno));
}

}  // namespace edgewise::cli
