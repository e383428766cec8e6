// Relations between devices, derived from the frozen tree and its links: the connection classes
// nvidia-smi prints in `topo -m` (X, NV#, PIX, PXB, PHB, NODE, SYS) plus XGMI for AMD, PCIe switch
// membership, and CPU/NUMA affinity.
//
// PCIe semantics (docs/ARCHITECTURE.md, "Relations"): one PCIe switch — its upstream port and the
// downstream ports below it — counts as ONE bridge. PIX: at most one bridge between the devices
// (same switch, or two functions of one device). PXB: several bridges, below one host bridge. PHB:
// through one host bridge. NODE: different host bridges in one NUMA node. SYS: across NUMA nodes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nodetopo/topology/cpu_set.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo {

enum class RelationClass : std::uint8_t { kSelf, kNvLink, kXgmi, kPix, kPxb, kPhb, kNode, kSys };

struct Relation {
  RelationClass cls = RelationClass::kSys;
  std::int64_t nvlinks = 0;  ///< bonded NVLinks, for kNvLink
  /// "X", "NV18", "XGMI", "PIX", "PXB", "PHB", "NODE", "SYS".
  [[nodiscard]] std::string label() const;
  bool operator==(const Relation&) const = default;
};

/// The PCI function a device node stands on: itself for PCI functions, the nearest PCI ancestor
/// for OS devices (accelerator, NVSwitch, net, RDMA). nullopt for nodes outside the PCI tree.
std::optional<NodeIndex> pci_function_of(const Topology& topo, NodeIndex node);

/// Role of a PCI bridge: from the PCIe capability when the probe could read it, else inferred
/// from the nesting (root port under a host bridge, upstream port below a root or downstream
/// port, downstream port below an upstream port).
std::optional<PciePortType> bridge_role(const Topology& topo, NodeIndex bridge);

/// The "bridge unit" of a PCI bridge: a switch's downstream ports belong to the switch's upstream
/// port; any other bridge is its own unit.
NodeIndex bridge_unit(const Topology& topo, NodeIndex bridge);

/// The unit of the closest bridge above a device's PCI function: devices that nvidia-smi calls
/// PIX share it (or are functions of one device). nullopt when the function hangs directly off a
/// host bridge.
std::optional<NodeIndex> nearest_bridge_unit(const Topology& topo, NodeIndex node);

/// Computes relations between many device pairs. The constructor derives what each pair
/// question needs from the tree once, per node (its PCI function, that function's place in the PCI
/// tree, NUMA node, package, NVLink/xGMI endpoint) and the NVLink/xGMI adjacency; between() then
/// costs O(PCI depth) with no hashing or allocation, so a full N x N matrix costs O(N^2 * depth).
class RelationIndex {
 public:
  explicit RelationIndex(const Topology& topo);
  [[nodiscard]] Relation between(NodeIndex a, NodeIndex b) const;
  /// The PCIe class of the pair alone (X, PIX, PXB, PHB, NODE, SYS), also for devices joined by
  /// NVLink or xGMI: what NVML's common-ancestor query answers, which HAMi's topology score adds
  /// to the NVLink count (exporters/hami.hpp).
  [[nodiscard]] Relation pcie_between(NodeIndex a, NodeIndex b) const;
  /// CPUs local to the device (its PCI function's local_cpus, else its NUMA node's CPUs).
  [[nodiscard]] CpuSet cpu_affinity(NodeIndex node) const;
  /// NUMA node of the device, when known.
  [[nodiscard]] std::optional<std::uint32_t> numa_affinity(NodeIndex node) const;

 private:
  // What the tree says about one node, computed top-down in one pass (nodes are stored in
  // pre-order, so a parent's facts are known before its children's).
  struct NodeFacts {
    NodeIndex function = kNoNode;       // pci_function_of(node)
    NodeIndex fabric = kNoNode;         // the accelerator/NVSwitch that NVLink and xGMI links name
    NodeIndex package = kNoNode;        // nearest package ancestor
    std::optional<std::uint32_t> numa;  // numa_affinity(node)
    // For PCI functions: the address, the PCI node above (kNoNode at the top of the PCI tree),
    // the number of PCI nodes above, the host bridge the PCI tree hangs from, the bridge_unit().
    PciAddress address;
    NodeIndex pci_parent = kNoNode;
    std::uint32_t pci_depth = 0;
    NodeIndex host_bridge = kNoNode;
    NodeIndex unit = kNoNode;
  };
  // A peer on the NVLink fabric and the links to it.
  struct NvLinkPeer {
    NodeIndex node = kNoNode;
    std::int64_t links = 0;
    bool nvswitch = false;
  };

  [[nodiscard]] Relation pcie_relation(NodeIndex a, NodeIndex b) const;
  [[nodiscard]] RelationClass below_host_bridge(NodeIndex fa, NodeIndex fb) const;
  [[nodiscard]] std::int64_t nvlink_count(NodeIndex ea, NodeIndex eb) const;
  [[nodiscard]] std::span<const NvLinkPeer> nvlink_peers(NodeIndex endpoint) const;

  const Topology& topo_;
  std::vector<NodeFacts> facts_;  // by NodeIndex
  // NVLink adjacency, by endpoint, sorted by peer: nvlink_[nvlink_begin_[e], nvlink_begin_[e+1]).
  std::vector<NvLinkPeer> nvlink_;
  std::vector<std::uint32_t> nvlink_begin_;
  // Endpoint pairs joined by xGMI, both directions, sorted.
  std::vector<std::pair<NodeIndex, NodeIndex>> xgmi_;
};

}  // namespace nodetopo
