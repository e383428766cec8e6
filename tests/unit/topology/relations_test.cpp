// The relation algorithm on small hand-built trees, one per case nvidia-smi distinguishes.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <nodetopo/topology/relations.hpp>

#include "test_topologies.hpp"

namespace nodetopo {
namespace {

// Builds trees tersely: packages/NUMA nodes, host bridges, bridges with roles, endpoints.
class TreeBuilder {
 public:
  NodeIndex package(std::uint32_t os) {
    PackageInfo p;
    p.os_index = os;
    return b_.add(NodeKind::kPackage, "package/" + std::to_string(os), b_.root(), p).value();
  }
  NodeIndex numa(std::uint32_t os, NodeIndex parent, std::uint32_t first_cpu) {
    NumaInfo n;
    n.os_index = os;
    n.cpus.insert_range(first_cpu, first_cpu + 3);
    return b_.add(NodeKind::kNumaNode, "numa/" + std::to_string(os), parent, n).value();
  }
  NodeIndex host_bridge(std::uint8_t bus, NodeIndex parent) {
    HostBridgeInfo h;
    h.bus = bus;
    h.root_name = pci_root_name(0, bus);
    return b_.add(NodeKind::kHostBridge, "hostbridge/" + h.root_name, parent, h).value();
  }
  NodeIndex bridge(std::uint8_t bus, std::uint8_t dev, NodeIndex parent,
                   std::optional<PciePortType> role) {
    return function(NodeKind::kPciBridge, bus, dev, 0, parent, role, 0x060400);
  }
  NodeIndex endpoint(std::uint8_t bus, std::uint8_t dev, std::uint8_t fn, NodeIndex parent,
                     std::uint32_t cls = 0x030200) {
    return function(NodeKind::kPciDevice, bus, dev, fn, parent, PciePortType::kEndpoint, cls);
  }
  NodeIndex gpu(NodeIndex pci) {
    const std::string id = "accelerator/" + b_.node(pci).as<PciFunctionInfo>().address.to_string();
    return b_.add(NodeKind::kAccelerator, id, pci, AcceleratorInfo{}).value();
  }
  NodeIndex nvswitch(NodeIndex pci) {
    const std::string id = "nvswitch/" + b_.node(pci).as<PciFunctionInfo>().address.to_string();
    return b_.add(NodeKind::kNvSwitch, id, pci, AcceleratorInfo{}).value();
  }
  void link(LinkKind kind, NodeIndex from, NodeIndex to, std::int64_t count) {
    b_.add_link(Link{kind, from, to, count, 0});
  }
  void set_numa(NodeIndex pci, std::uint32_t numa) {
    b_.node(pci).as<PciFunctionInfo>().numa_node = numa;
  }
  [[nodiscard]] std::string id(NodeIndex i) const { return b_.node(i).id; }
  Topology freeze() { return std::move(b_).freeze(); }
  TopologyBuilder& raw() { return b_; }

 private:
  NodeIndex function(NodeKind kind, std::uint8_t bus, std::uint8_t dev, std::uint8_t fn,
                     NodeIndex parent, std::optional<PciePortType> role, std::uint32_t cls) {
    PciFunctionInfo f;
    f.address = PciAddress{0, bus, dev, fn};
    f.port_type = role;
    f.class_code = cls;
    return b_.add(kind, "pci/" + f.address.to_string(), parent, f).value();
  }
  TopologyBuilder b_;
};

std::string relation(const Topology& topo, const std::string& a, const std::string& b) {
  const RelationIndex index(topo);
  return index.between(*topo.find(a), *topo.find(b)).label();
}

TEST(Relations, TwoFunctionsOfOneDeviceArePix) {
  TreeBuilder t;
  const NodeIndex hb = t.host_bridge(0x10, t.raw().root());
  const NodeIndex rp = t.bridge(0x10, 1, hb, PciePortType::kRootPort);
  const NodeIndex f0 = t.endpoint(0x11, 0, 0, rp, 0x020000);
  const NodeIndex f1 = t.endpoint(0x11, 0, 1, rp, 0x020000);
  const std::string a = t.id(f0);
  const std::string b = t.id(f1);
  const Topology topo = t.freeze();
  EXPECT_EQ(relation(topo, a, b), "PIX");
  EXPECT_EQ(relation(topo, a, a), "X");
}

TEST(Relations, EndpointsUnderOneSwitchArePixEvenThroughTwoPortsAndTheUpstreamPort) {
  TreeBuilder t;
  const NodeIndex hb = t.host_bridge(0x10, t.raw().root());
  const NodeIndex rp = t.bridge(0x10, 1, hb, PciePortType::kRootPort);
  const NodeIndex usp = t.bridge(0x11, 0, rp, PciePortType::kUpstreamPort);
  const NodeIndex dsp1 = t.bridge(0x12, 0, usp, PciePortType::kDownstreamPort);
  const NodeIndex dsp2 = t.bridge(0x12, 1, usp, PciePortType::kDownstreamPort);
  const NodeIndex gpu = t.endpoint(0x13, 0, 0, dsp1);
  const NodeIndex nic = t.endpoint(0x14, 0, 0, dsp2, 0x020700);
  const NodeIndex accel = t.gpu(gpu);
  const std::string g = t.id(accel);
  const std::string n = t.id(nic);
  const Topology topo = t.freeze();
  EXPECT_EQ(relation(topo, g, n), "PIX");
  EXPECT_EQ(relation(topo, n, g), "PIX");
  // Both share the switch's upstream port as their nearest bridge unit.
  EXPECT_EQ(nearest_bridge_unit(topo, *topo.find(g)), nearest_bridge_unit(topo, *topo.find(n)));
  EXPECT_EQ(topo.node(*nearest_bridge_unit(topo, *topo.find(g))).id, "pci/0000:11:00.0");
}

TEST(Relations, NestedSwitchesArePxb) {
  TreeBuilder t;
  const NodeIndex hb = t.host_bridge(0x10, t.raw().root());
  const NodeIndex rp = t.bridge(0x10, 1, hb, PciePortType::kRootPort);
  const NodeIndex usp1 = t.bridge(0x11, 0, rp, PciePortType::kUpstreamPort);
  const NodeIndex dsp1a = t.bridge(0x12, 0, usp1, PciePortType::kDownstreamPort);
  const NodeIndex dsp1b = t.bridge(0x12, 1, usp1, PciePortType::kDownstreamPort);
  const NodeIndex usp2 = t.bridge(0x13, 0, dsp1a, PciePortType::kUpstreamPort);
  const NodeIndex dsp2 = t.bridge(0x14, 0, usp2, PciePortType::kDownstreamPort);
  const NodeIndex gpu = t.endpoint(0x15, 0, 0, dsp2);
  const NodeIndex nic = t.endpoint(0x16, 0, 0, dsp1b, 0x020000);
  const std::string g = t.id(gpu);
  const std::string n = t.id(nic);
  const Topology topo = t.freeze();
  EXPECT_EQ(relation(topo, g, n), "PXB");
}

TEST(Relations, DifferentRootPortsOfOneHostBridgeArePhb) {
  TreeBuilder t;
  const NodeIndex hb = t.host_bridge(0x10, t.raw().root());
  const NodeIndex rp1 = t.bridge(0x10, 1, hb, PciePortType::kRootPort);
  const NodeIndex rp2 = t.bridge(0x10, 2, hb, PciePortType::kRootPort);
  const std::string g = t.id(t.endpoint(0x11, 0, 0, rp1));
  const std::string n = t.id(t.endpoint(0x12, 0, 0, rp2, 0x020000));
  const Topology topo = t.freeze();
  EXPECT_EQ(relation(topo, g, n), "PHB");
}

TEST(Relations, TwoHostBridgesInOneNumaNodeAreNodeAndAcrossSocketsSys) {
  TreeBuilder t;
  const NodeIndex p0 = t.package(0);
  const NodeIndex p1 = t.package(1);
  const NodeIndex n0 = t.numa(0, p0, 0);
  const NodeIndex n1 = t.numa(1, p1, 4);
  const NodeIndex hb_a = t.host_bridge(0x10, n0);
  const NodeIndex hb_b = t.host_bridge(0x20, n0);
  const NodeIndex hb_c = t.host_bridge(0x80, n1);
  const NodeIndex a = t.endpoint(0x11, 0, 0, t.bridge(0x10, 1, hb_a, PciePortType::kRootPort));
  const NodeIndex b = t.endpoint(0x21, 0, 0, t.bridge(0x20, 1, hb_b, PciePortType::kRootPort));
  const NodeIndex c = t.endpoint(0x81, 0, 0, t.bridge(0x80, 1, hb_c, PciePortType::kRootPort));
  t.set_numa(a, 0);
  t.set_numa(b, 0);
  t.set_numa(c, 1);
  const std::string ia = t.id(a);
  const std::string ib = t.id(b);
  const std::string ic = t.id(c);
  const Topology topo = t.freeze();
  EXPECT_EQ(relation(topo, ia, ib), "NODE");
  EXPECT_EQ(relation(topo, ia, ic), "SYS");
  const RelationIndex index(topo);
  EXPECT_EQ(index.numa_affinity(*topo.find(ic)), 1U);
  EXPECT_EQ(index.cpu_affinity(*topo.find(ic)).to_list(), "4-7");
}

TEST(Relations, RolesAreInferredWithoutPcieCapability) {
  // 64-byte captures: no port types. Root port under the host bridge, then upstream, then
  // downstream ports; two endpoints below one switch are still PIX.
  TreeBuilder t;
  const NodeIndex hb = t.host_bridge(0x17, t.raw().root());
  const NodeIndex rp = t.bridge(0x17, 0, hb, std::nullopt);
  const NodeIndex usp = t.bridge(0x18, 0, rp, std::nullopt);
  const NodeIndex d1 = t.bridge(0x19, 4, usp, std::nullopt);
  const NodeIndex d2 = t.bridge(0x19, 8, usp, std::nullopt);
  const std::string a = t.id(t.endpoint(0x1a, 0, 0, d1, 0x020700));
  const std::string b = t.id(t.endpoint(0x1b, 0, 0, d2, 0x0b4000));
  const std::string rp_id = t.id(rp);
  const std::string usp_id = t.id(usp);
  const std::string d1_id = t.id(d1);
  const Topology topo = t.freeze();
  EXPECT_EQ(bridge_role(topo, *topo.find(rp_id)), PciePortType::kRootPort);
  EXPECT_EQ(bridge_role(topo, *topo.find(usp_id)), PciePortType::kUpstreamPort);
  EXPECT_EQ(bridge_role(topo, *topo.find(d1_id)), PciePortType::kDownstreamPort);
  EXPECT_EQ(relation(topo, a, b), "PIX");
}

TEST(Relations, NvLinkThroughSwitchesCountsTheLinksBothGpusHaveIntoSharedSwitches) {
  TreeBuilder t;
  const NodeIndex hb = t.host_bridge(0x10, t.raw().root());
  const NodeIndex rp = t.bridge(0x10, 1, hb, PciePortType::kRootPort);
  std::vector<NodeIndex> gpus;
  std::vector<NodeIndex> switches;
  for (std::uint8_t i = 0; i < 2; ++i)
    gpus.push_back(t.gpu(t.endpoint(0x20 + i, 0, 0, rp)));
  for (std::uint8_t i = 0; i < 4; ++i) {
    switches.push_back(t.nvswitch(t.endpoint(0x30 + i, 0, 0, rp, 0x068000)));
  }
  const std::array<std::int64_t, 4> split{5, 4, 4, 5};  // DGX H100
  for (NodeIndex g : gpus) {
    for (std::size_t s = 0; s < switches.size(); ++s)
      t.link(LinkKind::kNvLink, g, switches[s], split[s]);
  }
  const std::string g0 = t.id(gpus[0]);
  const std::string g1 = t.id(gpus[1]);
  const Topology topo = t.freeze();
  EXPECT_EQ(relation(topo, g0, g1), "NV18");
  // A GPU and its own PCI function are one device, not an NVLink pair.
  EXPECT_EQ(relation(topo, g0, "pci/0000:20:00.0"), "X");
  // The PCI function of a GPU relates the same way as its accelerator node.
  EXPECT_EQ(relation(topo, "pci/0000:20:00.0", "pci/0000:21:00.0"), "NV18");
}

TEST(Relations, DirectNvLinkReportedByOneSideCountsForBoth) {
  TreeBuilder t;
  const NodeIndex hb = t.host_bridge(0x10, t.raw().root());
  const NodeIndex rp = t.bridge(0x10, 1, hb, PciePortType::kRootPort);
  const NodeIndex g0 = t.gpu(t.endpoint(0x20, 0, 0, rp));
  const NodeIndex g1 = t.gpu(t.endpoint(0x21, 0, 0, rp));
  t.link(LinkKind::kNvLink, g0, g1, 12);
  const std::string a = t.id(g0);
  const std::string b = t.id(g1);
  const Topology topo = t.freeze();
  EXPECT_EQ(relation(topo, a, b), "NV12");
  EXPECT_EQ(relation(topo, b, a), "NV12");
}

TEST(Relations, XgmiLinkWinsOverPcie) {
  TreeBuilder t;
  const NodeIndex hb = t.host_bridge(0x10, t.raw().root());
  const NodeIndex rp = t.bridge(0x10, 1, hb, PciePortType::kRootPort);
  const NodeIndex rp2 = t.bridge(0x10, 2, hb, PciePortType::kRootPort);
  const NodeIndex g0 = t.gpu(t.endpoint(0x20, 0, 0, rp, 0x120000));
  const NodeIndex g1 = t.gpu(t.endpoint(0x21, 0, 0, rp2, 0x120000));
  const NodeIndex g2 = t.gpu(t.endpoint(0x22, 0, 0, rp2, 0x120000));
  t.link(LinkKind::kXgmi, g0, g1, 1);
  const std::string a = t.id(g0);
  const std::string b = t.id(g1);
  const std::string c = t.id(g2);
  const Topology topo = t.freeze();
  EXPECT_EQ(relation(topo, a, b), "XGMI");
  EXPECT_EQ(relation(topo, b, a), "XGMI");
  EXPECT_EQ(relation(topo, a, c), "PHB");
}

// ---------------------------------------------------------------------------------------------
// RelationIndex precomputes per-node facts (PCI path, NUMA node, package, NVLink endpoint) once.
// The same rules applied by walking the tree for every pair, as the index did before, must give
// the same answers for every pair of nodes of whole machines.

class WalkingRelations {
 public:
  explicit WalkingRelations(const Topology& topo) : topo_(topo) {
    for (const Link& link : topo.links()) {
      if (link.kind == LinkKind::kNvLink) {
        auto& count = nvlink_[link.from][link.to];
        count = std::max(count, link.value);
      } else if (link.kind == LinkKind::kXgmi) {
        xgmi_.emplace(link.from, link.to);
        xgmi_.emplace(link.to, link.from);
      }
    }
    std::vector<std::tuple<NodeIndex, NodeIndex, std::int64_t>> reverse;
    for (const auto& [from, peers] : nvlink_) {
      for (const auto& [to, count] : peers) {
        if (topo.node(to).kind == NodeKind::kAccelerator) reverse.emplace_back(to, from, count);
      }
    }
    for (const auto& [to, from, count] : reverse) {
      auto& back = nvlink_[to][from];
      back = std::max(back, count);
    }
  }

  [[nodiscard]] Relation between(NodeIndex a, NodeIndex b) const {
    if (a == b) return {RelationClass::kSelf};
    const auto fa = pci_function_of(topo_, a);
    if (fa && fa == pci_function_of(topo_, b)) return {RelationClass::kSelf};
    if (const std::int64_t links = nvlink_count(endpoint(a), endpoint(b)); links > 0) {
      return {RelationClass::kNvLink, links};
    }
    if (xgmi_.contains({endpoint(a), endpoint(b)})) return {RelationClass::kXgmi};
    return pcie(a, b);
  }

  [[nodiscard]] std::optional<std::uint32_t> numa(NodeIndex node) const {
    return topo_.numa_of(pci_function_of(topo_, node).value_or(node));
  }

 private:
  [[nodiscard]] NodeIndex endpoint(NodeIndex node) const {
    auto is_endpoint = [&](NodeIndex n) {
      return topo_.node(n).kind == NodeKind::kAccelerator ||
             topo_.node(n).kind == NodeKind::kNvSwitch;
    };
    if (is_endpoint(node)) return node;
    for (NodeIndex child : topo_.node(node).children) {
      if (is_endpoint(child)) return child;
    }
    return node;
  }

  [[nodiscard]] std::int64_t nvlink_count(NodeIndex a, NodeIndex b) const {
    const auto ia = nvlink_.find(a);
    const auto ib = nvlink_.find(b);
    if (ia == nvlink_.end() || ib == nvlink_.end()) return 0;
    std::int64_t total = 0;
    if (auto direct = ia->second.find(b); direct != ia->second.end()) total += direct->second;
    for (const auto& [peer, count] : ia->second) {
      if (topo_.node(peer).kind != NodeKind::kNvSwitch) continue;
      if (auto other = ib->second.find(peer); other != ib->second.end()) {
        total += std::min(count, other->second);
      }
    }
    return total;
  }

  // PCI bridges above a function, nearest first, and the host bridge they hang from.
  [[nodiscard]] std::pair<std::vector<NodeIndex>, NodeIndex> path(NodeIndex function) const {
    std::vector<NodeIndex> above;
    for (NodeIndex cur = topo_.node(function).parent; cur != kNoNode;
         cur = topo_.node(cur).parent) {
      if (topo_.node(cur).is_pci()) {
        above.push_back(cur);
        continue;
      }
      return {above, topo_.node(cur).kind == NodeKind::kHostBridge ? cur : kNoNode};
    }
    return {above, kNoNode};
  }

  [[nodiscard]] Relation pcie(NodeIndex a, NodeIndex b) const {
    const auto fa = pci_function_of(topo_, a);
    const auto fb = pci_function_of(topo_, b);
    if (fa && fb) {
      if (*fa == *fb) return {RelationClass::kSelf};
      if (topo_.node(*fa).as<PciFunctionInfo>().address.same_device(
              topo_.node(*fb).as<PciFunctionInfo>().address)) {
        return {RelationClass::kPix};
      }
      const auto [above_a, host_a] = path(*fa);
      const auto [above_b, host_b] = path(*fb);
      if (host_a != kNoNode && host_a == host_b) {
        const auto common =
            std::find_first_of(above_b.begin(), above_b.end(), above_a.begin(), above_a.end());
        if (common == above_b.end()) return {RelationClass::kPhb};
        std::set<NodeIndex> units;
        for (NodeIndex bridge : above_a) {
          units.insert(bridge_unit(topo_, bridge));
          if (bridge == *common) break;
        }
        for (auto it = above_b.begin(); it <= common; ++it)
          units.insert(bridge_unit(topo_, *it));
        return {units.size() <= 1 ? RelationClass::kPix : RelationClass::kPxb};
      }
    }
    const auto na = numa(a);
    const auto nb = numa(b);
    if (na && nb) return {*na == *nb ? RelationClass::kNode : RelationClass::kSys};
    const auto pkg_a = topo_.ancestor_of_kind(a, NodeKind::kPackage);
    const auto pkg_b = topo_.ancestor_of_kind(b, NodeKind::kPackage);
    return {pkg_a && pkg_a == pkg_b ? RelationClass::kNode : RelationClass::kSys};
  }

  const Topology& topo_;
  std::map<NodeIndex, std::map<NodeIndex, std::int64_t>> nvlink_;
  std::set<std::pair<NodeIndex, NodeIndex>> xgmi_;
};

void expect_same_as_walking(const Topology& topo) {
  const RelationIndex index(topo);
  const WalkingRelations walking(topo);
  for (NodeIndex a = 0; a < topo.size(); ++a) {
    ASSERT_EQ(index.numa_affinity(a), walking.numa(a)) << topo.node(a).id;
    for (NodeIndex b = 0; b < topo.size(); ++b) {
      ASSERT_EQ(index.between(a, b), walking.between(a, b))
          << topo.node(a).id << " to " << topo.node(b).id << ": " << index.between(a, b).label()
          << " vs " << walking.between(a, b).label();
    }
  }
}

TEST(RelationIndex, AgreesWithTreeWalksOnEveryPairOfDgxLikeMachines) {
  expect_same_as_walking(test::make_dgx());
  expect_same_as_walking(test::make_dgx({.gpus = 4, .bus_offset = 3, .move_nic0 = true}));
  expect_same_as_walking(test::make_dgx({.nvlink = false, .nic0_vfs = 4}));
  expect_same_as_walking(test::make_nic_farm(6));
  expect_same_as_walking(Topology());
}

TEST(RelationIndex, AgreesWithTreeWalksOnAMixedMachine) {
  // Two sockets; host bridges with and without a NUMA node; a switch whose roles are inferred
  // under one whose roles are known; a two-function NIC with a netdev and an RDMA device; GPUs
  // with asymmetric direct NVLinks, NVSwitch links and xGMI; a virtual interface off the PCI tree.
  TreeBuilder t;
  const NodeIndex p0 = t.package(0);
  const NodeIndex p1 = t.package(1);
  const NodeIndex n0 = t.numa(0, p0, 0);
  const NodeIndex n1 = t.numa(1, p1, 4);
  const NodeIndex hb_a = t.host_bridge(0x10, n0);
  const NodeIndex hb_b = t.host_bridge(0x40, p1);
  const NodeIndex hb_c = t.host_bridge(0x80, n1);
  const NodeIndex rp_a = t.bridge(0x10, 1, hb_a, PciePortType::kRootPort);
  const NodeIndex usp = t.bridge(0x11, 0, rp_a, PciePortType::kUpstreamPort);
  const NodeIndex dsp1 = t.bridge(0x12, 0, usp, PciePortType::kDownstreamPort);
  const NodeIndex dsp2 = t.bridge(0x12, 1, usp, PciePortType::kDownstreamPort);
  const NodeIndex usp_inferred = t.bridge(0x13, 0, dsp2, std::nullopt);
  const NodeIndex dsp_inferred = t.bridge(0x14, 0, usp_inferred, std::nullopt);
  const NodeIndex g0 = t.gpu(t.endpoint(0x15, 0, 0, dsp1));
  const NodeIndex g1 = t.gpu(t.endpoint(0x16, 0, 0, dsp_inferred));
  const NodeIndex nic_f0 = t.endpoint(0x17, 0, 0, dsp1, 0x020000);
  const NodeIndex nic_f1 = t.endpoint(0x17, 0, 1, dsp1, 0x020000);
  NetDeviceInfo eth;
  eth.name = "eth0";
  t.raw().add(NodeKind::kNetDevice, "net/eth0", nic_f0, eth).value();
  RdmaDeviceInfo mlx;
  mlx.name = "mlx5_0";
  t.raw().add(NodeKind::kRdmaDevice, "rdma/mlx5_0", nic_f1, mlx).value();
  NetDeviceInfo veth;
  veth.name = "veth0";
  veth.is_virtual = true;
  t.raw().add(NodeKind::kNetDevice, "net/veth0", t.raw().root(), veth).value();
  const NodeIndex rp_b = t.bridge(0x40, 1, hb_b, PciePortType::kRootPort);
  const NodeIndex g2 = t.gpu(t.endpoint(0x41, 0, 0, rp_b, 0x120000));
  const NodeIndex g3 = t.gpu(t.endpoint(0x42, 0, 0, hb_b, 0x120000));
  const NodeIndex rp_c = t.bridge(0x80, 1, hb_c, PciePortType::kRootPort);
  const NodeIndex g4 = t.gpu(t.endpoint(0x81, 0, 0, rp_c));
  const NodeIndex sw = t.nvswitch(t.endpoint(0x82, 0, 0, rp_c, 0x068000));
  t.set_numa(nic_f0, 0);
  t.set_numa(nic_f1, 0);
  t.link(LinkKind::kNvLink, g0, g1, 4);
  t.link(LinkKind::kNvLink, g1, g0, 6);
  t.link(LinkKind::kNvLink, g0, sw, 5);
  t.link(LinkKind::kNvLink, g4, sw, 3);
  t.link(LinkKind::kNvLink, sw, g4, 7);
  t.link(LinkKind::kXgmi, g2, g3, 1);
  expect_same_as_walking(t.freeze());
}

}  // namespace
}  // namespace nodetopo
