// Graphviz rendering of a topology (`topo dump --format dot`): NUMA nodes as clusters inside
// their packages, host bridges, root ports and PCIe switches (a switch's ports drawn as one box),
// accelerators, NVSwitches, NICs and storage; NVLink and xGMI as edges between the devices.
// Subtrees without any of those devices are left out so the picture stays readable.
#pragma once

#include <string>

#include <nodetopo/topology/topology.hpp>

namespace nodetopo::exporters {

/// A complete `digraph` accepted by `dot -Tsvg`. Deterministic.
std::string render_dot(const Topology& topology);

}  // namespace nodetopo::exporters
