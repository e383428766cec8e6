// A small, deterministic JSON -> YAML renderer for the Kubernetes objects nodetopo prints.
//
// Block style as kubectl prints it (sequence items at the indentation of their key), object keys
// in the order of the ordered_json, strings left plain only when no YAML 1.1/1.2 reader could take
// them for anything but a string, otherwise double-quoted with JSON escapes (valid YAML). Same
// input, same bytes: no dependence on locale or library version.
#pragma once

#include <span>
#include <string>

#include <nlohmann/json.hpp>

namespace nodetopo::exporters {

/// One YAML document (no "---" marker), ending with a newline.
std::string to_yaml(const nlohmann::ordered_json& value);

/// A multi-document stream: each document preceded by "---".
std::string to_yaml_stream(std::span<const nlohmann::ordered_json> documents);

}  // namespace nodetopo::exporters
