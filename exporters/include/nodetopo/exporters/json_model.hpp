// The full model as JSON (`topo dump --format json`). Field by field in docs/schema.md.
#pragma once

#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include <nodetopo/topology/diagnostics.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::exporters {

/// Version of the JSON model. Bumped on any incompatible change (renamed or retyped field).
inline constexpr int kModelSchemaVersion = 1;

/// The model as a JSON value: {"schema_version", "machine" (nested tree), "links", "relations"
/// (the device matrix of `topo matrix`), "probes"}.
/// Deterministic: same topology, same bytes.
nlohmann::ordered_json model_to_json(const Topology& topology,
                                     std::span<const ProbeReport> reports);

/// model_to_json() serialised with two-space indentation and a final newline.
std::string render_json_model(const Topology& topology, std::span<const ProbeReport> reports);

}  // namespace nodetopo::exporters
