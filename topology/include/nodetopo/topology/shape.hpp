// The shape fingerprint of a node: a short stable hash of a normalised description of its
// hardware structure, so that identical machines (same models, same wiring) share one value and
// an autoscaler or a scheduler can tell node shapes apart.
//
// The description holds kinds, models, counts and structure — CPU packages and NUMA nodes (CPU
// counts, memory rounded up to whole DIMM-sized steps, SLIT distances), the PCIe tree (vendor and
// device ids, class, maximum link generation and width, nesting), accelerators (vendor, product,
// memory), NVSwitches, NICs (link type, RDMA ports) and the NVLink/xGMI wiring — and nothing that
// differs between two machines of one model: no serial numbers, UUIDs, MACs, host or interface
// names, PCI bus numbers, driver versions, link states or current speeds. Siblings of the PCIe
// tree are ordered by their own description, not by bus number.
#pragma once

#include <string>
#include <string_view>

#include <nodetopo/base/sha256.hpp>  // sha256_hex, for callers of the fingerprint
#include <nodetopo/topology/topology.hpp>

namespace nodetopo {

/// Version of the description format; part of the description, so a format change changes
/// every shape rather than silently colliding with old values.
inline constexpr std::string_view kShapeFormat = "nodetopo-shape/1";

struct ShapeFingerprint {
  std::string hash;         ///< first 12 hex digits of sha256(description): the label value
  std::string sha256;       ///< all 64 hex digits
  std::string description;  ///< the normalised description, one line per item, '\n'-terminated
};

/// Computes the shape of a frozen topology. Deterministic.
ShapeFingerprint compute_shape(const Topology& topology);

}  // namespace nodetopo
