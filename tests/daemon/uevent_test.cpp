// Parsing kernel uevent messages and choosing the ones that can change the topology.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nodetopo/daemon/uevent_source.hpp>
#include <nodetopo/probes/discovery_cache.hpp>

namespace nodetopo::test {
namespace {

using daemon::changes_of;
using daemon::is_topology_event;
using daemon::parse_uevent;
using daemon::Uevent;

std::string kernel_message(std::initializer_list<std::string> lines) {
  std::string out;
  for (const auto& l : lines) {
    out += l;
    out.push_back('\0');
  }
  return out;
}

TEST(Uevent, ParsesTheKernelFormat) {
  const auto e = parse_uevent(
      kernel_message({"add@/devices/pci0000:00/0000:00:01.0/0000:01:00.0", "ACTION=add",
                      "DEVPATH=/devices/pci0000:00/0000:00:01.0/0000:01:00.0", "SUBSYSTEM=pci",
                      "PCI_ID=10DE:2330", "SEQNUM=4711"}));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->action, "add");
  EXPECT_EQ(e->devpath, "/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
  EXPECT_EQ(e->subsystem, "pci");
}

TEST(Uevent, AcceptsNewlinesForHandWrittenReplays) {
  const auto e = parse_uevent("change@/devices/virtual/net/eth0\nSUBSYSTEM=net\n");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->action, "change");
  EXPECT_EQ(e->subsystem, "net");
}

TEST(Uevent, RejectsUdevMessagesAndGarbage) {
  std::string udev("libudev\0\xfe\xed\xca\xfe", 12);
  EXPECT_FALSE(parse_uevent(udev));
  EXPECT_FALSE(parse_uevent(""));
  EXPECT_FALSE(parse_uevent("@/devices/x"));
  EXPECT_FALSE(parse_uevent("add@"));
  EXPECT_FALSE(parse_uevent(std::string(5000, 'x')));
}

TEST(Uevent, TopologySubsystems) {
  for (const char* s : {"pci", "net", "infiniband", "infiniband_verbs", "drm", "accel", "kfd",
                        "nvidia-caps", "nvidia-nvlink"}) {
    EXPECT_TRUE(is_topology_event(Uevent{"change", "/devices/x", s})) << s;
  }
  EXPECT_TRUE(is_topology_event(Uevent{"offline", "/devices/system/cpu/cpu3", "cpu"}));
  EXPECT_TRUE(is_topology_event(Uevent{"online", "/devices/system/memory/memory9", "memory"}));
  EXPECT_FALSE(is_topology_event(Uevent{"change", "/devices/system/cpu/cpu3", "cpu"}));
  for (const char* s : {"block", "usb", "tty", "power_supply", "cpufreq", ""}) {
    EXPECT_FALSE(is_topology_event(Uevent{"add", "/devices/x", s})) << s;
  }
}

// What each event says may have changed, for the agent's discovery cache.
TEST(Uevent, ChangesOfEachSubsystem) {
  const auto pci = changes_of(Uevent{"add", "/devices/pci0000:00/0000:00:03.0", "pci"});
  EXPECT_FALSE(pci.everything);
  EXPECT_TRUE(pci.pci);
  EXPECT_EQ(pci.pci_paths, std::vector<std::string>{"sys/devices/pci0000:00/0000:00:03.0"});
  EXPECT_FALSE(pci.net);

  const auto net = changes_of(Uevent{"move", "/devices/pci0000:00/0000:00:03.0/net/ens3", "net"});
  EXPECT_TRUE(net.net);
  EXPECT_EQ(net.net_paths,
            std::vector<std::string>{"sys/devices/pci0000:00/0000:00:03.0/net/ens3"});
  EXPECT_FALSE(net.pci);
  EXPECT_FALSE(net.rdma);

  for (const char* s : {"infiniband", "infiniband_verbs"}) {
    const auto rdma =
        changes_of(Uevent{"add", "/devices/pci0000:00/0000:00:03.0/infiniband/mlx5_0", s});
    EXPECT_TRUE(rdma.rdma) << s;
    EXPECT_EQ(rdma.rdma_paths.size(), 1U) << s;
    EXPECT_FALSE(rdma.net) << s;
  }

  // A path outside /devices names nothing: every device of the kind is read again.
  const auto unnamed = changes_of(Uevent{"change", "/class/net/eth0", "net"});
  EXPECT_TRUE(unnamed.net);
  EXPECT_TRUE(unnamed.net_paths.empty());

  const auto cpu = changes_of(Uevent{"offline", "/devices/system/cpu/cpu3", "cpu"});
  EXPECT_TRUE(cpu.platform);
  EXPECT_FALSE(cpu.pci || cpu.net || cpu.rdma);

  // The accelerators' probes run on every discovery: nothing cached to invalidate.
  const auto drm =
      changes_of(Uevent{"change", "/devices/pci0000:00/0000:00:02.0/drm/card0", "drm"});
  EXPECT_FALSE(drm.everything || drm.platform || drm.pci || drm.net || drm.rdma);
}

}  // namespace
}  // namespace nodetopo::test
