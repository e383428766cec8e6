#include <algorithm>
#include <tuple>

#include <nodetopo/topology/ids.hpp>
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

namespace {

bool is_container(NodeKind kind) {
  return kind == NodeKind::kHostBridge || kind == NodeKind::kNumaNode ||
         kind == NodeKind::kPackage || kind == NodeKind::kMachine;
}

bool is_fabric_endpoint(NodeKind kind) {
  return kind == NodeKind::kAccelerator || kind == NodeKind::kNvSwitch;
}

}  // namespace

RelationIndex::RelationIndex(const Topology& topo) : topo_(topo), facts_(topo.size()) {
  // Nodes are stored in pre-order: a node's parent comes before it, so one pass top-down
  // derives each node's facts from its parent's.
  for (NodeIndex i = 0; i < topo.size(); ++i) {
    const Node& node = topo.node(i);
    NodeFacts& f = facts_[i];
    const NodeFacts* up = node.parent == kNoNode ? nullptr : &facts_[node.parent];
    const Node* parent = node.parent == kNoNode ? nullptr : &topo.node(node.parent);

    // As pci_function_of(): the node itself, else the PCI function an OS device hangs under.
    if (node.is_pci()) {
      f.function = i;
    } else if (!is_container(node.kind) && up != nullptr) {
      f.function = up->function;
    }
    f.package = parent == nullptr                    ? kNoNode
                : parent->kind == NodeKind::kPackage ? node.parent
                                                     : up->package;
    // The NUMA node of a device is its PCI function's (OS devices carry none of their own).
    f.numa = topo.numa_of(i);
    // NVLink and xGMI links name the accelerator or NVSwitch, which hangs under its PCI function:
    // the function stands for it.
    f.fabric = i;
    if (!is_fabric_endpoint(node.kind)) {
      const auto& kids = node.children;
      const auto it = std::find_if(kids.begin(), kids.end(), [&](NodeIndex c) {
        return is_fabric_endpoint(topo.node(c).kind);
      });
      if (it != kids.end()) f.fabric = *it;
    }
    if (node.is_pci()) {
      f.address = node.as<PciFunctionInfo>().address;
      const bool under_pci = parent != nullptr && parent->is_pci();
      f.pci_parent = under_pci ? node.parent : kNoNode;
      f.pci_depth = under_pci ? up->pci_depth + 1 : 0;
      if (under_pci) {
        f.host_bridge = up->host_bridge;
      } else if (parent != nullptr && parent->kind == NodeKind::kHostBridge) {
        f.host_bridge = node.parent;
      }
      f.unit = bridge_unit(topo, i);
    }
  }

  // NVLink: per ordered pair, the most links any report gives (at least 0). Both GPUs of a pair
  // report their links; a link one side reports is a link of both, so a link to an accelerator
  // also counts from the accelerator's side. (NVSwitches report nothing of their own.)
  struct Entry {
    NodeIndex from;
    NodeIndex to;
    std::int64_t links;
  };
  std::vector<Entry> entries;
  for (const Link& link : topo.links()) {
    if (link.kind == LinkKind::kNvLink) {
      entries.push_back({link.from, link.to, link.value});
      if (topo.node(link.to).kind == NodeKind::kAccelerator) {
        entries.push_back({link.to, link.from, link.value});
      }
    } else if (link.kind == LinkKind::kXgmi) {
      xgmi_.emplace_back(link.from, link.to);
      xgmi_.emplace_back(link.to, link.from);
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) {
    return std::tie(x.from, x.to) < std::tie(y.from, y.to);
  });
  nvlink_begin_.assign(topo.size() + 1, 0);
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const Entry& e = entries[k];
    if (k > 0 && entries[k - 1].from == e.from && entries[k - 1].to == e.to) {
      nvlink_.back().links = std::max(nvlink_.back().links, e.links);
      continue;
    }
    nvlink_.push_back(
        {e.to, std::max<std::int64_t>(e.links, 0), topo.node(e.to).kind == NodeKind::kNvSwitch});
    ++nvlink_begin_[e.from + 1];
  }
  for (std::size_t n = 1; n < nvlink_begin_.size(); ++n)
    nvlink_begin_[n] += nvlink_begin_[n - 1];

  std::sort(xgmi_.begin(), xgmi_.end());
  xgmi_.erase(std::unique(xgmi_.begin(), xgmi_.end()), xgmi_.end());
}

// The helpers of between() are inline: it runs once per pair of a matrix.
inline std::span<const RelationIndex::NvLinkPeer> RelationIndex::nvlink_peers(
    NodeIndex endpoint) const {
  return std::span(nvlink_).subspan(nvlink_begin_[endpoint],
                                    nvlink_begin_[endpoint + 1] - nvlink_begin_[endpoint]);
}

inline std::int64_t RelationIndex::nvlink_count(NodeIndex ea, NodeIndex eb) const {
  const auto pa = nvlink_peers(ea);
  const auto pb = nvlink_peers(eb);
  if (pa.empty() || pb.empty()) return 0;
  std::int64_t total = 0;
  // Both peer lists are sorted: one merge finds the NVSwitches both ends reach.
  auto other = pb.begin();
  for (const NvLinkPeer& peer : pa) {
    if (peer.node == eb) total += peer.links;
    if (!peer.nvswitch) continue;
    while (other != pb.end() && other->node < peer.node)
      ++other;
    // Through an NVSwitch: the links of both GPUs into it; the narrower side bounds what the
    // pair can use (DGX H100: 5+4+4+5 = NV18).
    if (other != pb.end() && other->node == peer.node) total += std::min(peer.links, other->links);
  }
  return total;
}

std::optional<std::uint32_t> RelationIndex::numa_affinity(NodeIndex node) const {
  return facts_.at(node).numa;
}

CpuSet RelationIndex::cpu_affinity(NodeIndex node) const {
  for (NodeIndex cur = facts_.at(node).function; cur != kNoNode; cur = topo_.node(cur).parent) {
    const auto* f = topo_.node(cur).get_if<PciFunctionInfo>();
    if (f == nullptr) break;
    if (!f->local_cpus.empty()) return f->local_cpus;
  }
  if (const auto numa = numa_affinity(node)) {
    if (const auto idx = topo_.find(node_id::numa(*numa))) {
      return topo_.node(*idx).as<NumaInfo>().cpus;
    }
  }
  return {};
}

RelationClass RelationIndex::below_host_bridge(NodeIndex fa, NodeIndex fb) const {
  // The lowest PCI node above both functions: lift the deeper path to the other's depth, then
  // climb both until they meet. Paths of equal depth that never meet end in kNoNode together.
  NodeIndex x = facts_[fa].pci_parent;
  NodeIndex y = facts_[fb].pci_parent;
  if (x == kNoNode || y == kNoNode) return RelationClass::kPhb;
  while (facts_[x].pci_depth > facts_[y].pci_depth)
    x = facts_[x].pci_parent;
  while (facts_[y].pci_depth > facts_[x].pci_depth)
    y = facts_[y].pci_parent;
  while (x != y) {
    x = facts_[x].pci_parent;
    y = facts_[y].pci_parent;
  }
  if (x == kNoNode) return RelationClass::kPhb;  // only the host bridge joins them
  // PIX when the bridges on both paths, up to and including the common one, are one bridge
  // unit (one switch), else PXB.
  const NodeIndex common = x;
  const NodeIndex unit = facts_[common].unit;
  for (const NodeIndex function : {fa, fb}) {
    for (NodeIndex cur = facts_[function].pci_parent;; cur = facts_[cur].pci_parent) {
      if (facts_[cur].unit != unit) return RelationClass::kPxb;
      if (cur == common) break;
    }
  }
  return RelationClass::kPix;
}

inline Relation RelationIndex::pcie_relation(NodeIndex a, NodeIndex b) const {
  const NodeFacts& fa = facts_[a];
  const NodeFacts& fb = facts_[b];
  if (fa.function != kNoNode && fb.function != kNoNode) {
    if (fa.function == fb.function) return {RelationClass::kSelf};
    const NodeFacts& pa = facts_[fa.function];
    const NodeFacts& pb = facts_[fb.function];
    if (pa.address.same_device(pb.address)) return {RelationClass::kPix};
    if (pa.host_bridge != kNoNode && pa.host_bridge == pb.host_bridge) {
      return {below_host_bridge(fa.function, fb.function)};
    }
  }
  if (fa.numa && fb.numa) {
    return {*fa.numa == *fb.numa ? RelationClass::kNode : RelationClass::kSys};
  }
  // Locality unknown: only devices in the same package are known not to cross the interconnect.
  return {fa.package != kNoNode && fa.package == fb.package ? RelationClass::kNode
                                                            : RelationClass::kSys};
}

Relation RelationIndex::between(NodeIndex a, NodeIndex b) const {
  if (a == b) return {RelationClass::kSelf};
  const NodeFacts& fa = facts_.at(a);
  const NodeFacts& fb = facts_.at(b);
  // An accelerator and its own PCI function (or two OS devices of one function) are one device.
  if (fa.function != kNoNode && fa.function == fb.function) return {RelationClass::kSelf};
  if (const std::int64_t links = nvlink_count(fa.fabric, fb.fabric); links > 0) {
    return {RelationClass::kNvLink, links};
  }
  if (!xgmi_.empty() &&
      std::binary_search(xgmi_.begin(), xgmi_.end(), std::pair(fa.fabric, fb.fabric))) {
    return {RelationClass::kXgmi};
  }
  return pcie_relation(a, b);
}

Relation RelationIndex::pcie_between(NodeIndex a, NodeIndex b) const {
  if (a == b) return {RelationClass::kSelf};
  const NodeFacts& fa = facts_.at(a);
  const NodeFacts& fb = facts_.at(b);
  if (fa.function != kNoNode && fa.function == fb.function) return {RelationClass::kSelf};
  return pcie_relation(a, b);
}

}  // namespace nodetopo
