// RDMA probe: ports, netdev matching, software devices, and the real captures.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
// Real captures

probes::Discovery discover_capture(const std::string& name) {
  auto root = probes::SysRoot::open(capture_root(name), probes::SysRoot::Liveness::kCapture);
  if (!root) throw std::runtime_error(root.error().describe());
  return ::nodetopo::test::discover(root.value());
}

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
