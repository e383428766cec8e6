#include <algorithm>
#include <unordered_set>

#include <nodetopo/topology/relations.hpp>

namespace nodetopo {

std::string Relation::label() const {
  switch (cls) {
    case RelationClass::kSelf:
      return "X";
    case RelationClass::kNvLink:
      return "NV" + std::to_string(nvlinks);
    case RelationClass::kXgmi:
      return "XGMI";
    case RelationClass::kPix:
      return "PIX";
    case RelationClass::kPxb:
      return "PXB";
    case RelationClass::kPhb:
      return "PHB";
    case RelationClass::kNode:
      return "NODE";
    case RelationClass::kSys:
      return "SYS";
  }
  return "SYS";
}

std::optional<NodeIndex> pci_function_of(const Topology& topo, NodeIndex node) {
  for (NodeIndex cur = node; cur != kNoNode; cur = topo.node(cur).parent) {
    const NodeKind kind = topo.node(cur).kind;
    if (kind == NodeKind::kPciDevice || kind == NodeKind::kPciBridge) return cur;
    if (kind == NodeKind::kHostBridge || kind == NodeKind::kNumaNode ||
        kind == NodeKind::kPackage || kind == NodeKind::kMachine) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<PciePortType> bridge_role(const Topology& topo, NodeIndex bridge) {
  const Node& node = topo.node(bridge);
  if (node.kind != NodeKind::kPciBridge) return std::nullopt;
  const auto& f = node.as<PciFunctionInfo>();
  if (f.port_type) return f.port_type;
  // Captures read without privileges hold only the 64-byte header, so the PCIe capability is
  // missing: infer the role from where the bridge sits.
  const Node& parent = topo.node(node.parent);
  if (parent.kind != NodeKind::kPciBridge) return PciePortType::kRootPort;
  const auto parent_role = bridge_role(topo, node.parent);
  if (parent_role == PciePortType::kUpstreamPort) return PciePortType::kDownstreamPort;
  if (parent_role == PciePortType::kRootPort || parent_role == PciePortType::kDownstreamPort) {
    return PciePortType::kUpstreamPort;
  }
  return std::nullopt;
}

NodeIndex bridge_unit(const Topology& topo, NodeIndex bridge) {
  const Node& node = topo.node(bridge);
  if (node.kind == NodeKind::kPciBridge && node.parent != kNoNode &&
      topo.node(node.parent).kind == NodeKind::kPciBridge &&
      bridge_role(topo, bridge) == PciePortType::kDownstreamPort) {
    return node.parent;
  }
  return bridge;
}

std::optional<NodeIndex> nearest_bridge_unit(const Topology& topo, NodeIndex node) {
  const auto function = pci_function_of(topo, node);
  if (!function) return std::nullopt;
  const NodeIndex parent = topo.node(*function).parent;
  if (parent == kNoNode || topo.node(parent).kind != NodeKind::kPciBridge) return std::nullopt;
  return bridge_unit(topo, parent);
}

RelationIndex::RelationIndex(const Topology& topo) : topo_(topo) {
  for (const Link& link : topo.links()) {
    if (link.kind == LinkKind::kNvLink) {
      auto& count = nvlink_[link.from][link.to];
      count = std::max(count, link.value);
    } else if (link.kind == LinkKind::kXgmi) {
      xgmi_[link.from][link.to] += link.value;
      xgmi_[link.to][link.from] += 0;  // make the pair visible from both ends
    }
  }
  // NVLinks between two GPUs are reported by both; a link one side reports is a link of both.
  for (auto& [from, peers] : nvlink_) {
    for (auto& [to, count] : peers) {
      if (topo_.node(to).kind != NodeKind::kAccelerator) continue;
      auto& reverse = nvlink_[to][from];
      reverse = std::max(reverse, count);
    }
  }
}

NodeIndex RelationIndex::fabric_endpoint(NodeIndex node) const {
  const NodeKind kind = topo_.node(node).kind;
  if (kind == NodeKind::kAccelerator || kind == NodeKind::kNvSwitch) return node;
  for (NodeIndex child : topo_.node(node).children) {
    const NodeKind ck = topo_.node(child).kind;
    if (ck == NodeKind::kAccelerator || ck == NodeKind::kNvSwitch) return child;
  }
  return node;
}

std::int64_t RelationIndex::nvlink_count(NodeIndex a, NodeIndex b) const {
  const auto ia = nvlink_.find(fabric_endpoint(a));
  const auto ib = nvlink_.find(fabric_endpoint(b));
  if (ia == nvlink_.end() || ib == nvlink_.end()) return 0;
  std::int64_t total = 0;
  if (auto direct = ia->second.find(ib->first); direct != ia->second.end()) total += direct->second;
  // Through NVSwitches: the links of both GPUs into each switch they share; the narrower side
  // bounds what the pair can use (DGX H100: 5+4+4+5 = NV18).
  for (const auto& [peer, count] : ia->second) {
    if (topo_.node(peer).kind != NodeKind::kNvSwitch) continue;
    if (auto other = ib->second.find(peer); other != ib->second.end()) {
      total += std::min(count, other->second);
    }
  }
  return total;
}

const RelationIndex::PciPath* RelationIndex::path_of(NodeIndex node) const {
  if (auto it = paths_.find(node); it != paths_.end()) return &it->second;
  const auto function = pci_function_of(topo_, node);
  if (!function) return nullptr;
  PciPath path;
  path.function = *function;
  for (NodeIndex cur = topo_.node(*function).parent; cur != kNoNode; cur = topo_.node(cur).parent) {
    const NodeKind kind = topo_.node(cur).kind;
    if (kind == NodeKind::kPciBridge || kind == NodeKind::kPciDevice) {
      path.ancestors.push_back(cur);
    } else {
      if (kind == NodeKind::kHostBridge) path.host_bridge = cur;
      break;
    }
  }
  return &paths_.emplace(node, std::move(path)).first->second;
}

std::optional<std::uint32_t> RelationIndex::numa_affinity(NodeIndex node) const {
  const auto function = pci_function_of(topo_, node);
  return topo_.numa_of(function.value_or(node));
}

CpuSet RelationIndex::cpu_affinity(NodeIndex node) const {
  const auto function = pci_function_of(topo_, node);
  for (NodeIndex cur = function.value_or(kNoNode); cur != kNoNode; cur = topo_.node(cur).parent) {
    const auto* f = topo_.node(cur).get_if<PciFunctionInfo>();
    if (f == nullptr) break;
    if (!f->local_cpus.empty()) return f->local_cpus;
  }
  if (const auto numa = numa_affinity(node)) {
    if (const auto idx = topo_.find("numa/" + std::to_string(*numa))) {
      return topo_.node(*idx).as<NumaInfo>().cpus;
    }
  }
  return {};
}

Relation RelationIndex::pcie_relation(NodeIndex a, NodeIndex b) const {
  const PciPath* pa = path_of(a);
  const PciPath* pb = path_of(b);
  if (pa != nullptr && pb != nullptr) {
    if (pa->function == pb->function) return {RelationClass::kSelf};
    const auto& fa = topo_.node(pa->function).as<PciFunctionInfo>();
    const auto& fb = topo_.node(pb->function).as<PciFunctionInfo>();
    if (fa.address.same_device(fb.address)) return {RelationClass::kPix};
    if (pa->host_bridge != kNoNode && pa->host_bridge == pb->host_bridge) {
      // Lowest common PCI bridge; none means the host bridge joins them.
      const std::unordered_set<NodeIndex> above_a(pa->ancestors.begin(), pa->ancestors.end());
      std::size_t lca_b = pb->ancestors.size();
      for (std::size_t i = 0; i < pb->ancestors.size(); ++i) {
        if (above_a.contains(pb->ancestors[i])) {
          lca_b = i;
          break;
        }
      }
      if (lca_b == pb->ancestors.size()) return {RelationClass::kPhb};
      const NodeIndex lca = pb->ancestors[lca_b];
      std::unordered_set<NodeIndex> units;
      for (NodeIndex bridge : pa->ancestors) {
        units.insert(bridge_unit(topo_, bridge));
        if (bridge == lca) break;
      }
      for (std::size_t i = 0; i <= lca_b; ++i)
        units.insert(bridge_unit(topo_, pb->ancestors[i]));
      return {units.size() <= 1 ? RelationClass::kPix : RelationClass::kPxb};
    }
  }
  const auto na = numa_affinity(a);
  const auto nb = numa_affinity(b);
  if (na && nb) return {*na == *nb ? RelationClass::kNode : RelationClass::kSys};
  // Locality unknown: only devices in the same package are known not to cross the interconnect.
  const auto pkg_a = topo_.ancestor_of_kind(a, NodeKind::kPackage);
  const auto pkg_b = topo_.ancestor_of_kind(b, NodeKind::kPackage);
  return {pkg_a && pkg_a == pkg_b ? RelationClass::kNode : RelationClass::kSys};
}

Relation RelationIndex::between(NodeIndex a, NodeIndex b) const {
  if (a == b) return {RelationClass::kSelf};
  // An accelerator and its own PCI function (or two OS devices of one function) are one device.
  const auto fa = pci_function_of(topo_, a);
  if (fa && fa == pci_function_of(topo_, b)) return {RelationClass::kSelf};
  if (const std::int64_t links = nvlink_count(a, b); links > 0) {
    return {RelationClass::kNvLink, links};
  }
  const NodeIndex ea = fabric_endpoint(a);
  const NodeIndex eb = fabric_endpoint(b);
  if (auto it = xgmi_.find(ea); it != xgmi_.end() && it->second.contains(eb)) {
    return {RelationClass::kXgmi};
  }
  return pcie_relation(a, b);
}

}  // namespace nodetopo
