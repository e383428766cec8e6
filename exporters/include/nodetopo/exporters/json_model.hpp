// The full model as JSON (`topo dump --format json`). Field by field in docs/schema.md.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include <nodetopo/topology/diagnostics.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::exporters {

/// Version of the JSON model. Bumped on any incompatible change (renamed or retyped field).
inline constexpr int kModelSchemaVersion = 1;

/// The model as JSON: {"schema_version", "machine" (nested tree), "links", "relations" (the device
/// matrix of `topo matrix`), "probes"}, two-space indented, with a final newline. Deterministic:
/// same topology, same bytes.
std::string render_json_model(const Topology& topology, std::span<const ProbeReport> reports);

/// Receives a streamed document piece by piece, in order; the pieces together are the document.
/// A piece is valid only during the call. The exporter does no I/O: the caller's sink does, and
/// keeps its own error (the exporter writes on regardless, so a sink that failed ignores the rest).
using TextSink = std::function<void(std::string_view piece)>;

/// The same bytes as render_json_model(), handed to `sink` in pieces of about 16 KiB as they are
/// written, so the whole document is never held: a 64-GPU node's model is 2.4 MB, more than a
/// quarter of `topo dump`'s peak RSS when built in one string.
void write_json_model(const Topology& topology, std::span<const ProbeReport> reports,
                      const TextSink& sink);

}  // namespace nodetopo::exporters
