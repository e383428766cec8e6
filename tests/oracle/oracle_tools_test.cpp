// The oracle readers themselves, on literal tool output: if they misread a tree, the oracle tests
// would compare against nonsense.
#include "oracle_tools.hpp"

#include <stdexcept>

#include <gtest/gtest.h>

namespace nodetopo::oracle {
namespace {

TEST(LspciTree, FlatBusAndBridges) {
  // lspci -tv of 32em64t-2n8c+1mic, cut.
  const std::string text =
      "-+-[0000:00]-+-00.0  Intel Corporation Xeon E5/Core i7 DMI2\n"
      " |           +-01.0-[01]--\n"
      " |           +-01.1-[02]--+-00.0  Intel Corporation I350 Gigabit Network Connection\n"
      " |           |            \\-00.3  Intel Corporation I350 Gigabit Network Connection\n"
      " |           +-11.0--\n"
      " |           +-1c.0-[04-05]----00.0-[05]----00.0  ASPEED Technology, Inc. ASPEED "
      "Graphics Family\n"
      " |           \\-1f.3  Intel Corporation C600/X79 series chipset SMBus Host Controller\n"
      " \\-[0000:80]-+-02.0-[81]--\n"
      "             \\-03.0-[83]----00.0  Intel Corporation Xeon Phi coprocessor SE10/7120 "
      "series\n";
  const PciParents p = parse_lspci_tree(text);
  const PciParents expected{
      {"0000:00:00.0", kHostBridge},    {"0000:00:01.0", kHostBridge},
      {"0000:00:01.1", kHostBridge},    {"0000:02:00.0", "0000:00:01.1"},
      {"0000:02:00.3", "0000:00:01.1"}, {"0000:00:11.0", kHostBridge},
      {"0000:00:1c.0", kHostBridge},    {"0000:04:00.0", "0000:00:1c.0"},
      {"0000:05:00.0", "0000:04:00.0"}, {"0000:00:1f.3", kHostBridge},
      {"0000:80:02.0", kHostBridge},    {"0000:80:03.0", kHostBridge},
      {"0000:83:00.0", "0000:80:03.0"},
  };
  EXPECT_EQ(p, expected);
}

TEST(LspciTree, BusesBelowABridgeBelongToIt) {
  // 32intel64-2p8co2t+8ve: bus 60 is reached through 5f:03.0, which sysfs does not enumerate;
  // lspci prints buses 5f and 60 as entries under 5e:00.0.
  const std::string text =
      "-+-[0000:00]-\n"
      " \\-[0000:5d]---02.0-[5e-60]----00.0-[5f-60]--+-[0000:5f]-\n"
      "                                             \\-[0000:60]-+-00.0  Intel Corporation "
      "Ethernet Connection X722 for 10GBASE-T\n"
      "                                                         \\-00.1  Intel Corporation "
      "Ethernet Connection X722 for 10GBASE-T\n";
  const PciParents p = parse_lspci_tree(text);
  const PciParents expected{
      {"0000:5d:02.0", kHostBridge},
      {"0000:5e:00.0", "0000:5d:02.0"},
      {"0000:60:00.0", "0000:5e:00.0"},
      {"0000:60:00.1", "0000:5e:00.0"},
  };
  EXPECT_EQ(p, expected);
}

TEST(LspciTree, WideDomainsAndNamesThatLookLikeAddresses) {
  const std::string text =
      "-+-[0000:00]-+-00.0  Intel Corporation 440FX - 82441FX PMC [Natoma]\n"
      " |           \\-03.0  NEC Corporation Vector Engine 1.0 [0000:01] 12.3\n"
      " \\-[10000:00]-+-00.0  Intel Corporation 440FX - 82441FX PMC [Natoma]\n"
      "              \\-04.0  Red Hat, Inc. Virtio block device\n";
  const PciParents p = parse_lspci_tree(text);
  const PciParents expected{
      {"0000:00:00.0", kHostBridge},
      {"0000:00:03.0", kHostBridge},
      {"10000:00:00.0", kHostBridge},
      {"10000:00:04.0", kHostBridge},
  };
  EXPECT_EQ(p, expected);
}

TEST(LspciTree, WithoutNames) {
  const PciParents p = parse_lspci_tree("-[0000:00]-+-00.0\n           \\-01.0-[01]----00.0\n");
  const PciParents expected{
      {"0000:00:00.0", kHostBridge},
      {"0000:00:01.0", kHostBridge},
      {"0000:01:00.0", "0000:00:01.0"},
  };
  EXPECT_EQ(p, expected);
}

TEST(LspciTree, RejectsWhatItCannotPlace) {
  EXPECT_THROW(parse_lspci_tree("-+-00.0\n"), std::runtime_error);            // no bus
  EXPECT_THROW(parse_lspci_tree("-[0000:00]-+-0z.0\n"), std::runtime_error);  // bad token
  EXPECT_THROW(parse_lspci_tree("-[0000:00]-+-11.0----00.0\n"), std::runtime_error);
  EXPECT_THROW(parse_lspci_tree("-[0000:00\n"), std::runtime_error);
  EXPECT_THROW(parse_lspci_tree("-[0000:00]-+-00.0\n -[0000:00]-+-00.0\n"), std::runtime_error);
}

TEST(HwlocBitmap, WordsAndEmptyWords) {
  EXPECT_EQ(parse_hwloc_bitmap("0x00000003"), (std::set<std::uint32_t>{0, 1}));
  EXPECT_EQ(parse_hwloc_bitmap("0x000000ff,0xff000000,,0x0000ffff").size(), 32U);
  EXPECT_TRUE(parse_hwloc_bitmap("0x000000ff,0xff000000,,0x0000ffff").contains(88));
  EXPECT_TRUE(parse_hwloc_bitmap("0x000000ff,0xff000000,,0x0000ffff").contains(103));
  EXPECT_FALSE(parse_hwloc_bitmap("0x000000ff,0xff000000,,0x0000ffff").contains(104));
  EXPECT_TRUE(parse_hwloc_bitmap("0x0").empty());
  EXPECT_THROW(parse_hwloc_bitmap("0xf...f"), std::runtime_error);
  EXPECT_THROW(parse_hwloc_bitmap("0xzz"), std::runtime_error);
}

TEST(LstopoXml, NestingNumaAndDistances) {
  const std::string xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x00000003">
    <info name="DMIProductName" value="A &amp; B"/>
    <object type="NUMANode" os_index="0" cpuset="0x00000003" local_memory="1024"/>
    <object type="NUMANode" os_index="9" cpuset="0x00000001" subtype="GPUMemory" local_memory="2048"/>
    <object type="Bridge" gp_index="5" bridge_type="0-1" depth="0" bridge_pci="0000:[00-01]">
      <object type="PCIDev" pci_busid="0000:00:00.0" pci_type="0600 [8086:1237] [1af4:1100] 02"/>
      <object type="Bridge" bridge_type="1-1" depth="1" pci_busid="0000:00:01.0" pci_type="0604 [8086:2030] [8086:0000] 04" pci_link_speed="15.753846">
        <object type="PCIDev" pci_busid="0000:01:00.0" pci_type="0207 [15b3:1013] [15b3:0013] 00" pci_link_speed="0.250000">
          <object type="OSDev" name="eth0" osdev_type="2"/>
        </object>
      </object>
    </object>
  </object>
  <distances2 type="NUMANode" nbobjs="2" kind="5" name="NUMALatency" indexing="os">
    <indexes length="4">0 9 </indexes>
    <u64values length="12">10 20 30 10 </u64values>
  </distances2>
</topology>
)";
  const LstopoFacts f = parse_lstopo_xml(xml);
  ASSERT_EQ(f.numa.size(), 2U);
  EXPECT_EQ(f.numa.at(0).cpus, (std::set<std::uint32_t>{0, 1}));
  EXPECT_EQ(f.numa.at(0).memory_bytes, 1024U);
  EXPECT_EQ(f.numa.at(9).subtype, "GPUMemory");
  const PciParents expected{
      {"0000:00:00.0", kHostBridge},
      {"0000:00:01.0", kHostBridge},
      {"0000:01:00.0", "0000:00:01.0"},
  };
  EXPECT_EQ(f.pci, expected);
  const PciIdentity& nic = f.pci_identity.at("0000:01:00.0");
  EXPECT_EQ(nic.class_id, 0x0207U);
  EXPECT_EQ(nic.vendor, 0x15b3U);
  EXPECT_EQ(nic.device, 0x1013U);
  EXPECT_EQ(nic.subsystem_device, 0x0013U);
  EXPECT_EQ(nic.revision, 0U);
  EXPECT_DOUBLE_EQ(nic.link_gbps, 0.25);
  EXPECT_FALSE(nic.is_bridge);
  EXPECT_TRUE(f.pci_identity.at("0000:00:01.0").is_bridge);
  EXPECT_EQ(f.pci_identity.at("0000:00:01.0").revision, 4U);
  EXPECT_EQ(f.distances.at({0, 9}), 20);
  EXPECT_EQ(f.distances.at({9, 0}), 30);
  EXPECT_EQ(f.distances.size(), 4U);
  EXPECT_THROW(parse_lstopo_xml("<topology><object type=\"Machine\"></topology>"),
               std::runtime_error);
}

TEST(DiffParents, NamesEveryDifference) {
  const PciParents a{{"0000:00:01.0", kHostBridge}, {"0000:01:00.0", "0000:00:01.0"}};
  const PciParents b{
      {"0000:00:01.0", kHostBridge}, {"0000:01:00.0", kHostBridge}, {"0000:02:00.0", kHostBridge}};
  const std::string d = diff_parents(a, "A", b, "B");
  EXPECT_NE(d.find("0000:01:00.0: parent 0000:00:01.0 in A, host bridge in B"), std::string::npos)
      << d;
  EXPECT_NE(d.find("0000:02:00.0: only in B"), std::string::npos) << d;
  EXPECT_EQ(diff_parents(a, "A", a, "A"), "");
}

}  // namespace
}  // namespace nodetopo::oracle
