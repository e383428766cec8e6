// PCI value types of the model: address formatting and order, root bus names, PCIe link
// generation and text, port types; hex formatting; and the error type's description.
#include <array>
#include <string>

#include <gtest/gtest.h>

#include <nodetopo/base/error.hpp>
#include <nodetopo/base/hex.hpp>
#include <nodetopo/topology/pci.hpp>

namespace nodetopo {
namespace {

TEST(PciAddress, FormatsLikeTheKernel) {
  EXPECT_EQ((PciAddress{0, 0x65, 0, 0}).to_string(), "0000:65:00.0");
  EXPECT_EQ((PciAddress{0x35, 0x04, 0x1f, 7}).to_string(), "0035:04:1f.7");
  EXPECT_EQ((PciAddress{0x10000, 0, 4, 0}).to_string(), "10000:00:04.0");
  EXPECT_EQ((PciAddress{0xffffffff, 0xff, 0x1f, 7}).to_string(), "ffffffff:ff:1f.7");
}

TEST(PciAddress, ToCharsWritesWhatToStringReturns) {
  for (const PciAddress& a : {PciAddress{0, 0x65, 0, 0}, PciAddress{0x10000, 0, 4, 0},
                              PciAddress{0xffffffff, 0xff, 0xff, 0xff}}) {
    std::array<char, PciAddress::kMaxTextSize> buf{};
    char* end = a.to_chars(buf.data());
    EXPECT_EQ(std::string(buf.data(), end), a.to_string());
  }
  EXPECT_EQ((PciAddress{0xffffffff, 0xff, 0xff, 0xff}).to_string().size(),
            PciAddress::kMaxTextSize);
}

TEST(Hex, LowercaseZeroPaddedToTheWidth) {
  EXPECT_EQ(to_hex(0x10de, 4), "10de");
  EXPECT_EQ(to_hex(0x10000, 4), "10000");
  EXPECT_EQ(to_hex(0x302, 6), "000302");
  EXPECT_EQ(to_hex(0, 4), "0000");
  EXPECT_EQ(to_hex(0, 0), "0");
  EXPECT_EQ(to_hex(0xabc, 0), "abc");
  EXPECT_EQ(to_hex(0xffffffffffffffffULL, 4), "ffffffffffffffff");
  EXPECT_EQ(to_hex(0x1, 20), "00000000000000000001");
  std::string out = "id=";
  append_hex(out, 0x1b, 2);
  EXPECT_EQ(out, "id=1b");
  for (const auto& [value, width] : {std::pair<std::uint64_t, int>{0, 1},
                                     {0xf, 1},
                                     {0x10, 1},
                                     {0x12345, 4},
                                     {0x1, 8},
                                     {0xffffffffffffffffULL, 16}}) {
    std::array<char, 32> buf{};
    char* end = write_hex(buf.data(), value, width);
    EXPECT_EQ(static_cast<std::size_t>(end - buf.data()), hex_size(value, width));
    EXPECT_EQ(std::string(buf.data(), end), to_hex(value, width));
  }
}

TEST(PciAddress, OrderIsDomainBusDeviceFunction) {
  const PciAddress a{0, 0x17, 0, 0};
  const PciAddress b{0, 0x17, 0, 1};
  const PciAddress c{0, 0x17, 1, 0};
  const PciAddress d{0, 0x18, 0, 0};
  const PciAddress e{0x10000, 0, 0, 0};
  EXPECT_LT(a.sort_key(), b.sort_key());
  EXPECT_LT(b.sort_key(), c.sort_key());
  EXPECT_LT(c.sort_key(), d.sort_key());
  EXPECT_LT(d.sort_key(), e.sort_key());
  EXPECT_LT(a, b);
  EXPECT_LT(d, e);
  EXPECT_EQ(a, (PciAddress{0, 0x17, 0, 0}));
}

TEST(PciAddress, SameDevice) {
  const PciAddress f0{0, 0x81, 0, 0};
  EXPECT_TRUE(f0.same_device({0, 0x81, 0, 1}));
  EXPECT_FALSE(f0.same_device({0, 0x81, 1, 0}));
  EXPECT_FALSE(f0.same_device({1, 0x81, 0, 0}));
}

TEST(PciRootName, KernelDirectoryNames) {
  EXPECT_EQ(pci_root_name(0, 0x17), "pci0000:17");
  EXPECT_EQ(pci_root_name(0x35, 0x05), "pci0035:05");
  EXPECT_EQ(pci_root_name(0x10000, 0), "pci10000:00");
}

TEST(PcieLink, GenerationFromSpeed) {
  EXPECT_EQ((PcieLink{0, 16}).generation(), 0);
  EXPECT_EQ((PcieLink{2000, 1}).generation(), 0);
  EXPECT_EQ((PcieLink{2500, 1}).generation(), 1);
  EXPECT_EQ((PcieLink{5000, 1}).generation(), 2);
  EXPECT_EQ((PcieLink{8000, 1}).generation(), 3);
  EXPECT_EQ((PcieLink{16000, 1}).generation(), 4);
  EXPECT_EQ((PcieLink{32000, 1}).generation(), 5);
  EXPECT_EQ((PcieLink{64000, 1}).generation(), 6);
  EXPECT_EQ((PcieLink{128000, 1}).generation(), 6) << "unknown future rates stay at the last";
  EXPECT_EQ((PcieLink{7999, 1}).generation(), 2) << "in between belongs to the lower generation";
}

TEST(PcieLink, ToString) {
  EXPECT_EQ((PcieLink{16000, 16}).to_string(), "16 GT/s x16");
  EXPECT_EQ((PcieLink{2500, 1}).to_string(), "2.5 GT/s x1");
  EXPECT_EQ((PcieLink{8000, 0}).to_string(), "8 GT/s");
  EXPECT_EQ((PcieLink{0, 4}).to_string(), "x4");
  EXPECT_EQ((PcieLink{0, 0}).to_string(), "");
}

TEST(PcieLink, KnownAndEquality) {
  EXPECT_FALSE(PcieLink{}.known());
  EXPECT_TRUE((PcieLink{0, 1}).known());
  EXPECT_TRUE((PcieLink{2500, 0}).known());
  EXPECT_EQ((PcieLink{8000, 16}), (PcieLink{8000, 16}));
  EXPECT_NE((PcieLink{8000, 16}), (PcieLink{8000, 8}));
}

TEST(PciePortType, DecodesTheCapabilityField) {
  EXPECT_EQ(pcie_port_type_from_field(0x0), PciePortType::kEndpoint);
  EXPECT_EQ(pcie_port_type_from_field(0x4), PciePortType::kRootPort);
  EXPECT_EQ(pcie_port_type_from_field(0x5), PciePortType::kUpstreamPort);
  EXPECT_EQ(pcie_port_type_from_field(0x6), PciePortType::kDownstreamPort);
  EXPECT_EQ(pcie_port_type_from_field(0x9), PciePortType::kRootComplexEndpoint);
  for (unsigned reserved : {0x2U, 0x3U, 0xbU, 0xfU, 0x10U}) {
    EXPECT_FALSE(pcie_port_type_from_field(reserved).has_value()) << reserved;
  }
  EXPECT_EQ(to_string(PciePortType::kUpstreamPort), "upstream_port");
  EXPECT_EQ(to_string(PciePortType::kRootComplexEndpoint), "rc_integrated_endpoint");
}

TEST(Error, DescribeNamesThePath) {
  const Error with_path = make_error(ErrorCode::kMalformed, "bad value", "sys/x/numa_node");
  EXPECT_EQ(with_path.describe(), "sys/x/numa_node: bad value");
  EXPECT_EQ(make_error(ErrorCode::kIo, "no path").describe(), "no path");
  EXPECT_EQ(to_string(ErrorCode::kEscapesRoot), "escapes the host root");
  EXPECT_EQ(to_string(ErrorCode::kSymlinkLoop), "symlink loop");
}

TEST(Result, CarriesValueOrError) {
  Result<int> ok = 5;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 5);
  Result<int> bad = make_error(ErrorCode::kNotFound, "gone", "p");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.value_or(7), 7);
  EXPECT_EQ(bad.error().path, "p");
  Result<void> done;
  EXPECT_TRUE(done.ok());
  Result<void> failed = make_error(ErrorCode::kIo, "x");
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kIo);
}

}  // namespace
}  // namespace nodetopo
