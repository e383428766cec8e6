// NIC probe: hand-made edge cases, SR-IOV, and the real hwloc captures (with lstopo as oracle).
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nodetopo/probes/net_probe.hpp>

#include "captures.hpp"
#include "devices_fake_host.hpp"
#include "discover.hpp"

namespace nodetopo::test {
namespace {

namespace fs = std::filesystem;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const NetDeviceInfo& net(const Topology& topo, const std::string& name) {
  const auto index = topo.find("net/" + name);
  if (!index) throw std::runtime_error("no net/" + name);
  return topo.node(*index).as<NetDeviceInfo>();
}

std::map<std::string, std::string> up_ether(const std::string& mac, const std::string& speed) {
  return {{"address", mac}, {"mtu", "9000"}, {"speed", speed}, {"operstate", "up"}, {"type", "1"}};
}

TEST(NetProbe, PciInterfaceCarriesItsAttributes) {
  FakeHost host;
  const std::string dev = host.add_pci({"0000:1b:00.0", 0x15b3, 0x1021, 0x020000, "mlx5_core"});
  host.add_net("ens1f0np0", dev, up_ether("b8:3f:d2:00:00:01", "400000"));
  const auto d = run(host.sys_root(), device_probes());
  const auto& n = net(d.topology, "ens1f0np0");
  EXPECT_EQ(parent_id(d.topology, "net/ens1f0np0"), "pci/0000:1b:00.0");
  EXPECT_EQ(n.mac, "b8:3f:d2:00:00:01");
  EXPECT_EQ(n.mtu, 9000U);
  EXPECT_EQ(n.speed_mbps, 400000U);
  EXPECT_EQ(n.operstate, "up");
  EXPECT_EQ(n.driver, "mlx5_core");
  EXPECT_EQ(n.link_type, "ether");
  EXPECT_FALSE(n.is_virtual);
  EXPECT_EQ(report_of(d, "net").status, ProbeStatus::kOk);
}

TEST(NetProbe, SpeedMinusOneOrEmptyIsAbsentWithoutWarning) {
  FakeHost host;
  const std::string dev = host.add_pci({"0000:02:00.0", 0x8086, 0x1521, 0x020000, "igb"});
  const std::string dev2 = host.add_pci({"0000:02:00.1", 0x8086, 0x1521, 0x020000, "igb"});
  const std::string dev3 = host.add_pci({"0000:02:00.2", 0x8086, 0x1521, 0x020000, "igb"});
  host.add_net("eth0", dev, up_ether("00:00:00:00:00:01", "-1"));
  host.add_net("eth1", dev2, up_ether("00:00:00:00:00:02", ""));
  host.add_net("eth2", dev3, up_ether("00:00:00:00:00:03", "4294967295"));
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_FALSE(net(d.topology, "eth0").speed_mbps);
  EXPECT_FALSE(net(d.topology, "eth1").speed_mbps);
  EXPECT_FALSE(net(d.topology, "eth2").speed_mbps);
  EXPECT_THAT(report_of(d, "net").warnings, IsEmpty());
}

TEST(NetProbe, GarbageSpeedAndMtuAreReportedAndDropped) {
  FakeHost host;
  const std::string dev = host.add_pci({"0000:02:00.0", 0x8086, 0x1521, 0x020000, "igb"});
  auto attrs = up_ether("00:00:00:00:00:01", "fast");
  attrs["mtu"] = "big";
  host.add_net("eth0", dev, attrs);
  const auto d = run(host.sys_root(), device_probes());
  const auto& n = net(d.topology, "eth0");
  EXPECT_FALSE(n.speed_mbps);
  EXPECT_FALSE(n.mtu);
  EXPECT_EQ(n.operstate, "up");
  const auto& warnings = report_of(d, "net").warnings;
  ASSERT_EQ(warnings.size(), 2U);
  EXPECT_THAT(warnings[0], HasSubstr("net/eth0/mtu"));
  EXPECT_THAT(warnings[1], HasSubstr("net/eth0/speed"));
}

TEST(NetProbe, MissingOperstateLeavesItEmpty) {
  FakeHost host;
  const std::string dev = host.add_pci({"0000:02:00.0", 0x8086, 0x1521, 0x020000, "igb"});
  host.add_net("eth0", dev, {{"address", "00:00:00:00:00:01"}, {"type", "1"}});
  const auto d = run(host.sys_root(), device_probes());
  const auto& n = net(d.topology, "eth0");
  EXPECT_EQ(n.operstate, "");
  EXPECT_FALSE(n.mtu);
  EXPECT_EQ(n.mac, "00:00:00:00:00:01");
  EXPECT_EQ(report_of(d, "net").status, ProbeStatus::kOk);
}

TEST(NetProbe, SoftwareInterfacesAreVirtualUnderTheMachine) {
  FakeHost host;
  host.add_net("lo", "", {{"type", "772"}, {"operstate", "unknown"}, {"mtu", "65536"}});
  host.add_net("docker0", "", {{"type", "1"}, {"operstate", "down"}});
  // A capture that dropped devices/virtual keeps only the class link.
  host.link("sys/class/net/br0", "sys/devices/virtual/net/br0");
  const auto d = run(host.sys_root(), device_probes());
  for (const char* name : {"lo", "docker0", "br0"}) {
    EXPECT_EQ(parent_id(d.topology, std::string("net/") + name), "machine") << name;
    EXPECT_TRUE(net(d.topology, name).is_virtual) << name;
  }
  EXPECT_EQ(net(d.topology, "lo").link_type, "loopback");
  EXPECT_EQ(net(d.topology, "lo").mtu, 65536U);
  EXPECT_EQ(net(d.topology, "br0").operstate, "");
  EXPECT_EQ(report_of(d, "net").status, ProbeStatus::kOk);
}

TEST(NetProbe, InterfaceBehindABusBelowPciTakesTheNearestFunction) {
  FakeHost host;
  const std::string dev = host.add_pci({"0000:00:03.0", 0x1af4, 0x1000, 0x020000, "virtio-pci"});
  host.write(dev + "/virtio0/vendor", "0x1af4\n");
  host.link(dev + "/virtio0/driver", "sys/bus/virtio/drivers/virtio_net");
  host.add_net("ens3", dev + "/virtio0", up_ether("06:7a:4c:00:00:22", "-1"));
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(parent_id(d.topology, "net/ens3"), "pci/0000:00:03.0");
  EXPECT_EQ(net(d.topology, "ens3").driver, "virtio_net");
}

TEST(NetProbe, DeviceLinkEscapingTheRootIsReportedAndTheInterfaceKept) {
  FakeHost host;
  // A plain class directory (no link into sys/devices) whose device link climbs out of the root.
  host.write("sys/class/net/eth9/address", "00:00:00:00:00:09\n");
  host.write("sys/class/net/eth9/operstate", "up\n");
  host.raw_link("sys/class/net/eth9/device", "../../../../../../../../../../etc");
  const auto d = run(host.sys_root(), device_probes());
  const auto& n = net(d.topology, "eth9");
  EXPECT_TRUE(n.is_virtual);
  EXPECT_EQ(n.mac, "00:00:00:00:00:09");
  EXPECT_EQ(n.driver, "");
  const auto& warnings = report_of(d, "net").warnings;
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("sys/class/net/eth9/device"));
  EXPECT_THAT(warnings[0], HasSubstr("above the host root"));
}

TEST(NetProbe, DeviceLinkEscapingFallsBackToTheDirectoryPath) {
  FakeHost host;
  const std::string dev = host.add_pci({"0000:05:00.0", 0x8086, 0x1521, 0x020000, "igb"});
  host.write(dev + "/net/eth5/operstate", "up\n");
  host.raw_link(dev + "/net/eth5/device", "/etc");
  host.link("sys/class/net/eth5", dev + "/net/eth5");
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(parent_id(d.topology, "net/eth5"), "pci/0000:05:00.0");
  const auto& warnings = report_of(d, "net").warnings;
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("eth5/device"));
  EXPECT_THAT(warnings[0], HasSubstr("leaves the host root"));
}

TEST(NetProbe, InterfaceLinkLeavingTheRootOrDanglingIsSkippedWithAWarning) {
  FakeHost host;
  host.raw_link("sys/class/net/evil", "/sys/devices/virtual/net/lo");
  host.link("sys/class/net/ghost", "sys/devices/pci0000:00/0000:00:09.0/net/ghost");
  host.add_net("lo", "", {{"type", "772"}});
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_FALSE(d.topology.find("net/evil"));
  EXPECT_FALSE(d.topology.find("net/ghost"));
  EXPECT_TRUE(d.topology.find("net/lo"));
  const auto& warnings = report_of(d, "net").warnings;
  ASSERT_EQ(warnings.size(), 2U);
  EXPECT_THAT(warnings[0], HasSubstr("sys/class/net/evil"));
  EXPECT_THAT(warnings[1], HasSubstr("sys/class/net/ghost"));
  EXPECT_THAT(warnings[1], HasSubstr("does not exist"));
}

// A Kubernetes node's hundreds of pod interfaces are read by several threads where the process
// may use several CPUs, on one CPU by one: the same interfaces, attributes and warnings in the
// same order either way (broken entries spread over the list, so that each thread meets some).
TEST(NetProbe, ManyInterfacesReadOnSeveralThreadsAsOnOne) {
  FakeHost host;
  for (int i = 0; i < 160; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "cali%04d", i);
    if (i % 37 == 5) {
      host.link(std::string("sys/class/net/") + name,
                std::string("sys/devices/pci0000:00/0000:00:09.0/net/") + name);
    } else {
      host.add_net(name, "",
                   {{"type", "1"}, {"operstate", "up"}, {"mtu", i % 41 == 7 ? "big" : "1450"}});
    }
  }
  if (!several_cpus()) GTEST_SKIP() << "one CPU: no second reader thread to compare with";
  const auto many = run(host.sys_root(), device_probes());
  const auto single = run_on_one_cpu(host.sys_root(), device_probes());
  const auto interfaces = [](const Topology& topo) {
    std::vector<std::string> out;
    for (NodeIndex n : topo.nodes_of_kind(NodeKind::kNetDevice)) {
      const auto& info = topo.node(n).as<NetDeviceInfo>();
      out.push_back(info.name + " " + (info.mtu ? std::to_string(*info.mtu) : "-") + " " +
                    info.operstate);
    }
    return out;
  };
  EXPECT_EQ(interfaces(many.topology), interfaces(single.topology));
  EXPECT_EQ(interfaces(many.topology).size(), 160U - 5U);
  const auto& warnings = report_of(many, "net").warnings;
  EXPECT_EQ(warnings, report_of(single, "net").warnings);
  ASSERT_EQ(warnings.size(), 5U + 4U);  // the dangling links, the garbage MTUs
  EXPECT_THAT(warnings[0], HasSubstr("cali0005"));
  EXPECT_THAT(warnings.back(), HasSubstr("cali0153"));
}

TEST(NetProbe, InterfaceOfAFunctionOutsideTheTopologyIsReported) {
  FakeHost host;
  host.add_pci({"0000:01:00.0", 0x8086, 0x1521, 0x020000, "igb"});
  // Device directory present in sys/devices, but no sys/bus/pci/devices entry.
  const std::string dir = "sys/devices/pci0000:07/0000:07:00.0";
  host.write(dir + "/vendor", "0x8086\n");
  host.add_net("eth7", dir, {{"operstate", "up"}});
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(parent_id(d.topology, "net/eth7"), "machine");
  EXPECT_TRUE(net(d.topology, "eth7").is_virtual);
  const auto& warnings = report_of(d, "net").warnings;
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("0000:07:00.0, which is not in the topology"));
}

TEST(NetProbe, NoClassDirectoryMeansUnavailable) {
  FakeHost host;
  host.add_pci({"0000:01:00.0", 0x8086, 0x1521, 0x020000, "igb"});
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(report_of(d, "net").status, ProbeStatus::kUnavailable);
  EXPECT_EQ(report_of(d, "pci").status, ProbeStatus::kOk);
}

// A 256-byte config space whose capability list holds a PCI Express capability of port type
// `type` (the 4-bit field of its flags), with header type `header`.
std::string pcie_config(std::uint16_t vendor, std::uint16_t device, unsigned type, int header) {
  std::string config(256, '\0');
  config[0] = static_cast<char>(vendor & 0xff);
  config[1] = static_cast<char>(vendor >> 8);
  config[2] = static_cast<char>(device & 0xff);
  config[3] = static_cast<char>(device >> 8);
  config[0x06] = 0x10;  // status: a capability list
  config[0x0e] = static_cast<char>(header);
  config[0x34] = 0x40;  // the list's first capability
  config[0x40] = 0x10;  // PCI Express, the last capability
  config[0x42] = static_cast<char>((type << 4) | 2);
  return config;
}

// The kernel creates sriov_* attributes only for endpoints (drivers/pci/iov.c, sriov_init): a
// root or switch port's are not read, even planted; an endpoint's are.
TEST(NetProbe, SriovAttributesAreReadForEndpointsOnly) {
  FakeHost host;
  const std::string port = host.add_pci({"0000:3a:00.0", 0x8086, 0x352a, 0x060400, "pcieport"});
  host.write(port + "/config", pcie_config(0x8086, 0x352a, 0x4, 1));
  host.write(port + "/sriov_totalvfs", "8\n");
  const std::string nic = host.add_pci({"0000:3b:00.0", 0x15b3, 0x101d, 0x020000, "mlx5_core"});
  host.write(nic + "/config", pcie_config(0x15b3, 0x101d, 0x0, 0));
  host.write(nic + "/sriov_totalvfs", "8\n");
  const auto d = run(host.sys_root(), device_probes());
  const Topology& topo = d.topology;
  const auto& port_info = topo.node(*topo.find("pci/0000:3a:00.0")).as<PciFunctionInfo>();
  ASSERT_EQ(port_info.port_type, PciePortType::kRootPort) << "the test's config is decoded";
  EXPECT_FALSE(port_info.sriov_total_vfs);
  const auto& nic_info = topo.node(*topo.find("pci/0000:3b:00.0")).as<PciFunctionInfo>();
  ASSERT_EQ(nic_info.port_type, PciePortType::kEndpoint);
  EXPECT_EQ(nic_info.sriov_total_vfs, 8U);
}

// A function whose header says it has no capability list is not PCI Express: the kernel shows
// it no *_link_* and no sriov_* attributes (pcie_dev_attrs_are_visible, sriov_init), so planted
// ones are not read. With the bit set and only the 64-byte header readable (an unprivileged
// read), they are.
TEST(NetProbe, ConventionalPciFunctionsAreNotAskedForPcieAttributes) {
  FakeHost host;
  std::vector<std::string> dirs;
  for (const char* bdf : {"0000:00:03.0", "0000:00:04.0"}) {
    dirs.push_back(host.add_pci({bdf, 0x8086, 0x100e, 0x020000, "e1000"}));
    host.write(dirs.back() + "/current_link_speed", "8.0 GT/s PCIe\n");
    host.write(dirs.back() + "/current_link_width", "8\n");
    host.write(dirs.back() + "/sriov_totalvfs", "4\n");
  }
  std::string conventional = pcie_config(0x8086, 0x100e, 0, 0).substr(0, 64);
  conventional[0x06] = 0;  // no capability list
  host.write(dirs[0] + "/config", conventional);
  const auto d = run(host.sys_root(), device_probes());
  const Topology& topo = d.topology;
  const auto& plain = topo.node(*topo.find("pci/0000:00:03.0")).as<PciFunctionInfo>();
  EXPECT_EQ(plain.link_current.speed_mts, 0U);
  EXPECT_EQ(plain.link_current.width, 0U);
  EXPECT_FALSE(plain.sriov_total_vfs);
  const auto& header_only = topo.node(*topo.find("pci/0000:00:04.0")).as<PciFunctionInfo>();
  EXPECT_EQ(header_only.link_current.speed_mts, 8000U);
  EXPECT_EQ(header_only.link_current.width, 8U);
  EXPECT_EQ(header_only.sriov_total_vfs, 4U);
}

TEST(NetProbe, SriovVirtualFunctionsAreFunctionsAndNoteTheirPhysicalFunction) {
  FakeHost host;
  const std::string pf = host.add_pci({"0000:3b:00.0", 0x15b3, 0x101d, 0x020000, "mlx5_core"});
  host.write(pf + "/sriov_totalvfs", "8\n");
  host.write(pf + "/sriov_numvfs", "2\n");
  std::vector<std::string> vfs;
  for (const char* bdf : {"0000:3b:00.2", "0000:3b:00.3"}) {
    const std::string vf = host.add_pci({bdf, 0x15b3, 0x101e, 0x020000, "mlx5_core"});
    host.link(vf + "/physfn", pf);
    host.link(pf + "/virtfn" + std::to_string(vfs.size()), vf);
    vfs.push_back(vf);
  }
  // The kernel gives no VF sriov_* attributes (a VF has no SR-IOV capability), so they are not
  // read for one: planted in a capture, they do not make a VF look like a physical function.
  host.write(vfs[0] + "/sriov_totalvfs", "4\n");
  host.add_net("ens1f0np0", pf, up_ether("00:00:00:00:00:10", "100000"));
  host.add_net("ens1f0v0", vfs[0], up_ether("00:00:00:00:00:11", "100000"));
  host.add_net("ens1f0v1", vfs[1], up_ether("00:00:00:00:00:12", "100000"));
  const auto d = run(host.sys_root(), device_probes());
  const Topology& topo = d.topology;

  const auto& pf_info = topo.node(*topo.find("pci/0000:3b:00.0")).as<PciFunctionInfo>();
  EXPECT_EQ(pf_info.sriov_total_vfs, 8U);
  EXPECT_EQ(pf_info.sriov_num_vfs, 2U);
  EXPECT_FALSE(pf_info.is_virtual_function);
  for (const char* bdf : {"0000:3b:00.2", "0000:3b:00.3"}) {
    const auto& vf = topo.node(*topo.find(std::string("pci/") + bdf)).as<PciFunctionInfo>();
    EXPECT_TRUE(vf.is_virtual_function) << bdf;
    ASSERT_TRUE(vf.physical_function) << bdf;
    EXPECT_EQ(vf.physical_function->to_string(), "0000:3b:00.0");
    EXPECT_FALSE(vf.sriov_total_vfs);
  }
  EXPECT_EQ(parent_id(topo, "net/ens1f0v0"), "pci/0000:3b:00.2");
  EXPECT_EQ(parent_id(topo, "net/ens1f0v1"), "pci/0000:3b:00.3");
  EXPECT_EQ(net(topo, "ens1f0v0").physical_function_netdev, "ens1f0np0");
  EXPECT_EQ(net(topo, "ens1f0v1").physical_function_netdev, "ens1f0np0");
  EXPECT_EQ(net(topo, "ens1f0np0").physical_function_netdev, "");
}

TEST(NetProbe, LinkTypeNames) {
  EXPECT_EQ(probes::link_type_name(1), "ether");
  EXPECT_EQ(probes::link_type_name(32), "infiniband");
  EXPECT_EQ(probes::link_type_name(772), "loopback");
  EXPECT_EQ(probes::link_type_name(65534), "none");
  EXPECT_EQ(probes::link_type_name(4242), "arphrd_4242");
}

// ---------------------------------------------------------------------------------------------
// Class entries located lexically (their link's text joined and proven canonical by one
// kernel-checked open) against the full resolution: the user-space walk never takes the lexical
// path, so a root read both ways must give the same interfaces and the same warnings.

// Everything the probe read about every interface, and where it hangs: one line each.
std::string describe_nets(const Topology& topo) {
  std::ostringstream out;
  for (NodeIndex i : topo.nodes_of_kind(NodeKind::kNetDevice)) {
    const Node& node = topo.node(i);
    const auto& n = node.as<NetDeviceInfo>();
    out << node.id << " under " << topo.node(node.parent).id << ": mac=" << n.mac
        << " mtu=" << (n.mtu ? std::to_string(*n.mtu) : "-")
        << " speed=" << (n.speed_mbps ? std::to_string(*n.speed_mbps) : "-")
        << " operstate=" << n.operstate << " driver=" << n.driver << " type=" << n.link_type
        << " virtual=" << n.is_virtual << " pf=" << n.physical_function_netdev << "\n";
  }
  return out.str();
}

// One interface of every kind the lexical path takes itself or hands to the full resolution.
void add_every_kind_of_entry(const FakeHost& host) {
  const std::string eth0 = host.add_pci({"0000:01:00.0", 0x8086, 0x1521, 0x020000, "igb"});
  host.add_net("eth0", eth0, up_ether("00:00:00:00:00:00", "1000"));
  // The device link leads into a bus below the function: still an ancestor of the entry.
  const std::string virtio = host.add_pci({"0000:00:03.0", 0x1af4, 0x1000, 0x020000, "virtio"});
  host.link(virtio + "/virtio0/driver", "sys/bus/virtio/drivers/virtio_net");
  host.add_net("ens3", virtio + "/virtio0", up_ether("00:00:00:00:00:03", "-1"));
  host.add_net("lo", "", {{"type", "772"}, {"mtu", "65536"}});
  host.link("sys/class/net/br0", "sys/devices/virtual/net/br0");  // dropped by the capture
  // Class link texts the kernel never writes: "." inside, a ".." after a name.
  const std::string f2 = host.add_pci({"0000:00:02.0", 0x8086, 0x1521, 0x020000, "igb"});
  host.write(f2 + "/net/eth1/operstate", "up\n");
  host.link(f2 + "/net/eth1/device", f2);
  host.raw_link("sys/class/net/eth1", "../../devices/./pci0000:00/0000:00:02.0/net/eth1");
  const std::string f9 = host.add_pci({"0000:00:09.0", 0x8086, 0x1521, 0x020000, "igb"});
  host.write(f9 + "/net/eth10/operstate", "up\n");
  host.link(f9 + "/net/eth10/device", f9);
  host.raw_link("sys/class/net/eth10",
                "../../devices/pci0000:00/0000:00:02.0/../0000:00:09.0/net/eth10");
  // A plain text whose path is not canonical: a symlinked directory on the way.
  const std::string f4 = host.add_pci({"0000:00:04.0", 0x8086, 0x1521, 0x020000, "igb"});
  host.write(f4 + "/net/eth2/operstate", "up\n");
  host.link(f4 + "/net/eth2/device", f4);
  host.raw_link("sys/devices/pci0000:00/alias", "0000:00:04.0");
  host.raw_link("sys/class/net/eth2", "../../devices/pci0000:00/alias/net/eth2");
  // `device` a directory, not a link.
  const std::string f5 = host.add_pci({"0000:00:05.0", 0x8086, 0x1521, 0x020000, "igb"});
  host.add_net("eth3", f5, {{"operstate", "up"}});
  fs::remove(host.root() / (f5 + "/net/eth3/device"));
  host.write(f5 + "/net/eth3/device/vendor", "0x8086\n");
  // `device` plain but not an ancestor (another function), dangling, not plain, escaping.
  const std::string f6 = host.add_pci({"0000:00:06.0", 0x8086, 0x1521, 0x020000, "igb"});
  host.add_pci({"0000:00:07.0", 0x8086, 0x1521, 0x020000, "e1000e"});
  host.write(f6 + "/net/eth4/operstate", "up\n");
  host.raw_link(f6 + "/net/eth4/device", "../../../0000:00:07.0");
  host.link("sys/class/net/eth4", f6 + "/net/eth4");
  host.write(f6 + "/net/eth5/operstate", "up\n");
  host.raw_link(f6 + "/net/eth5/device", "../../../0000:00:0f.0");
  host.link("sys/class/net/eth5", f6 + "/net/eth5");
  host.write(f6 + "/net/eth6/operstate", "up\n");
  host.raw_link(f6 + "/net/eth6/device", "../.././../0000:00:07.0");
  host.link("sys/class/net/eth6", f6 + "/net/eth6");
  host.write(f6 + "/net/eth8/operstate", "up\n");
  host.raw_link(f6 + "/net/eth8/device", "/etc");
  host.link("sys/class/net/eth8", f6 + "/net/eth8");
  // Attributes that are no regular file: a FIFO, a directory, a link to a file elsewhere.
  const std::string eth7 = host.add_net("eth7", eth0, {{"type", "1"}});
  EXPECT_EQ(::mkfifo((host.root() / (eth7 + "/operstate")).c_str(), 0600), 0);
  host.write(eth7 + "/mtu/x", "1\n");
  host.write("sys/devices/macs/eth7", "00:00:00:00:00:07\n");
  host.link(eth7 + "/address", "sys/devices/macs/eth7");
  // A plain directory for an entry, dangling and absolute class links.
  host.write("sys/class/net/eth9/operstate", "up\n");
  host.link("sys/class/net/ghost", "sys/devices/pci0000:00/0000:00:0e.0/net/ghost");
  host.raw_link("sys/class/net/evil", "/sys/devices/virtual/net/lo");
}

TEST(NetLexical, EveryKindOfEntryReadsAsTheFullResolutionReadsIt) {
  FakeHost host;
  add_every_kind_of_entry(host);
  const auto kernel =
      run(host.sys_root(probes::SysRoot::PathWalk::kKernelChecked), device_probes());
  const auto user = run(host.sys_root(probes::SysRoot::PathWalk::kUserSpace), device_probes());
  EXPECT_EQ(describe_nets(kernel.topology), describe_nets(user.topology));
  EXPECT_EQ(report_of(kernel, "net").warnings, report_of(user, "net").warnings);

  const Topology& topo = kernel.topology;
  EXPECT_EQ(parent_id(topo, "net/eth0"), "pci/0000:01:00.0");
  EXPECT_EQ(net(topo, "eth0").driver, "igb");
  EXPECT_EQ(net(topo, "eth0").speed_mbps, 1000U);
  EXPECT_EQ(parent_id(topo, "net/ens3"), "pci/0000:00:03.0");
  EXPECT_EQ(net(topo, "ens3").driver, "virtio_net");
  EXPECT_TRUE(net(topo, "lo").is_virtual);
  EXPECT_TRUE(net(topo, "br0").is_virtual);
  EXPECT_EQ(parent_id(topo, "net/eth1"), "pci/0000:00:02.0");
  EXPECT_EQ(parent_id(topo, "net/eth10"), "pci/0000:00:09.0");
  EXPECT_EQ(parent_id(topo, "net/eth2"), "pci/0000:00:04.0");
  EXPECT_EQ(parent_id(topo, "net/eth3"), "pci/0000:00:05.0");
  EXPECT_EQ(net(topo, "eth3").driver, "");
  EXPECT_EQ(parent_id(topo, "net/eth4"), "pci/0000:00:07.0");
  EXPECT_EQ(net(topo, "eth4").driver, "e1000e");
  EXPECT_EQ(parent_id(topo, "net/eth5"), "pci/0000:00:06.0");  // from its own path
  EXPECT_EQ(parent_id(topo, "net/eth6"), "pci/0000:00:07.0");
  EXPECT_EQ(parent_id(topo, "net/eth8"), "pci/0000:00:06.0");
  EXPECT_EQ(net(topo, "eth7").mac, "00:00:00:00:00:07");
  EXPECT_EQ(net(topo, "eth7").operstate, "");
  EXPECT_FALSE(net(topo, "eth7").mtu);
  EXPECT_TRUE(net(topo, "eth9").is_virtual);
  EXPECT_FALSE(topo.find("net/ghost"));
  EXPECT_FALSE(topo.find("net/evil"));
  const auto& warnings = report_of(kernel, "net").warnings;
  ASSERT_EQ(warnings.size(), 5U);
  EXPECT_THAT(warnings[0], HasSubstr("eth7/mtu"));
  EXPECT_THAT(warnings[0], HasSubstr("is a directory, not a file"));
  EXPECT_THAT(warnings[1], HasSubstr("eth7/operstate"));
  EXPECT_THAT(warnings[1], HasSubstr("not a regular file (FIFO, socket or device node)"));
  EXPECT_THAT(warnings[2], HasSubstr("eth8/device"));
  EXPECT_THAT(warnings[2], HasSubstr("leaves the host root"));
  EXPECT_THAT(warnings[3], HasSubstr("sys/class/net/evil"));
  EXPECT_THAT(warnings[4], HasSubstr("sys/class/net/ghost"));
  EXPECT_THAT(warnings[4], HasSubstr("does not exist"));
}

// The cost the lexical path exists for: a plain class link takes one open for its directory
// (which proves it canonical) and one per attribute; its link and its `device` link one readlink
// each. The full resolution took two opens more per entry for the same answers.
TEST(NetLexical, PlainEntryCostsOneOpenForItsDirectoryAndOnePerAttribute) {
  FakeHost host;
  constexpr std::size_t kInterfaces = 8;
  for (std::size_t i = 0; i < kInterfaces; ++i) {
    host.add_net("veth" + std::to_string(i), "", up_ether("00:00:00:00:00:01", "10000"));
  }
  const probes::SysRoot root = host.sys_root(probes::SysRoot::PathWalk::kKernelChecked);
  if (!root.checks_paths_in_kernel()) GTEST_SKIP() << "the kernel has no openat2";
  probes::ProbeContext ctx(root, {}, "net");
  TopologyBuilder builder;
  probes::NetProbe probe;
  const probes::SysRoot::Stats before = root.stats();
  ASSERT_TRUE(probe.discover(ctx, builder).ok());
  const probes::SysRoot::Stats after = root.stats();
  constexpr std::size_t kAttributes = 5;  // address, mtu, speed, operstate, type
  EXPECT_EQ(after.opens - before.opens, 1 + kInterfaces * (1 + kAttributes));
  EXPECT_EQ(after.readlinks - before.readlinks, kInterfaces * 2);
  EXPECT_EQ(after.dir_lists - before.dir_lists, 1U);
  const auto veth7 = builder.find("net/veth7");
  ASSERT_TRUE(veth7);
  EXPECT_EQ(builder.node(*veth7).as<NetDeviceInfo>().mtu, 9000U);
}

// ---------------------------------------------------------------------------------------------
// Real captures

struct Placed {
  std::string name;
  std::string parent;
  bool operator<(const Placed& o) const {
    return std::tie(name, parent) < std::tie(o.name, o.parent);
  }
  bool operator==(const Placed& o) const = default;
};

void PrintTo(const Placed& p, std::ostream* os) {
  *os << p.name << " under " << p.parent;
}

std::vector<Placed> placed_of_kind(const Topology& topo, NodeKind kind) {
  std::vector<Placed> out;
  for (NodeIndex i : topo.nodes_of_kind(kind)) {
    const Node& node = topo.node(i);
    out.push_back({node.id, topo.node(node.parent).id});
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(NetCaptures, Em64tConnectX3AndIgb) {
  const auto d = discover_capture("32em64t-2n8c+1mic");
  const Topology& topo = d.topology;
  EXPECT_THAT(
      placed_of_kind(topo, NodeKind::kNetDevice),
      ElementsAre(Placed{"net/br0", "machine"}, Placed{"net/eth0", "pci/0000:02:00.0"},
                  Placed{"net/eth0.1015", "machine"}, Placed{"net/eth1", "pci/0000:02:00.3"},
                  Placed{"net/ib0", "pci/0000:82:00.0"}, Placed{"net/lo", "machine"},
                  Placed{"net/mic0", "machine"}));
  const auto& eth0 = net(topo, "eth0");
  EXPECT_EQ(eth0.mac, "84:8f:69:fe:cc:40");
  EXPECT_EQ(eth0.speed_mbps, 1000U);
  EXPECT_EQ(eth0.mtu, 1500U);
  EXPECT_EQ(eth0.operstate, "up");
  EXPECT_EQ(eth0.driver, "igb");
  EXPECT_EQ(eth0.link_type, "ether");
  const auto& eth1 = net(topo, "eth1");
  EXPECT_EQ(eth1.operstate, "down");
  EXPECT_FALSE(eth1.speed_mbps);
  const auto& ib0 = net(topo, "ib0");
  EXPECT_EQ(ib0.link_type, "infiniband");
  EXPECT_EQ(ib0.mtu, 2044U);
  EXPECT_EQ(ib0.driver, "mlx4_core");
  EXPECT_EQ(ib0.operstate, "up");
  EXPECT_FALSE(ib0.speed_mbps);  // IPoIB in 2013 did not report a speed
  EXPECT_EQ(topo.numa_of(*topo.find("net/ib0")), 1U);
  EXPECT_TRUE(net(topo, "lo").is_virtual);
  EXPECT_EQ(report_of(d, "net").status, ProbeStatus::kOk);
}

TEST(NetCaptures, Intel64BroadcomAndQlogic) {
  const auto d = discover_capture("40intel64-2g2n4c+pci");
  const Topology& topo = d.topology;
  EXPECT_THAT(
      placed_of_kind(topo, NodeKind::kNetDevice),
      ElementsAre(Placed{"net/eth0", "pci/0000:02:00.0"}, Placed{"net/eth1", "pci/0000:02:00.1"},
                  Placed{"net/eth2", "pci/0000:03:00.0"}, Placed{"net/eth3", "pci/0000:03:00.1"},
                  Placed{"net/ib0", "pci/0000:43:00.0"}, Placed{"net/lo", "machine"}));
  for (const char* name : {"eth0", "eth1", "eth2", "eth3"}) {
    EXPECT_EQ(net(topo, name).driver, "bnx2") << name;
  }
  EXPECT_EQ(net(topo, "eth0").speed_mbps, 1000U);
  EXPECT_EQ(net(topo, "eth3").operstate, "down");
  EXPECT_EQ(net(topo, "ib0").driver, "ib_qib");
  EXPECT_EQ(net(topo, "ib0").mac, "80:00:00:03:fe:80:00:00:00:00:00:00:00:11:75:00:00:77:cf:c8");
}

TEST(NetCaptures, VectorEngineHostHasOnlyTheX722Ports) {
  const auto d = discover_capture("32intel64-2p8co2t+8ve");
  const Topology& topo = d.topology;
  EXPECT_THAT(placed_of_kind(topo, NodeKind::kNetDevice),
              ElementsAre(Placed{"net/enp96s0f0", "pci/0000:60:00.0"},
                          Placed{"net/enp96s0f1", "pci/0000:60:00.1"}));
  EXPECT_EQ(net(topo, "enp96s0f0").driver, "i40e");
  // The two ConnectX-4 (15b3:1013) are in the PCI tree, but the capture holds neither a netdev
  // nor an RDMA device for them.
  for (const char* id : {"pci/0000:1a:00.0", "pci/0000:3e:00.0"}) {
    const auto index = topo.find(id);
    ASSERT_TRUE(index) << id;
    EXPECT_EQ(topo.node(*index).as<PciFunctionInfo>().device_id, 0x1013);
    EXPECT_THAT(topo.node(*index).children, IsEmpty()) << id;
  }
  EXPECT_THAT(placed_of_kind(topo, NodeKind::kRdmaDevice), IsEmpty());
  EXPECT_EQ(report_of(d, "rdma").status, ProbeStatus::kUnavailable);
}

TEST(NetCaptures, VirtioNicWithSpeedMinusOne) {
  const auto d = discover_capture("2pa-pcidomain32bits");
  EXPECT_THAT(placed_of_kind(d.topology, NodeKind::kNetDevice),
              ElementsAre(Placed{"net/ens3", "pci/0000:00:03.0"}, Placed{"net/lo", "machine"}));
  const auto& ens3 = net(d.topology, "ens3");
  EXPECT_FALSE(ens3.speed_mbps);  // the capture says -1
  EXPECT_EQ(ens3.driver, "virtio_net");
  EXPECT_EQ(ens3.operstate, "up");
}

// lstopo lists network and OpenFabrics OS devices under their PCI function: ours must agree.
std::set<Placed> lstopo_os_devices(const std::string& capture) {
  const auto result = run_command(
      {"lstopo-no-graphics", "-v", "--whole-io", "--of", "console"},
      {"HWLOC_FSROOT=" + capture_root(capture).string(), "HWLOC_COMPONENTS=linux,stop"});
  if (result.exit_code != 0) throw std::runtime_error("lstopo failed: " + result.err);
  std::set<Placed> out;
  std::vector<std::pair<std::size_t, std::string>> pci_stack;  // indent, busid
  std::istringstream in(result.out);
  for (std::string line; std::getline(in, line);) {
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    while (!pci_stack.empty() && pci_stack.back().first >= indent)
      pci_stack.pop_back();
    const std::string body = line.substr(indent);
    if (body.starts_with("PCI ")) {
      const std::size_t at = body.find("busid=");
      pci_stack.emplace_back(indent, body.substr(at + 6, body.find(' ', at) - at - 6));
    } else if ((body.starts_with("Network ") || body.starts_with("OpenFabrics ")) &&
               !pci_stack.empty()) {
      const std::size_t close = body.rfind('"');
      const std::size_t open = body.rfind('"', close - 1);
      const std::string name = body.substr(open + 1, close - open - 1);
      const std::string kind = body.starts_with("Network ") ? "net/" : "rdma/";
      out.insert({kind + name, "pci/" + pci_stack.back().second});
    }
  }
  return out;
}

class NetCaptureOracle : public ::testing::TestWithParam<std::string> {};

TEST_P(NetCaptureOracle, PciPlacementMatchesLstopo) {
  const auto d = discover_capture(GetParam());
  std::set<Placed> ours;
  for (NodeKind kind : {NodeKind::kNetDevice, NodeKind::kRdmaDevice}) {
    for (const Placed& p : placed_of_kind(d.topology, kind)) {
      if (p.parent != "machine") ours.insert(p);
    }
  }
  const std::set<Placed> expected = lstopo_os_devices(GetParam());
  EXPECT_EQ(ours, expected);
}

INSTANTIATE_TEST_SUITE_P(Captures, NetCaptureOracle,
                         ::testing::Values("32em64t-2n8c+1mic", "40intel64-2g2n4c+pci",
                                           "32intel64-2p8co2t+8ve", "2pa-pcidomain32bits"),
                         [](const auto& param) {
                           std::string name = param.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace nodetopo::test
