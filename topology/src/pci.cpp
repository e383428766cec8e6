#include <array>
#include <cstdio>

#include <nodetopo/base/hex.hpp>
#include <nodetopo/topology/pci.hpp>

namespace nodetopo {

char* PciAddress::to_chars(char* out) const {
  out = write_hex(out, domain, 4);
  *out++ = ':';
  out = write_hex(out, bus, 2);
  *out++ = ':';
  out = write_hex(out, device, 2);
  *out++ = '.';
  return write_hex(out, function, 1);
}

std::string PciAddress::to_string() const {
  std::array<char, kMaxTextSize> buf{};
  return {buf.data(), to_chars(buf.data())};
}

std::string pci_root_name(std::uint32_t domain, std::uint8_t bus) {
  std::string out = "pci";
  append_hex(out, domain, 4);
  out += ':';
  append_hex(out, bus, 2);
  return out;
}

int PcieLink::generation() const {
  // Each generation's raw rate; anything in between belongs to the lower generation.
  constexpr std::array<std::uint32_t, 6> kRates{2500, 5000, 8000, 16000, 32000, 64000};
  int gen = 0;
  for (std::size_t i = 0; i < kRates.size(); ++i) {
    if (speed_mts >= kRates[i]) gen = static_cast<int>(i) + 1;
  }
  return gen;
}

std::string PcieLink::to_string() const {
  std::string out;
  if (speed_mts != 0) {
    const std::uint32_t whole = speed_mts / 1000;
    const std::uint32_t tenth = (speed_mts % 1000) / 100;
    out = std::to_string(whole);
    if (tenth != 0) out += "." + std::to_string(tenth);
    out += " GT/s";
  }
  if (width != 0) {
    if (!out.empty()) out += ' ';
    out += "x" + std::to_string(width);
  }
  return out;
}

std::optional<PciePortType> pcie_port_type_from_field(unsigned field) {
  switch (field) {
    case 0x0:
      return PciePortType::kEndpoint;
    case 0x1:
      return PciePortType::kLegacyEndpoint;
    case 0x4:
      return PciePortType::kRootPort;
    case 0x5:
      return PciePortType::kUpstreamPort;
    case 0x6:
      return PciePortType::kDownstreamPort;
    case 0x7:
      return PciePortType::kPcieToPciBridge;
    case 0x8:
      return PciePortType::kPciToPcieBridge;
    case 0x9:
      return PciePortType::kRootComplexEndpoint;
    case 0xa:
      return PciePortType::kRootComplexEventCollector;
    default:
      return std::nullopt;
  }
}

std::string_view to_string(PciePortType type) {
  switch (type) {
    case PciePortType::kEndpoint:
      return "endpoint";
    case PciePortType::kLegacyEndpoint:
      return "legacy_endpoint";
    case PciePortType::kRootPort:
      return "root_port";
    case PciePortType::kUpstreamPort:
      return "upstream_port";
    case PciePortType::kDownstreamPort:
      return "downstream_port";
    case PciePortType::kPcieToPciBridge:
      return "pcie_to_pci_bridge";
    case PciePortType::kPciToPcieBridge:
      return "pci_to_pcie_bridge";
    case PciePortType::kRootComplexEndpoint:
      return "rc_integrated_endpoint";
    case PciePortType::kRootComplexEventCollector:
      return "rc_event_collector";
  }
  return "unknown";
}

}  // namespace nodetopo
