#include "nvml/nvml_text.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string_view>

#include <nodetopo/probes/parsers.hpp>
#include <nodetopo/topology/cpu_set.hpp>

namespace nodetopo::probes {

namespace {

// The text of a fixed NVML buffer: up to the NUL (or the buffer end), trimmed.
std::string_view nvml_view(const char* buffer, std::size_t size) {
  const void* nul = std::memchr(buffer, '\0', size);
  const std::size_t length =
      nul != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nul) - buffer) : size;
  return trim(std::string_view(buffer, length));
}

}  // namespace

std::string nvml_string(const char* buffer, std::size_t size) {
  return std::string(nvml_view(buffer, size));
}

// Called for every active NVLink (18 per GPU): no allocation unless the text is malformed.
Result<PciAddress> nvml_pci_address(const nvml_abi::nvmlPciInfo_t& info) {
  std::string_view text = nvml_view(info.busId, sizeof info.busId);
  if (text.empty()) text = nvml_view(info.busIdLegacy, sizeof info.busIdLegacy);
  if (text.empty()) {
    if (info.bus > 0xff || info.device > 0x1f) {
      return make_error(ErrorCode::kMalformed,
                        "NVML reported neither a bus id string nor a valid bus/device number");
    }
    PciAddress addr;
    addr.domain = info.domain;
    addr.bus = static_cast<std::uint8_t>(info.bus);
    addr.device = static_cast<std::uint8_t>(info.device);
    return addr;
  }
  char lower[sizeof info.busId];  // text is a part of busId or of the shorter busIdLegacy
  std::transform(text.begin(), text.end(), lower,
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string_view lowered(lower, text.size());
  auto parsed = parse_pci_address(lowered);
  if (!parsed) {
    return make_error(ErrorCode::kMalformed, "NVML PCI bus id '" + std::string(lowered) +
                                                 "' is not domain:bus:device.function");
  }
  return parsed.value();
}

std::string nvml_architecture_name(nvml_abi::nvmlDeviceArchitecture_t arch) {
  using namespace nvml_abi;
  switch (arch) {
    case NVML_DEVICE_ARCH_KEPLER:
      return "kepler";
    case NVML_DEVICE_ARCH_MAXWELL:
      return "maxwell";
    case NVML_DEVICE_ARCH_PASCAL:
      return "pascal";
    case NVML_DEVICE_ARCH_VOLTA:
      return "volta";
    case NVML_DEVICE_ARCH_TURING:
      return "turing";
    case NVML_DEVICE_ARCH_AMPERE:
      return "ampere";
    case NVML_DEVICE_ARCH_ADA:
      return "ada";
    case NVML_DEVICE_ARCH_HOPPER:
      return "hopper";
    case NVML_DEVICE_ARCH_BLACKWELL:
      return "blackwell";
    default:
      return {};
  }
}

std::string nvml_uuid_text(
    std::span<const unsigned char, nvml_abi::NVML_GPU_FABRIC_UUID_LEN> bytes) {
  if (std::all_of(bytes.begin(), bytes.end(), [](unsigned char b) { return b == 0; })) return {};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0xf];
  }
  return out;
}

std::string link_list(const std::vector<unsigned int>& links) {
  return format_ranges(links);
}

}  // namespace nodetopo::probes
