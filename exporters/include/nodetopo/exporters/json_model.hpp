// The full model as JSON (`topo dump --format json`). Field by field in docs/schema.md.
#pragma once

#include <span>
#include <string>

#include <nodetopo/topology/diagnostics.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::exporters {

/// Version of the JSON model. Bumped on any incompatible change (renamed or retyped field).
inline constexpr int kModelSchemaVersion = 1;

/// The model as JSON: {"schema_version", "machine" (nested tree), "links", "relations" (the device
/// matrix of `topo matrix`), "probes"}, two-space indented, with a final newline. Deterministic:
/// same topology, same bytes.
std::string render_json_model(const Topology& topology, std::span<const ProbeReport> reports);

}  // namespace nodetopo::exporters
