// Where a PCI function sits, from the text of its bus/pci/devices link and its device path.
#include "pci/pci_device_path.hpp"

#include <gtest/gtest.h>

namespace nodetopo::probes {
namespace {

constexpr std::string_view kBus = "sys/bus/pci/devices";

TEST(JoinPlainLink, KernelLinksJoinToTheirDevicePath) {
  EXPECT_EQ(join_plain_link(kBus, "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0"),
            "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
  EXPECT_EQ(join_plain_link("sys/class/net", "../../devices/virtual/net/lo"),
            "sys/devices/virtual/net/lo");
  EXPECT_EQ(join_plain_link(kBus, "0000:00:03.0"), "sys/bus/pci/devices/0000:00:03.0");
}

TEST(JoinPlainLink, AnythingElseNeedsTheFullWalk) {
  // Absolute, a trailing slash, "." or ".." after a name, climbing above the root, only "..".
  for (std::string_view target :
       {"/sys/devices/pci0000:00/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0/",
        "../../../devices/./pci0000:00", "../../../devices/pci0000:00/x/../0000:00:01.0",
        "../../../../../etc", "../..", "", "../../../devices//pci0000:00"}) {
    EXPECT_EQ(join_plain_link(kBus, target), std::nullopt) << target;
  }
}

TEST(ParseDevicePath, AncestorsRootBusAndVmdDomains) {
  auto e = parse_device_path("sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:04.0");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->address.to_string(), "0000:19:04.0");
  EXPECT_EQ(e->root_bus, "pci0000:17");
  ASSERT_EQ(e->ancestors.size(), 2U);
  EXPECT_EQ(e->ancestors.front().to_string(), "0000:17:00.0");

  // Intel VMD: a root bus inside a function; the function keeps the outer root as PCIe root.
  auto vmd = parse_device_path("sys/devices/pci0000:00/0000:00:0e.0/pci10000:00/10000:00:02.0");
  ASSERT_TRUE(vmd.has_value());
  EXPECT_EQ(vmd->root_bus, "pci10000:00");
  EXPECT_EQ(vmd->pcie_root, "pci0000:00");
  EXPECT_TRUE(vmd->ancestors.empty());

  EXPECT_FALSE(parse_device_path("sys/devices/pci0000:00/0000:00:01.0/net/eth0").has_value());
  EXPECT_FALSE(parse_device_path("sys/bus/pci/devices/0000:00:01.0").has_value());
  EXPECT_FALSE(parse_device_path("sys/devices/pci0000:00").has_value());
}

}  // namespace
}  // namespace nodetopo::probes
