// Human-readable indented tree (`topo dump`, the default format), in the spirit of lstopo and
// `lspci -tv`: machine, packages, NUMA nodes, host bridges, bridges and devices.
#pragma once

#include <span>
#include <string>

#include <nodetopo/topology/diagnostics.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::exporters {

/// Renders the tree, then the NUMA distance matrix, then a one-line summary per probe that did
/// not finish cleanly. Deterministic.
std::string render_text_tree(const Topology& topology, std::span<const ProbeReport> reports);

/// "80 GiB", "512 MiB", "1.5 TiB": binary units with at most one decimal.
std::string format_bytes(std::uint64_t bytes);

}  // namespace nodetopo::exporters
