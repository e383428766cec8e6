// RDMA probe: ports, netdev matching, software devices, and the real captures.
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nodetopo/probes/rdma_probe.hpp>

#include "captures.hpp"
#include "devices_fake_host.hpp"
#include "discover.hpp"

namespace nodetopo::test {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

const RdmaDeviceInfo& rdma(const Topology& topo, const std::string& name) {
  const auto index = topo.find("rdma/" + name);
  if (!index) throw std::runtime_error("no rdma/" + name);
  return topo.node(*index).as<RdmaDeviceInfo>();
}

std::map<std::string, std::string> port(const std::string& state, const std::string& rate,
                                        const std::string& layer) {
  return {{"state", state}, {"rate", rate}, {"link_layer", layer}};
}

TEST(RdmaProbe, RoceNetdevFromGidAttributes) {
  FakeHost host;
  const std::string dev = host.add_pci({"0000:1b:00.0", 0x15b3, 0x1021, 0x020000, "mlx5_core"});
  host.add_net("ens1np0", dev, {{"operstate", "up"}, {"dev_port", "0"}});
  auto p1 = port("4: ACTIVE", "400 Gb/sec (4X NDR)", "Ethernet");
  p1["gid_attrs/ndevs/0"] = "ens1np0";
  host.add_rdma("mlx5_0", dev, "b83f:d203:0001:0002", {{1, p1}});
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(parent_id(d.topology, "rdma/mlx5_0"), "pci/0000:1b:00.0");
  const auto& r = rdma(d.topology, "mlx5_0");
  EXPECT_EQ(r.name, "mlx5_0");
  EXPECT_EQ(r.node_guid, "b83f:d203:0001:0002");
  EXPECT_FALSE(r.is_virtual);
  ASSERT_EQ(r.ports.size(), 1U);
  EXPECT_EQ(r.ports[0].number, 1U);
  EXPECT_EQ(r.ports[0].state, "ACTIVE");
  EXPECT_EQ(r.ports[0].rate, "400 Gb/sec (4X NDR)");
  EXPECT_EQ(r.ports[0].link_layer, "Ethernet");
  EXPECT_EQ(r.ports[0].netdev, "ens1np0");
  EXPECT_EQ(report_of(d, "rdma").status, ProbeStatus::kOk);
}

TEST(RdmaProbe, DualPortDeviceMatchesInterfacesByDevPort) {
  FakeHost host;
  const std::string dev = host.add_pci({"0000:04:00.0", 0x15b3, 0x1007, 0x020000, "mlx4_core"});
  host.add_net("eth3", dev, {{"dev_port", "1"}, {"iflink", "5"}, {"ifindex", "5"}});
  host.add_net("eth2", dev, {{"dev_port", "0"}, {"iflink", "4"}, {"ifindex", "4"}});
  host.add_rdma("mlx4_0", dev, "",
                {{1, port("4: ACTIVE", "40 Gb/sec (4X QDR)", "Ethernet")},
                 {2, port("1: DOWN", "10 Gb/sec (1X QDR)", "Ethernet")}});
  const auto d = run(host.sys_root(), device_probes());
  const auto& r = rdma(d.topology, "mlx4_0");
  ASSERT_EQ(r.ports.size(), 2U);
  EXPECT_EQ(r.ports[0].netdev, "eth2");
  EXPECT_EQ(r.ports[1].netdev, "eth3");
  EXPECT_EQ(r.ports[1].state, "DOWN");
  EXPECT_EQ(r.node_guid, "");
}

TEST(RdmaProbe, InfinibandPortTakesTheParentIpoibInterfaceNotItsChild) {
  FakeHost host;
  const std::string dev = host.add_pci({"0000:82:00.0", 0x15b3, 0x1021, 0x020700, "mlx5_core"});
  host.add_net("ib0", dev, {{"dev_port", "0"}, {"iflink", "7"}, {"ifindex", "7"}, {"type", "32"}});
  host.add_net("ib0.8001", dev,
               {{"dev_port", "0"}, {"iflink", "7"}, {"ifindex", "9"}, {"type", "32"}});
  host.add_rdma("mlx5_0", dev, "0002:c903:00f9:bfa0",
                {{1, port("4: ACTIVE", "400 Gb/sec (4X NDR)", "InfiniBand")}});
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(rdma(d.topology, "mlx5_0").ports.at(0).netdev, "ib0");
}

TEST(RdmaProbe, AmbiguousInterfacesLeaveTheNetdevEmpty) {
  FakeHost host;
  const std::string dev = host.add_pci({"0000:05:00.0", 0x15b3, 0x1021, 0x020000, "mlx5_core"});
  host.add_net("rep0", dev, {{"dev_port", "0"}});
  host.add_net("rep1", dev, {{"dev_port", "0"}});
  host.add_rdma("mlx5_0", dev, "", {{1, port("4: ACTIVE", "", "Ethernet")}});
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(rdma(d.topology, "mlx5_0").ports.at(0).netdev, "");
}

TEST(RdmaProbe, SoftRdmaIsVirtualUnderTheMachine) {
  FakeHost host;
  host.add_rdma("rxe0", "", "", {{1, port("4: ACTIVE", "100 Gb/sec (4X EDR)", "Ethernet")}});
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(parent_id(d.topology, "rdma/rxe0"), "machine");
  EXPECT_TRUE(rdma(d.topology, "rxe0").is_virtual);
  EXPECT_EQ(rdma(d.topology, "rxe0").ports.at(0).state, "ACTIVE");
}

TEST(RdmaProbe, BadPortEntryIsReportedAndTheOthersKept) {
  FakeHost host;
  const std::string dev = host.add_pci({"0000:05:00.0", 0x15b3, 0x1021, 0x020000, "mlx5_core"});
  const std::string dir = host.add_rdma("mlx5_0", dev, "", {{1, port("ACTIVE", "", "")}});
  host.write(dir + "/ports/lost+found/state", "x\n");
  const auto d = run(host.sys_root(), device_probes());
  const auto& r = rdma(d.topology, "mlx5_0");
  ASSERT_EQ(r.ports.size(), 1U);
  EXPECT_EQ(r.ports[0].state, "ACTIVE");  // no "N: " prefix: kept as is
  const auto& warnings = report_of(d, "rdma").warnings;
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("ports/lost+found"));
}

// ---------------------------------------------------------------------------------------------
// Devices and ports read through directory descriptors against the full resolution: the
// user-space walk never takes the lexical path, so a root read both ways must give the same
// devices and the same warnings.

std::string describe_rdma(const Topology& topo) {
  std::ostringstream out;
  for (NodeIndex i : topo.nodes_of_kind(NodeKind::kRdmaDevice)) {
    const Node& node = topo.node(i);
    const auto& r = node.as<RdmaDeviceInfo>();
    out << node.id << " under " << topo.node(node.parent).id << ": guid=" << r.node_guid
        << " virtual=" << r.is_virtual << "\n";
    for (const RdmaPort& p : r.ports) {
      out << "  port " << p.number << " state=" << p.state << " rate=" << p.rate
          << " layer=" << p.link_layer << " netdev=" << p.netdev << "\n";
    }
  }
  return out.str();
}

TEST(RdmaLexical, EveryKindOfDeviceAndPortReadsAsTheFullResolutionReadsIt) {
  FakeHost host;
  // A dual-port device whose ports find their interfaces by dev_port, one of them through a
  // class link that is not canonical (a symlinked directory on the way).
  const std::string dev = host.add_pci({"0000:04:00.0", 0x15b3, 0x1007, 0x020000, "mlx4_core"});
  host.add_net("eth2", dev, {{"dev_port", "0"}, {"iflink", "4"}, {"ifindex", "4"}});
  host.write(dev + "/net/eth3/dev_port", "1\n");
  host.link(dev + "/net/eth3/device", dev);
  host.raw_link("sys/devices/pci0000:04/alias", "0000:04:00.0");
  host.raw_link("sys/class/net/eth3", "../../devices/pci0000:04/alias/net/eth3");
  const std::string mlx4 = host.add_rdma("mlx4_0", dev, "0002:c903:00f9:bfa0",
                                         {{1, port("4: ACTIVE", "40 Gb/sec (4X QDR)", "Ethernet")},
                                          {2, port("1: DOWN", "10 Gb/sec (1X QDR)", "Ethernet")}});
  host.write(mlx4 + "/ports/lost+found/state", "x\n");
  // A port that is a link to a directory elsewhere, a FIFO for a state.
  const std::string dev5 = host.add_pci({"0000:05:00.0", 0x15b3, 0x1021, 0x020000, "mlx5_core"});
  auto p1 = port("4: ACTIVE", "400 Gb/sec (4X NDR)", "Ethernet");
  p1["gid_attrs/ndevs/0"] = "ens5np0";
  const std::string mlx5 = host.add_rdma("mlx5_0", dev5, "", {{1, p1}});
  host.write("sys/devices/ports/two/state", "4: ACTIVE\n");
  host.link(mlx5 + "/ports/2", "sys/devices/ports/two");
  host.write(mlx5 + "/ports/3/rate", "1 Gb/sec\n");
  EXPECT_EQ(::mkfifo((host.root() / (mlx5 + "/ports/3/state")).c_str(), 0600), 0);
  // `ports` itself a link; a class link whose text is not plain; a software device.
  const std::string dev6 = host.add_pci({"0000:06:00.0", 0x15b3, 0x1021, 0x020000, "mlx5_core"});
  const std::string mlx6 = dev6 + "/infiniband/mlx5_1";
  host.write(mlx6 + "/node_guid", "0000:0000:0000:0006\n");
  host.link(mlx6 + "/device", dev6);
  host.write("sys/devices/ib_ports/1/state", "4: ACTIVE\n");
  host.link(mlx6 + "/ports", "sys/devices/ib_ports");
  host.raw_link("sys/class/infiniband/mlx5_1",
                "../../devices/pci0000:06/0000:06:00.0/./infiniband/mlx5_1");
  host.add_rdma("rxe0", "", "", {{1, port("4: ACTIVE", "100 Gb/sec (4X EDR)", "Ethernet")}});

  const auto kernel =
      run(host.sys_root(probes::SysRoot::PathWalk::kKernelChecked), device_probes());
  const auto user = run(host.sys_root(probes::SysRoot::PathWalk::kUserSpace), device_probes());
  EXPECT_EQ(describe_rdma(kernel.topology), describe_rdma(user.topology));
  EXPECT_EQ(report_of(kernel, "rdma").warnings, report_of(user, "rdma").warnings);

  const Topology& topo = kernel.topology;
  const auto& r4 = rdma(topo, "mlx4_0");
  EXPECT_EQ(parent_id(topo, "rdma/mlx4_0"), "pci/0000:04:00.0");
  EXPECT_EQ(r4.node_guid, "0002:c903:00f9:bfa0");
  ASSERT_EQ(r4.ports.size(), 2U);
  EXPECT_EQ(r4.ports[0].netdev, "eth2");
  EXPECT_EQ(r4.ports[1].netdev, "eth3");
  EXPECT_EQ(r4.ports[1].rate, "10 Gb/sec (1X QDR)");
  const auto& r5 = rdma(topo, "mlx5_0");
  ASSERT_EQ(r5.ports.size(), 3U);
  EXPECT_EQ(r5.ports[0].netdev, "ens5np0");
  EXPECT_EQ(r5.ports[1].state, "ACTIVE");
  EXPECT_EQ(r5.ports[2].state, "");
  EXPECT_EQ(r5.ports[2].rate, "1 Gb/sec");
  const auto& r6 = rdma(topo, "mlx5_1");
  EXPECT_EQ(parent_id(topo, "rdma/mlx5_1"), "pci/0000:06:00.0");
  EXPECT_EQ(r6.node_guid, "0000:0000:0000:0006");
  ASSERT_EQ(r6.ports.size(), 1U);
  EXPECT_EQ(r6.ports[0].state, "ACTIVE");
  EXPECT_TRUE(rdma(topo, "rxe0").is_virtual);
  const auto& warnings = report_of(kernel, "rdma").warnings;
  ASSERT_EQ(warnings.size(), 2U);
  EXPECT_THAT(warnings[0], HasSubstr("mlx4_0/ports/lost+found"));
  EXPECT_THAT(warnings[1], HasSubstr("mlx5_0/ports/3/state"));
  EXPECT_THAT(warnings[1], HasSubstr("not a regular file (FIFO, socket or device node)"));
}

// The cost the descriptors exist for: the device's directory opened once (proving its class
// link), `ports` and each port directory once, and one open per attribute.
TEST(RdmaLexical, PlainDeviceCostsOneOpenPerDirectoryAndAttribute) {
  FakeHost host;
  constexpr std::size_t kPorts = 4;
  std::map<int, std::map<std::string, std::string>> ports;
  for (std::size_t i = 1; i <= kPorts; ++i) {
    ports[static_cast<int>(i)] = port("4: ACTIVE", "100 Gb/sec (4X EDR)", "Ethernet");
  }
  host.add_rdma("rxe0", "", "0000:0000:0000:0001", ports);
  auto root = probes::SysRoot::open(host.root(), probes::SysRoot::Liveness::kCapture);
  ASSERT_TRUE(root.ok());
  if (!root.value().checks_paths_in_kernel()) GTEST_SKIP() << "the kernel has no openat2";
  probes::ProbeContext ctx(root.value(), {}, "rdma");
  TopologyBuilder builder;
  probes::RdmaProbe probe;
  const probes::SysRoot::Stats before = root.value().stats();
  ASSERT_TRUE(probe.discover(ctx, builder).ok());
  const probes::SysRoot::Stats after = root.value().stats();
  // Class directory, device directory, node_guid, ports; per port its directory, state, rate,
  // link_layer and gid_attrs/ndevs/0.
  EXPECT_EQ(after.opens - before.opens, 4 + kPorts * 5);
  EXPECT_EQ(after.readlinks - before.readlinks, 2U);  // the class link and `device`
  EXPECT_EQ(after.dir_lists - before.dir_lists, 2U);  // the class directory and `ports`
  const auto rxe0 = builder.find("rdma/rxe0");
  ASSERT_TRUE(rxe0);
  EXPECT_EQ(builder.node(*rxe0).as<RdmaDeviceInfo>().ports.size(), kPorts);
}

// ---------------------------------------------------------------------------------------------
// Real captures

TEST(RdmaCaptures, ConnectX3OnNumaNode1WithItsIpoibInterface) {
  const auto d = discover_capture("32em64t-2n8c+1mic");
  const Topology& topo = d.topology;
  EXPECT_EQ(parent_id(topo, "rdma/mlx4_0"), "pci/0000:82:00.0");
  EXPECT_EQ(topo.numa_of(*topo.find("rdma/mlx4_0")), 1U);
  const auto& r = rdma(topo, "mlx4_0");
  EXPECT_EQ(r.node_guid, "0002:c903:00f9:bfa0");
  ASSERT_EQ(r.ports.size(), 1U);
  EXPECT_EQ(r.ports[0].state, "ACTIVE");
  EXPECT_EQ(r.ports[0].rate, "56 Gb/sec (4X FDR)");
  EXPECT_EQ(r.ports[0].link_layer, "InfiniBand");
  EXPECT_EQ(r.ports[0].netdev, "ib0");
  // scif0 (the Xeon Phi's software RDMA) points at a directory the capture does not hold.
  EXPECT_FALSE(topo.find("rdma/scif0"));
  const auto& warnings = report_of(d, "rdma").warnings;
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("sys/class/infiniband/scif0"));
}

TEST(RdmaCaptures, QlogicQib) {
  const auto d = discover_capture("40intel64-2g2n4c+pci");
  EXPECT_EQ(parent_id(d.topology, "rdma/qib0"), "pci/0000:43:00.0");
  const auto& r = rdma(d.topology, "qib0");
  EXPECT_EQ(r.node_guid, "0011:7500:0077:cfc8");
  ASSERT_EQ(r.ports.size(), 1U);
  EXPECT_EQ(r.ports[0].rate, "40 Gb/sec (4X QDR)");
  EXPECT_EQ(r.ports[0].netdev, "ib0");
  EXPECT_THAT(report_of(d, "rdma").warnings, IsEmpty());
}

}  // namespace
}  // namespace nodetopo::test
