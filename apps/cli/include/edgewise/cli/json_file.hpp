// JSON output files of the Edgewise programs, through nlohmann-json: NaN and
// infinities are written as null, strings are escaped.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace edgewise::cli {

// Writes `value` (indented) to `path`; throws std::runtime_error naming the path
// when the file cannot be written completely.
void write_json_file(const std::string& path, const nlohmann::ordered_json& value);

}  // namespace edgewise::cli
