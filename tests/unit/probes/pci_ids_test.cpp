// The pci.ids lookup: parsing rules on small inline databases, the sorted lookup against the full
// scan on files in every order, and the system's pci.ids read both ways — by the lookup and by
// libpci's pci_lookup_name() as the oracle.
#include <gtest/gtest.h>

extern "C" {
#include <pci/pci.h>
}

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <vector>

#include <nodetopo/probes/pci_ids.hpp>

namespace nodetopo::probes {
namespace {

constexpr std::string_view kIds = R"(# comment line
#	1234  commented-out device
10de  NVIDIA Corporation
	22a3  GH100 [H100 NVSwitch]
	2330  GH100 [H100 SXM5 80GB]
		10de 16c1  H100 SXM5 80GB
15b3  Mellanox Technologies
	1021  MT2910 Family [ConnectX-7]
C 02  Network controller
	00  Ethernet controller
	07  Infiniband controller
C 03  Display controller
	00  VGA compatible controller
		00  VGA controller
	02  3D controller
)";

TEST(PciIds, FindsVendorsDevicesAndClasses) {
  const std::vector<PciNameQuery> q = {{0x10de, 0x2330, 0x0302}, {0x15b3, 0x1021, 0x0207}};
  PciIdsLookupStats stats;
  const PciNames names = lookup_pci_names(kIds, q, &stats);
  EXPECT_FALSE(stats.full_scan) << "a sorted file is served by the binary search";
  EXPECT_EQ(names.vendor(0x10de), "NVIDIA Corporation");
  EXPECT_EQ(names.device(0x10de, 0x2330), "GH100 [H100 SXM5 80GB]");
  EXPECT_EQ(names.device(0x15b3, 0x1021), "MT2910 Family [ConnectX-7]");
  EXPECT_EQ(names.class_name(0x0302), "3D controller");
  EXPECT_EQ(names.class_name(0x0207), "Infiniband controller");
  // Only what was asked for is collected.
  EXPECT_EQ(names.device(0x10de, 0x22a3), "");
  EXPECT_EQ(names.devices.size(), 2U);
}

TEST(PciIds, SubsystemAndProgIfLinesAreNotDevicesOrSubclasses) {
  // "10de 16c1" is a subsystem line; "00  VGA controller" a prog-if line under 0300.
  const std::vector<PciNameQuery> q = {{0x10de, 0x16c1, 0x0300}};
  const PciNames names = lookup_pci_names(kIds, q);
  EXPECT_EQ(names.device(0x10de, 0x16c1), "");
  EXPECT_EQ(names.class_name(0x0300), "VGA compatible controller");
}

TEST(PciIds, UnknownSubclassFallsBackToTheBaseClassWithItsNumber) {
  const std::vector<PciNameQuery> q = {{0x1234, 0x5678, 0x0380}, {0x1234, 0x5678, 0x1200}};
  const PciNames names = lookup_pci_names(kIds, q);
  EXPECT_EQ(names.class_name(0x0380), "Display controller [0380]");
  EXPECT_EQ(names.class_name(0x1200), "");  // base class 12 not in this database
  EXPECT_EQ(names.vendor(0x1234), "");
}

// Vendor blocks in every order, and classes before vendors: whichever way the lookup goes (the
// binary search, or the full scan when the order is not the sorted one), the names are the same.
TEST(PciIds, FilesOutOfOrderGiveTheSameNames) {
  std::vector<std::string> blocks = {
      "1000  Broadcom / LSI\n\t0001  53c810\n\t2330  not the H100\n",
      "10de  NVIDIA Corporation\n\t1021  not a ConnectX\n\t2330  GH100 [H100 SXM5 80GB]\n"
      "\t\t10de 16c1  H100 SXM5 80GB\n",
      "15b3  Mellanox Technologies\n\t1021  MT2910 Family [ConnectX-7]\n\t2330  not either\n",
      "C 02  Network controller\n\t07  Infiniband controller\n",
      "C 03  Display controller\n\t02  3D controller\n",
  };
  std::sort(blocks.begin(), blocks.end());
  const std::vector<PciNameQuery> q = {
      {0x10de, 0x2330, 0x0302}, {0x15b3, 0x1021, 0x0207}, {0x1000, 0x0001, 0x0380}};
  std::size_t orders = 0;
  std::size_t sorted_served = 0;
  do {
    std::string text;
    for (const std::string& b : blocks)
      text += b;
    PciIdsLookupStats stats;
    const PciNames names = lookup_pci_names(text, q, &stats);
    SCOPED_TRACE(text);
    EXPECT_EQ(names.vendor(0x10de), "NVIDIA Corporation");
    EXPECT_EQ(names.device(0x10de, 0x2330), "GH100 [H100 SXM5 80GB]");
    EXPECT_EQ(names.device(0x15b3, 0x1021), "MT2910 Family [ConnectX-7]");
    EXPECT_EQ(names.device(0x1000, 0x0001), "53c810");
    EXPECT_EQ(names.class_name(0x0302), "3D controller");
    EXPECT_EQ(names.class_name(0x0207), "Infiniband controller");
    EXPECT_EQ(names.class_name(0x0380), "Display controller [0380]");
    EXPECT_EQ(names.devices.size(), 3U);
    ++orders;
    sorted_served += stats.full_scan ? 0 : 1;
  } while (std::next_permutation(blocks.begin(), blocks.end()));
  EXPECT_EQ(orders, 120U);
  EXPECT_GE(sorted_served, 1U) << "the sorted order itself is served by the binary search";
}

TEST(PciIds, AVendorNotInTheFileIsLookedForByTheFullScan) {
  const std::vector<PciNameQuery> q = {{0x1234, 0x5678, 0x0302}};
  PciIdsLookupStats stats;
  const PciNames names = lookup_pci_names(kIds, q, &stats);
  EXPECT_TRUE(stats.full_scan);
  EXPECT_EQ(names.vendor(0x1234), "");
  EXPECT_EQ(names.class_name(0x0302), "3D controller");
}

TEST(PciIds, ToleratesCrLfAndGarbageLines) {
  const std::string text =
      "10de  NVIDIA Corporation\r\n\tzzzz  not an id\r\n\t2330  H100\r\nC xx  bad class\n";
  const std::vector<PciNameQuery> q = {{0x10de, 0x2330, 0x0302}};
  const PciNames names = lookup_pci_names(text, q);
  EXPECT_EQ(names.vendor(0x10de), "NVIDIA Corporation");
  EXPECT_EQ(names.device(0x10de, 0x2330), "H100");
  EXPECT_EQ(names.class_name(0x0302), "");
}

// The system database read by both: every vendor, device and class of a broad set of IDs must
// come out exactly as libpci prints it (names in goldens and JSON depend on it).
TEST(PciIds, AgreesWithLibpciOnTheSystemDatabase) {
  const auto file = PciIdsFile::open_system();
  ASSERT_TRUE(file.has_value()) << "no pci.ids: install the pci.ids package (pciutils)";
  const std::string_view text = file->text();
  std::vector<PciNameQuery> queries;
  const std::array<std::uint16_t, 8> vendors{0x8086, 0x10de, 0x1002, 0x15b3,
                                             0x14e4, 0x1af4, 0x10b5, 0x1000};
  for (std::uint16_t vendor : vendors) {
    for (unsigned d = 0; d < 0x3000; d += 7) {
      const auto device = static_cast<std::uint16_t>(d);
      queries.push_back(
          {vendor, device, static_cast<std::uint16_t>((device % 0x13) << 8 | (device % 9))});
    }
  }
  // In chunks of a node's size, so that the sorted lookup serves each (thousands of IDs at once
  // take the full scan).
  PciNames names;
  constexpr std::size_t kChunk = 200;
  for (std::size_t at = 0; at < queries.size(); at += kChunk) {
    const std::span<const PciNameQuery> chunk(queries.data() + at,
                                              std::min(kChunk, queries.size() - at));
    PciIdsLookupStats stats;
    PciNames part = lookup_pci_names(text, chunk, &stats);
    EXPECT_FALSE(stats.full_scan) << "the distributed file is sorted";
    names.vendors.merge(part.vendors);
    names.devices.merge(part.devices);
    names.classes.merge(part.classes);
  }

  pci_access* pacc = pci_alloc();
  pci_init(pacc);
  std::array<char, 512> buf{};
  auto libpci = [&](int flags, auto... ids) {
    const char* name = pci_lookup_name(pacc, buf.data(), static_cast<int>(buf.size()),
                                       flags | PCI_LOOKUP_NO_NUMBERS | PCI_LOOKUP_NO_HWDB, ids...);
    return name != nullptr ? std::string(name) : std::string();
  };
  std::size_t compared = 0;
  std::size_t found = 0;
  for (const PciNameQuery& q : queries) {
    EXPECT_EQ(names.vendor(q.vendor_id), libpci(PCI_LOOKUP_VENDOR, int{q.vendor_id}));
    const std::string expected = libpci(PCI_LOOKUP_DEVICE, int{q.vendor_id}, int{q.device_id});
    EXPECT_EQ(names.device(q.vendor_id, q.device_id), expected)
        << std::hex << q.vendor_id << ":" << q.device_id;
    EXPECT_EQ(names.class_name(q.class_id), libpci(PCI_LOOKUP_CLASS, int{q.class_id}))
        << std::hex << q.class_id;
    ++compared;
    found += expected.empty() ? 0 : 1;
  }
  pci_cleanup(pacc);
  EXPECT_GT(found, 100U) << "the comparison must cover real entries, not only misses";
  EXPECT_EQ(compared, queries.size());
}

// What the sorted lookup is for: a node's few dozen names without reading the whole file. It
// reads about the blocks of the vendors it looks up, and of those its probes land in (Intel's is a
// quarter of the file, NVIDIA's and AMD's a thirteenth each).
TEST(PciIds, ANodesLookupReadsAFewOfTheSystemDatabasesLines) {
  const auto file = PciIdsFile::open_system();
  ASSERT_TRUE(file.has_value()) << "no pci.ids: install the pci.ids package (pciutils)";
  const auto total =
      static_cast<std::size_t>(std::count(file->text().begin(), file->text().end(), '\n'));
  // An AMD node: EPYC root ports, MI300X GPUs, ConnectX-7 NICs, an LSI HBA, Samsung NVMe.
  const std::vector<PciNameQuery> amd = {{0x1022, 0x14a4, 0x0600},
                                         {0x1002, 0x74a1, 0x1200},
                                         {0x15b3, 0x1021, 0x0207},
                                         {0x1000, 0x00e6, 0x0107},
                                         {0x144d, 0xa80a, 0x0108}};
  PciIdsLookupStats stats;
  PciNames names = lookup_pci_names(*file, amd, &stats);
  EXPECT_FALSE(stats.full_scan);
  EXPECT_EQ(names.vendor(0x1022), "Advanced Micro Devices, Inc. [AMD]");
  EXPECT_LT(stats.lines_read * 3, total) << stats.lines_read << " of " << total << " lines";
  // A DGX-like node with Intel's root ports and chipset.
  const std::vector<PciNameQuery> intel = {{0x10de, 0x2330, 0x0302}, {0x15b3, 0x1021, 0x0207},
                                           {0x8086, 0x1528, 0x0200}, {0x1000, 0x0097, 0x0107},
                                           {0x8086, 0x2020, 0x0880}, {0x10b5, 0x8796, 0x0604}};
  stats = {};
  names = lookup_pci_names(*file, intel, &stats);
  EXPECT_FALSE(stats.full_scan);
  EXPECT_EQ(names.vendor(0x8086), "Intel Corporation");
  EXPECT_LT(stats.lines_read * 2, total) << stats.lines_read << " of " << total << " lines";
}

}  // namespace
}  // namespace nodetopo::probes
