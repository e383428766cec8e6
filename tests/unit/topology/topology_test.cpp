// TopologyBuilder and Topology: validation on add, cycle-free moves, canonical order after freeze
// whatever the insertion order, and the queries exporters rely on.
#include <algorithm>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <nodetopo/topology/topology.hpp>

namespace nodetopo {
namespace {

PciFunctionInfo pci(std::uint32_t domain, std::uint8_t bus, std::uint8_t dev, std::uint8_t fn,
                    std::optional<std::uint32_t> numa = std::nullopt) {
  PciFunctionInfo f;
  f.address = PciAddress{domain, bus, dev, fn};
  f.numa_node = numa;
  return f;
}

NumaInfo numa(std::uint32_t os_index) {
  NumaInfo n;
  n.os_index = os_index;
  return n;
}

PackageInfo package(std::uint32_t os_index) {
  PackageInfo p;
  p.os_index = os_index;
  return p;
}

HostBridgeInfo host_bridge(std::uint32_t domain, std::uint8_t bus,
                           std::optional<std::uint32_t> numa_node = std::nullopt) {
  HostBridgeInfo h;
  h.domain = domain;
  h.bus = bus;
  h.root_name = pci_root_name(domain, bus);
  h.numa_node = numa_node;
  return h;
}

NetDeviceInfo net(const std::string& name) {
  NetDeviceInfo n;
  n.name = name;
  return n;
}

std::string pci_id(std::uint32_t domain, std::uint8_t bus, std::uint8_t dev, std::uint8_t fn) {
  return "pci/" + PciAddress{domain, bus, dev, fn}.to_string();
}

// ---------------------------------------------------------------------------------------------
// builder validation

TEST(TopologyBuilder, StartsWithTheMachine) {
  const TopologyBuilder b;
  EXPECT_EQ(b.size(), 1U);
  EXPECT_EQ(b.root(), 0U);
  EXPECT_EQ(b.node(0).kind, NodeKind::kMachine);
  EXPECT_EQ(b.node(0).id, "machine");
  EXPECT_EQ(b.find("machine"), std::optional<NodeIndex>(0));
}

TEST(TopologyBuilder, AddLinksParentAndChild) {
  TopologyBuilder b;
  auto pkg = b.add(NodeKind::kPackage, "package/0", b.root(), package(0));
  ASSERT_TRUE(pkg.ok()) << pkg.error().describe();
  auto n = b.add(NodeKind::kNumaNode, "numa/0", *pkg, numa(0));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(b.node(*n).parent, *pkg);
  EXPECT_EQ(b.node(*pkg).children, std::vector<NodeIndex>{*n});
  EXPECT_EQ(b.find("numa/0"), std::optional<NodeIndex>(*n));
  EXPECT_FALSE(b.find("numa/1").has_value());
  EXPECT_EQ(b.nodes_of_kind(NodeKind::kNumaNode), std::vector<NodeIndex>{*n});
}

TEST(TopologyBuilder, DuplicateIdIsRefusedAndNamed) {
  TopologyBuilder b;
  ASSERT_TRUE(b.add(NodeKind::kNumaNode, "numa/0", b.root(), numa(0)).ok());
  auto dup = b.add(NodeKind::kNumaNode, "numa/0", b.root(), numa(0));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(dup.error().path, "numa/0");
  EXPECT_EQ(b.size(), 2U) << "a refused node is not added";
  auto machine = b.add(NodeKind::kPackage, "machine", b.root(), package(0));
  EXPECT_FALSE(machine.ok()) << "the root's id is taken too";
}

TEST(TopologyBuilder, MissingParentIsRefused) {
  TopologyBuilder b;
  auto bad = b.add(NodeKind::kPackage, "package/0", 7, package(0));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(bad.error().path, "package/0");
  EXPECT_FALSE(b.add(NodeKind::kPackage, "package/0", kNoNode, package(0)).ok());
  EXPECT_EQ(b.size(), 1U);
}

TEST(TopologyBuilder, PayloadMustMatchKind) {
  TopologyBuilder b;
  auto bad = b.add(NodeKind::kPciDevice, "pci/x", b.root(), numa(0));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalid);
  EXPECT_NE(bad.error().message.find("pci_device"), std::string::npos);
  EXPECT_FALSE(b.add(NodeKind::kMachine, "m2", b.root(), package(0)).ok());
  EXPECT_TRUE(b.add(NodeKind::kPciBridge, pci_id(0, 0, 1, 0), b.root(), pci(0, 0, 1, 0)).ok());
  EXPECT_TRUE(b.add(NodeKind::kNvSwitch, "nvswitch/0", b.root(), AcceleratorInfo{}).ok());
  EXPECT_EQ(b.size(), 3U);
}

TEST(PayloadMatches, EveryKind) {
  EXPECT_TRUE(payload_matches(NodeKind::kMachine, MachineInfo{}));
  EXPECT_TRUE(payload_matches(NodeKind::kPackage, PackageInfo{}));
  EXPECT_TRUE(payload_matches(NodeKind::kNumaNode, NumaInfo{}));
  EXPECT_TRUE(payload_matches(NodeKind::kHostBridge, HostBridgeInfo{}));
  EXPECT_TRUE(payload_matches(NodeKind::kPciBridge, PciFunctionInfo{}));
  EXPECT_TRUE(payload_matches(NodeKind::kPciDevice, PciFunctionInfo{}));
  EXPECT_TRUE(payload_matches(NodeKind::kAccelerator, AcceleratorInfo{}));
  EXPECT_TRUE(payload_matches(NodeKind::kNvSwitch, AcceleratorInfo{}));
  EXPECT_TRUE(payload_matches(NodeKind::kNetDevice, NetDeviceInfo{}));
  EXPECT_TRUE(payload_matches(NodeKind::kRdmaDevice, RdmaDeviceInfo{}));
  EXPECT_FALSE(payload_matches(NodeKind::kNetDevice, RdmaDeviceInfo{}));
  EXPECT_FALSE(payload_matches(NodeKind::kHostBridge, PciFunctionInfo{}));
}

// ---------------------------------------------------------------------------------------------
// move_under

TEST(TopologyBuilder, MoveUnderReparents) {
  TopologyBuilder b;
  const NodeIndex hb =
      b.add(NodeKind::kHostBridge, "hostbridge/pci0000:00", b.root(), host_bridge(0, 0)).value();
  const NodeIndex dev =
      b.add(NodeKind::kPciDevice, pci_id(0, 0, 2, 0), hb, pci(0, 0, 2, 0)).value();
  const NodeIndex n = b.add(NodeKind::kNumaNode, "numa/0", b.root(), numa(0)).value();
  ASSERT_TRUE(b.move_under(hb, n).ok());
  EXPECT_EQ(b.node(hb).parent, n);
  EXPECT_EQ(b.node(n).children, std::vector<NodeIndex>{hb});
  EXPECT_EQ(b.node(dev).parent, hb) << "the subtree moves along";
  const auto& root_children = b.node(b.root()).children;
  EXPECT_EQ(std::count(root_children.begin(), root_children.end(), hb), 0);
}

TEST(TopologyBuilder, MoveUnderRefusesCycles) {
  TopologyBuilder b;
  const NodeIndex a = b.add(NodeKind::kPackage, "package/0", b.root(), package(0)).value();
  const NodeIndex c = b.add(NodeKind::kNumaNode, "numa/0", a, numa(0)).value();
  const NodeIndex d =
      b.add(NodeKind::kHostBridge, "hostbridge/pci0000:00", c, host_bridge(0, 0)).value();

  for (const NodeIndex target : {a, c, d}) {
    auto moved = b.move_under(a, target);
    ASSERT_FALSE(moved.ok()) << "moved a node under " << b.node(target).id;
    EXPECT_EQ(moved.error().code, ErrorCode::kInvalid);
    EXPECT_EQ(moved.error().path, "package/0");
  }
  EXPECT_EQ(b.node(a).parent, b.root()) << "a refused move changes nothing";
  EXPECT_EQ(b.node(b.root()).children, std::vector<NodeIndex>{a});
}

TEST(TopologyBuilder, MoveUnderRefusesTheRootAndUnknownNodes) {
  TopologyBuilder b;
  const NodeIndex a = b.add(NodeKind::kPackage, "package/0", b.root(), package(0)).value();
  EXPECT_FALSE(b.move_under(b.root(), a).ok());
  EXPECT_FALSE(b.move_under(42, a).ok());
  EXPECT_FALSE(b.move_under(a, 42).ok());
  EXPECT_EQ(b.node(a).parent, b.root());
}

// ---------------------------------------------------------------------------------------------
// freeze: canonical order

// One machine: 2 packages with a NUMA node each, host bridges with a switch and devices, a
// memory-only NUMA node, distances. Each step adds one node; the steps may run in any order that
// adds parents first.
struct Step {
  NodeKind kind;
  std::string id;
  std::string parent;
  NodePayload payload;
};

std::vector<Step> machine_steps() {
  return {
      {NodeKind::kPackage, "package/1", "machine", package(1)},
      {NodeKind::kPackage, "package/0", "machine", package(0)},
      {NodeKind::kNumaNode, "numa/10", "package/1", numa(10)},
      {NodeKind::kNumaNode, "numa/2", "package/1", numa(2)},
      {NodeKind::kNumaNode, "numa/0", "package/0", numa(0)},
      {NodeKind::kHostBridge, "hostbridge/pci0000:80", "numa/2", host_bridge(0, 0x80, 2)},
      {NodeKind::kHostBridge, "hostbridge/pci0000:00", "numa/0", host_bridge(0, 0, 0)},
      {NodeKind::kHostBridge, "hostbridge/pci10000:00", "numa/0", host_bridge(0x10000, 0, 0)},
      {NodeKind::kPciBridge, pci_id(0, 0x80, 3, 0), "hostbridge/pci0000:80", pci(0, 0x80, 3, 0)},
      {NodeKind::kPciDevice, pci_id(0, 0x80, 1, 0), "hostbridge/pci0000:80", pci(0, 0x80, 1, 0)},
      {NodeKind::kPciDevice, pci_id(0, 0x80, 3, 1), "hostbridge/pci0000:80", pci(0, 0x80, 3, 1)},
      {NodeKind::kPciDevice, pci_id(0, 0x81, 0, 1), pci_id(0, 0x80, 3, 0), pci(0, 0x81, 0, 1, 2)},
      {NodeKind::kPciDevice, pci_id(0, 0x81, 0, 0), pci_id(0, 0x80, 3, 0), pci(0, 0x81, 0, 0, 2)},
      {NodeKind::kPciDevice, pci_id(0x10000, 0, 4, 0), "hostbridge/pci10000:00",
       pci(0x10000, 0, 4, 0)},
      {NodeKind::kPciDevice, pci_id(0, 0, 2, 0), "hostbridge/pci0000:00", pci(0, 0, 2, 0)},
      {NodeKind::kNetDevice, "net/eth10", pci_id(0, 0x81, 0, 0), net("eth10")},
      {NodeKind::kNetDevice, "net/eth2", pci_id(0, 0x81, 0, 0), net("eth2")},
  };
}

// Adds the steps in the order given by `order` (indexes into steps), deferring a step until its
// parent exists, then distances between every pair of NUMA nodes.
Topology build(const std::vector<Step>& steps, std::vector<std::size_t> order) {
  const bool reverse_links = !order.empty() && order.front() != 0;
  TopologyBuilder b;
  while (!order.empty()) {
    std::vector<std::size_t> deferred;
    for (std::size_t i : order) {
      const Step& s = steps[i];
      auto parent = b.find(s.parent);
      if (!parent) {
        deferred.push_back(i);
        continue;
      }
      auto added = b.add(s.kind, s.id, *parent, s.payload);
      EXPECT_TRUE(added.ok()) << s.id;
    }
    EXPECT_LT(deferred.size(), order.size()) << "a step's parent never appears";
    if (deferred.size() == order.size()) break;
    order = deferred;
  }
  std::vector<NodeIndex> numa_nodes = b.nodes_of_kind(NodeKind::kNumaNode);
  if (reverse_links) std::reverse(numa_nodes.begin(), numa_nodes.end());
  for (NodeIndex from : numa_nodes) {
    for (NodeIndex to : numa_nodes) {
      b.add_link({LinkKind::kNumaDistance, from, to, from == to ? 10 : 21, 0});
    }
  }
  return std::move(b).freeze();
}

// The frozen tree as text: index, id, parent id, children ids; then the links by id.
std::string dump(const Topology& t) {
  std::string out;
  for (NodeIndex i = 0; i < t.size(); ++i) {
    const Node& n = t.node(i);
    out += std::to_string(i) + " " + n.id + " <" +
           (n.parent == kNoNode ? std::string("-") : t.node(n.parent).id) + "> [";
    for (NodeIndex c : n.children)
      out += t.node(c).id + " ";
    out += "]\n";
  }
  for (const Link& l : t.links()) {
    out += std::string(to_string(l.kind)) + " " + t.node(l.from).id + " -> " + t.node(l.to).id +
           " = " + std::to_string(l.value) + "\n";
  }
  return out;
}

TEST(TopologyFreeze, OrderDoesNotDependOnInsertionOrder) {
  const std::vector<Step> steps = machine_steps();
  std::vector<std::size_t> forward(steps.size());
  for (std::size_t i = 0; i < forward.size(); ++i)
    forward[i] = i;
  std::vector<std::size_t> backward(forward.rbegin(), forward.rend());
  std::vector<std::size_t> interleaved;
  for (std::size_t i = 0; i < forward.size(); i += 2)
    interleaved.push_back(i);
  for (std::size_t i = 1; i < forward.size(); i += 2)
    interleaved.push_back(i);

  const std::string a = dump(build(steps, forward));
  const std::string b = dump(build(steps, backward));
  const std::string c = dump(build(steps, interleaved));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
}

TEST(TopologyFreeze, CanonicalDepthFirstOrder) {
  const std::vector<Step> steps = machine_steps();
  std::vector<std::size_t> order(steps.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  const Topology t = build(steps, order);

  std::vector<std::string> ids;
  for (const Node& n : t.nodes())
    ids.push_back(n.id);
  // Kind first (packages before NUMA nodes ...), then hardware order: OS index, domain:bus, PCI
  // address with bridges and devices interleaved, and natural order of names.
  const std::vector<std::string> expected{
      "machine",
      "package/0",
      "numa/0",
      "hostbridge/pci0000:00",
      "pci/0000:00:02.0",
      "hostbridge/pci10000:00",
      "pci/10000:00:04.0",
      "package/1",
      "numa/2",
      "hostbridge/pci0000:80",
      "pci/0000:80:01.0",
      "pci/0000:80:03.0",
      "pci/0000:81:00.0",
      "net/eth2",
      "net/eth10",
      "pci/0000:81:00.1",
      "pci/0000:80:03.1",
      "numa/10",
  };
  EXPECT_EQ(ids, expected);

  // Indexes, parents and children are consistent, and every node is reachable in pre-order.
  EXPECT_EQ(t.root().id, "machine");
  for (NodeIndex i = 0; i < t.size(); ++i) {
    const Node& n = t.node(i);
    EXPECT_EQ(t.find(n.id), std::optional<NodeIndex>(i));
    for (NodeIndex c : n.children) {
      EXPECT_EQ(t.node(c).parent, i);
      EXPECT_GT(c, i) << "children come after their parent in pre-order";
    }
  }
  // Links are sorted and renumbered.
  ASSERT_EQ(t.links().size(), 9U);
  EXPECT_TRUE(std::is_sorted(t.links().begin(), t.links().end(), [](const Link& x, const Link& y) {
    return std::tie(x.kind, x.from, x.to) < std::tie(y.kind, y.from, y.to);
  }));
}

TEST(TopologyFreeze, DropsLinksToNodesThatDoNotExist) {
  TopologyBuilder b;
  const NodeIndex n = b.add(NodeKind::kNumaNode, "numa/0", b.root(), numa(0)).value();
  b.add_link({LinkKind::kNumaDistance, n, n, 10, 0});
  b.add_link({LinkKind::kNumaDistance, n, 99, 20, 0});
  b.add_link({LinkKind::kNumaDistance, kNoNode, n, 20, 0});
  const Topology t = std::move(b).freeze();
  ASSERT_EQ(t.links().size(), 1U);
  EXPECT_EQ(t.numa_distance(0, 0), std::optional<std::int64_t>(10));
}

TEST(TopologyFreeze, EmptyBuilderGivesAMachine) {
  const Topology t = TopologyBuilder().freeze();
  EXPECT_EQ(t.size(), 1U);
  EXPECT_EQ(t.root().kind, NodeKind::kMachine);
  EXPECT_TRUE(t.links().empty());
  const Topology empty;
  EXPECT_EQ(empty.size(), 1U);
  EXPECT_EQ(empty.find("machine"), std::optional<NodeIndex>(0));
}

// ---------------------------------------------------------------------------------------------
// queries

class TopologyQueries : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::size_t> order(steps_.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    topo_ = build(steps_, order);
  }
  NodeIndex at(const std::string& id) const { return topo_.find(id).value(); }

  std::vector<Step> steps_ = machine_steps();
  Topology topo_;
};

TEST_F(TopologyQueries, NodesOfKindInCanonicalOrder) {
  std::vector<std::string> ids;
  for (NodeIndex i : topo_.nodes_of_kind(NodeKind::kNumaNode))
    ids.push_back(topo_.node(i).id);
  EXPECT_EQ(ids, (std::vector<std::string>{"numa/0", "numa/2", "numa/10"}));
  EXPECT_TRUE(topo_.nodes_of_kind(NodeKind::kRdmaDevice).empty());
}

TEST_F(TopologyQueries, AncestorOfKind) {
  EXPECT_EQ(topo_.ancestor_of_kind(at("net/eth2"), NodeKind::kPciBridge),
            std::optional<NodeIndex>(at(pci_id(0, 0x80, 3, 0))));
  EXPECT_EQ(topo_.ancestor_of_kind(at("net/eth2"), NodeKind::kPackage),
            std::optional<NodeIndex>(at("package/1")));
  EXPECT_FALSE(topo_.ancestor_of_kind(at("package/0"), NodeKind::kNumaNode).has_value());
  EXPECT_FALSE(topo_.ancestor_of_kind(0, NodeKind::kMachine).has_value()) << "not the node itself";
}

TEST_F(TopologyQueries, NumaOfPrefersTheNodesOwnAttribute) {
  // Own attribute of a PCI function.
  EXPECT_EQ(topo_.numa_of(at(pci_id(0, 0x81, 0, 0))), std::optional<std::uint32_t>(2));
  // No own attribute: the host bridge's.
  EXPECT_EQ(topo_.numa_of(at(pci_id(0, 0x80, 1, 0))), std::optional<std::uint32_t>(2));
  // An OS device below a function with a NUMA node.
  EXPECT_EQ(topo_.numa_of(at("net/eth10")), std::optional<std::uint32_t>(2));
  // A NUMA node is its own.
  EXPECT_EQ(topo_.numa_of(at("numa/10")), std::optional<std::uint32_t>(10));
  // Above any NUMA node: unknown.
  EXPECT_FALSE(topo_.numa_of(at("package/1")).has_value());
  EXPECT_FALSE(topo_.numa_of(0).has_value());
}

TEST(TopologyNumaOf, HostBridgeWithoutLocalityFallsBackToTheNumaAncestor) {
  TopologyBuilder b;
  const NodeIndex n = b.add(NodeKind::kNumaNode, "numa/3", b.root(), numa(3)).value();
  const NodeIndex hb =
      b.add(NodeKind::kHostBridge, "hostbridge/pci0000:00", n, host_bridge(0, 0)).value();
  ASSERT_TRUE(b.add(NodeKind::kPciDevice, pci_id(0, 0, 1, 0), hb, pci(0, 0, 1, 0)).ok());
  const NodeIndex orphan =
      b.add(NodeKind::kHostBridge, "hostbridge/pci0000:40", b.root(), host_bridge(0, 0x40)).value();
  ASSERT_TRUE(b.add(NodeKind::kPciDevice, pci_id(0, 0x40, 1, 0), orphan, pci(0, 0x40, 1, 0)).ok());
  const Topology t = std::move(b).freeze();
  EXPECT_EQ(t.numa_of(t.find(pci_id(0, 0, 1, 0)).value()), std::optional<std::uint32_t>(3));
  EXPECT_FALSE(t.numa_of(t.find(pci_id(0, 0x40, 1, 0)).value()).has_value());
}

TEST_F(TopologyQueries, NumaDistanceByOsIndex) {
  EXPECT_EQ(topo_.numa_distance(0, 0), std::optional<std::int64_t>(10));
  EXPECT_EQ(topo_.numa_distance(0, 10), std::optional<std::int64_t>(21));
  EXPECT_EQ(topo_.numa_distance(10, 2), std::optional<std::int64_t>(21));
  EXPECT_FALSE(topo_.numa_distance(0, 1).has_value()) << "no node 1";
  EXPECT_FALSE(topo_.numa_distance(5, 5).has_value());
}

TEST(TopologyNumaDistance, AsymmetricAndMissingEntries) {
  TopologyBuilder b;
  const NodeIndex n0 = b.add(NodeKind::kNumaNode, "numa/0", b.root(), numa(0)).value();
  const NodeIndex n1 = b.add(NodeKind::kNumaNode, "numa/1", b.root(), numa(1)).value();
  b.add_link({LinkKind::kNumaDistance, n0, n1, 20, 0});
  b.add_link({LinkKind::kNumaDistance, n1, n0, 30, 0});
  b.add_link({LinkKind::kNvLink, n0, n0, 4, 0});  // another kind is not a distance
  const Topology t = std::move(b).freeze();
  EXPECT_EQ(t.numa_distance(0, 1), std::optional<std::int64_t>(20));
  EXPECT_EQ(t.numa_distance(1, 0), std::optional<std::int64_t>(30));
  EXPECT_FALSE(t.numa_distance(0, 0).has_value());
}

// ---------------------------------------------------------------------------------------------
// natural_less

TEST(NaturalLess, DigitRunsCompareAsNumbers) {
  EXPECT_TRUE(natural_less("eth2", "eth10"));
  EXPECT_FALSE(natural_less("eth10", "eth2"));
  EXPECT_TRUE(natural_less("mlx5_2", "mlx5_10"));
  EXPECT_TRUE(natural_less("nvme9n1", "nvme10n1"));
  EXPECT_TRUE(natural_less("numa/2", "numa/10"));
  EXPECT_TRUE(natural_less("a", "b"));
  EXPECT_TRUE(natural_less("eth", "eth0"));
  EXPECT_FALSE(natural_less("eth0", "eth"));
  EXPECT_TRUE(natural_less("", "a"));
  EXPECT_TRUE(natural_less("99999999999999999999998", "99999999999999999999999"))
      << "no overflow on long digit runs";
}

TEST(NaturalLess, IsAStrictTotalOrder) {
  EXPECT_FALSE(natural_less("eth2", "eth2"));
  EXPECT_FALSE(natural_less("", ""));
  // Leading zeros: equal under natural order, still ordered (exactly one way).
  EXPECT_NE(natural_less("a01", "a1"), natural_less("a1", "a01"));
  std::vector<std::string> names{"eth10", "eth2",  "eth1",   "eth02", "eth",
                                 "eth0a", "a10b2", "a10b10", "a9b99"};
  std::sort(names.begin(), names.end(), natural_less);
  EXPECT_EQ(names, (std::vector<std::string>{"a9b99", "a10b2", "a10b10", "eth", "eth0a", "eth1",
                                             "eth02", "eth2", "eth10"}));
}

}  // namespace
}  // namespace nodetopo
