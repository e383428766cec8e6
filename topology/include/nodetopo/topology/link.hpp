// Links: relations between nodes that are not containment (distances, accelerator fabrics).
#pragma once

#include <cstdint>
#include <string_view>

#include <nodetopo/topology/node.hpp>

namespace nodetopo {

enum class LinkKind : std::uint8_t {
  kNumaDistance,  ///< SLIT distance from one NUMA node to another (also to itself)
  kNvLink,        ///< NVLinks between a GPU and a GPU or NVSwitch
  kXgmi,          ///< AMD xGMI (Infinity Fabric) link between two GPUs
};

/// "numa_distance", "nvlink", "xgmi".
std::string_view to_string(LinkKind kind);

/// A directed link. Distances may be asymmetric, so each direction is its own link; fabric links
/// are stored once per direction the hardware reports.
struct Link {
  LinkKind kind = LinkKind::kNumaDistance;
  NodeIndex from = kNoNode;
  NodeIndex to = kNoNode;
  /// kNumaDistance: the distance. kNvLink / kXgmi: number of active links bonded between the ends.
  std::int64_t value = 0;
  /// Aggregate bandwidth in MB/s when the source reports it, else 0.
  std::uint64_t bandwidth_mbps = 0;
};

}  // namespace nodetopo
