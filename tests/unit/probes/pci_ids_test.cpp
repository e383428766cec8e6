// The single-pass pci.ids lookup: parsing rules on small inline databases, and the system's
// pci.ids read both ways — by the lookup and by libpci's pci_lookup_name() as the oracle.
#include <gtest/gtest.h>

extern "C" {
#include <pci/pci.h>
}

#include <array>
#include <vector>

#include <nodetopo/probes/pci_ids.hpp>

namespace nodetopo::probes {
namespace {

constexpr std::string_view kIds = R"(# comment line
#	1234  commented-out device
10de  NVIDIA Corporation
	2330  GH100 [H100 SXM5 80GB]
		10de 16c1  H100 SXM5 80GB
	22a3  GH100 [H100 NVSwitch]
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
  const PciNames names = lookup_pci_names(kIds, q);
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
  const PciNames names = lookup_pci_names(text, queries);

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

}  // namespace
}  // namespace nodetopo::probes
