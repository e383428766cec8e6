// LibpciConfig: a 64-byte header is decoded without libpci, and says what the whole standard
// space, decoded by libpci, says about the header's fields; libpci is needed only for the
// capability list.
#include "pci/libpci_config.hpp"

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include <gtest/gtest.h>

namespace nodetopo::probes {
namespace {

constexpr std::size_t kHeader = kPciConfigHeaderSize;

// A standard space with `header_type` at 0x0e and, when `caps`, a capability list: a PCI Express
// capability at 0x40 (a root port) followed by an SSVID one at 0x60 (bridges carry their
// subsystem ids there).
std::vector<std::uint8_t> config_space(std::uint8_t header_type, bool caps) {
  std::vector<std::uint8_t> c(kPciConfigStandardSize, 0);
  c[0x00] = 0x86;  // 8086:7110
  c[0x01] = 0x80;
  c[0x02] = 0x10;
  c[0x03] = 0x71;
  c[0x08] = 0x07;  // revision
  c[0x0e] = header_type;
  c[0x18] = 0x00;  // a bridge's primary, secondary and subordinate bus
  c[0x19] = 0x3a;
  c[0x1a] = 0x3f;
  c[0x2c] = 0xf4;  // a type-0 header's subsystem ids: 1af4:1100
  c[0x2d] = 0x1a;
  c[0x2e] = 0x00;
  c[0x2f] = 0x11;
  if (caps) {
    c[0x06] = 0x10;  // status: capability list
    c[0x34] = 0x40;
    c[0x40] = 0x10;  // PCI Express -> SSVID
    c[0x41] = 0x60;
    c[0x42] = 0x42;  // version 2, root port (type 4)
    c[0x4c] = 0x44;  // Link Capabilities: 16 GT/s x4
    c[0x52] = 0x43;  // Link Status: 8 GT/s x4
    c[0x60] = 0x0d;  // SSVID, last: 15b3:0001
    c[0x64] = 0xb3;
    c[0x65] = 0x15;
    c[0x66] = 0x01;
  }
  return c;
}

class LibpciConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = LibpciConfig::open();
    ASSERT_TRUE(opened.ok()) << opened.error().describe();
    libpci_.emplace(std::move(opened.value()));
  }

  // The header's fields of `whole` (libpci's decode) must be those of its first 64 bytes.
  void expect_header_agrees(const std::vector<std::uint8_t>& whole) {
    const DecodedConfig full = libpci_->decode({}, whole);
    const DecodedConfig header = decode_header(std::span(whole).first(kHeader));
    SCOPED_TRACE(testing::Message() << "header type 0x" << std::hex << int{whole[0x0e]});
    EXPECT_EQ(header.header_type, full.header_type);
    EXPECT_EQ(header.revision, full.revision);
    EXPECT_EQ(header.secondary_bus, full.secondary_bus);
    EXPECT_EQ(header.subordinate_bus, full.subordinate_bus);
    if (full.header_type == 0) {
      EXPECT_TRUE(header.subsystem_known);
      EXPECT_EQ(header.subsystem_vendor_id, full.subsystem_vendor_id);
      EXPECT_EQ(header.subsystem_device_id, full.subsystem_device_id);
    } else {
      EXPECT_FALSE(header.subsystem_known);  // in a capability, which the header does not hold
    }
    // The header knows only that there is no PCI Express capability, when it has no list.
    if (full.pcie == false && (whole[0x06] & 0x10) == 0) {
      EXPECT_EQ(header.pcie, std::optional<bool>(false));
    } else {
      EXPECT_EQ(header.pcie, std::nullopt);
    }
    EXPECT_FALSE(header.port_type.has_value());
    EXPECT_EQ(header.link_current, PcieLink{});
    EXPECT_TRUE(header.problems.empty());
  }

  std::optional<LibpciConfig> libpci_;
};

TEST_F(LibpciConfigTest, HeaderAloneSaysWhatLibpciReadsInTheWholeSpace) {
  // Device, bridge, CardBus bridge, each also as a multi-function device (bit 7), with and
  // without capabilities; and header types no specification defines.
  for (const int type : {0x00, 0x01, 0x02, 0x80, 0x81, 0x82, 0x03, 0x7f}) {
    for (const bool caps : {false, true})
      expect_header_agrees(config_space(static_cast<std::uint8_t>(type), caps));
  }
}

TEST_F(LibpciConfigTest, RandomHeadersAgreeWithLibpci) {
  std::mt19937 rng(20261206);  // fixed: a failure names a reproducible case
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 500; ++round) {
    std::vector<std::uint8_t> c(kPciConfigStandardSize, 0);
    for (std::size_t i = 0; i < kHeader; ++i)
      c[i] = static_cast<std::uint8_t>(byte(rng));
    c[0x0e] &= 0x83;  // the three defined layouts, multi-function or not, and type 3
    c[0x06] &= 0xef;  // no capability list: the random pointer would lead anywhere
    expect_header_agrees(c);
  }
}

TEST_F(LibpciConfigTest, WholeSpaceAddsWhatTheCapabilitiesSay) {
  const std::vector<std::uint8_t> c = config_space(0x01, true);
  const DecodedConfig full = libpci_->decode({}, c);
  EXPECT_EQ(full.pcie, std::optional<bool>(true));
  EXPECT_EQ(full.port_type, PciePortType::kRootPort);
  EXPECT_EQ(full.link_max, (PcieLink{16000, 4}));
  EXPECT_EQ(full.link_current, (PcieLink{8000, 4}));
  EXPECT_TRUE(full.subsystem_known);
  EXPECT_EQ(full.subsystem_vendor_id, 0x15b3);
  EXPECT_EQ(full.subsystem_device_id, 0x0001);
}

// A decoder made without libpci decodes headers and opens libpci for the first whole space, with
// the result of one opened up front.
TEST_F(LibpciConfigTest, DeferredDecoderOpensLibpciForTheFirstCapabilityList) {
  LibpciConfig deferred;
  const std::vector<std::uint8_t> c = config_space(0x00, true);
  EXPECT_EQ(deferred.decode({}, std::span(c).first(kHeader)),
            decode_header(std::span(c).first(kHeader)));
  EXPECT_FALSE(deferred.open_error().has_value());
  EXPECT_EQ(deferred.decode({}, c), libpci_->decode({}, c));
  EXPECT_FALSE(deferred.open_error().has_value());
  // Moved, it keeps its handle.
  LibpciConfig moved = std::move(deferred);
  EXPECT_EQ(moved.decode({}, c), libpci_->decode({}, c));
}

}  // namespace
}  // namespace nodetopo::probes
