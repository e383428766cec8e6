// Conversions of NVML answers (private helpers of the NVML probe).
#include "nvml/nvml_text.hpp"

#include <cstring>

#include <gtest/gtest.h>

namespace nodetopo::probes {
namespace {

nvml_abi::nvmlPciInfo_t pci_info(const char* bus_id, const char* legacy = "") {
  nvml_abi::nvmlPciInfo_t info{};
  std::strncpy(info.busId, bus_id, sizeof info.busId - 1);
  std::strncpy(info.busIdLegacy, legacy, sizeof info.busIdLegacy - 1);
  return info;
}

TEST(NvmlText, BusIdIsNormalisedFromNvmlsUpperCaseEightDigitForm) {
  auto addr = nvml_pci_address(pci_info("00000000:1B:00.0"));
  ASSERT_TRUE(addr);
  EXPECT_EQ(addr->to_string(), "0000:1b:00.0");
  addr = nvml_pci_address(pci_info("00010000:C3:1F.7"));
  ASSERT_TRUE(addr);
  EXPECT_EQ(addr->to_string(), "10000:c3:1f.7");
  addr = nvml_pci_address(pci_info("", "0002:05:00.0"));
  ASSERT_TRUE(addr);
  EXPECT_EQ(addr->to_string(), "0002:05:00.0");
}

TEST(NvmlText, BusIdIsTrimmedAndStopsAtTheBufferEnd) {
  auto addr = nvml_pci_address(pci_info(" 00000000:3B:00.0\n"));
  ASSERT_TRUE(addr);
  EXPECT_EQ(addr->to_string(), "0000:3b:00.0");
  nvml_abi::nvmlPciInfo_t info{};
  std::memset(info.busId, ' ', sizeof info.busId);  // no terminator at all
  std::memcpy(info.busId, "00000000:3B:00.0", 16);
  addr = nvml_pci_address(info);
  ASSERT_TRUE(addr);
  EXPECT_EQ(addr->to_string(), "0000:3b:00.0");
  info.busId[sizeof info.busId - 1] = 'X';
  EXPECT_FALSE(nvml_pci_address(info));
}

TEST(NvmlText, EmptyBusIdFallsBackToTheNumericFields) {
  nvml_abi::nvmlPciInfo_t info{};
  info.domain = 1;
  info.bus = 0x9d;
  info.device = 2;
  auto addr = nvml_pci_address(info);
  ASSERT_TRUE(addr);
  EXPECT_EQ(addr->to_string(), "0001:9d:02.0");
  info.device = 40;
  EXPECT_FALSE(nvml_pci_address(info));
}

TEST(NvmlText, MalformedBusIdIsAnErrorQuotingIt) {
  auto addr = nvml_pci_address(pci_info("GPU-0:zz"));
  ASSERT_FALSE(addr);
  EXPECT_NE(addr.error().message.find("'gpu-0:zz'"), std::string::npos) << addr.error().message;
}

TEST(NvmlText, StringsStopAtNulOrBufferEnd) {
  const char full[4] = {'a', 'b', 'c', 'd'};  // no terminator
  EXPECT_EQ(nvml_string(full, sizeof full), "abcd");
  EXPECT_EQ(nvml_string("550.54.15\0junk", 14), "550.54.15");
}

TEST(NvmlText, ArchitectureNames) {
  EXPECT_EQ(nvml_architecture_name(7), "ampere");
  EXPECT_EQ(nvml_architecture_name(9), "hopper");
  EXPECT_EQ(nvml_architecture_name(10), "blackwell");
  EXPECT_EQ(nvml_architecture_name(nvml_abi::NVML_DEVICE_ARCH_UNKNOWN), "");
  EXPECT_EQ(nvml_architecture_name(42), "");
}

TEST(NvmlText, UuidTextAndAllZeroMeansNone) {
  std::array<unsigned char, 16> bytes{};
  EXPECT_EQ(nvml_uuid_text(bytes), "");
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<unsigned char>(i * 17);
  EXPECT_EQ(nvml_uuid_text(bytes), "00112233-4455-6677-8899-aabbccddeeff");
}

TEST(NvmlText, LinkLists) {
  EXPECT_EQ(link_list({}), "");
  EXPECT_EQ(link_list({3}), "3");
  EXPECT_EQ(link_list({0, 1, 2, 3, 7, 9, 10}), "0-3,7,9-10");
}

}  // namespace
}  // namespace nodetopo::probes
