// PCI value types of the model: addresses, PCIe link state and port types.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nodetopo {

/// PCI vendor ids the code branches on, in one place (the PCI-SIG's assignments, as in pci.ids).
namespace pci_vendor {
inline constexpr std::uint16_t kIntel = 0x8086;
inline constexpr std::uint16_t kNvidia = 0x10de;
inline constexpr std::uint16_t kAmd = 0x1002;
inline constexpr std::uint16_t kMellanox = 0x15b3;  ///< NVIDIA networking (ConnectX, BlueField)
inline constexpr std::uint16_t kHabana = 0x1da3;    ///< Intel Gaudi
}  // namespace pci_vendor

/// A PCI function address (domain:bus:device.function). Domains may be 32-bit (VMD, Hyper-V).
struct PciAddress {
  std::uint32_t domain = 0;
  std::uint8_t bus = 0;
  std::uint8_t device = 0;    ///< 0..31
  std::uint8_t function = 0;  ///< 0..7

  /// "0000:65:00.0"; the domain has at least four hex digits and more when needed
  /// ("10000:00:04.0").
  [[nodiscard]] std::string to_string() const;
  /// Longest to_string(), every field at its widest: "ffffffff:ff:ff.ff".
  static constexpr std::size_t kMaxTextSize = 17;
  /// Writes to_string() at `out` (room for kMaxTextSize characters) and returns the end: for
  /// renderers that format thousands of addresses into a buffer of their own.
  char* to_chars(char* out) const;
  /// A number that orders addresses the way lspci does.
  [[nodiscard]] std::uint64_t sort_key() const {
    return (std::uint64_t{domain} << 16) | (std::uint64_t{bus} << 8) |
           (std::uint64_t{device} << 3) | function;
  }
  /// Same domain, bus and device: two functions of one physical device.
  [[nodiscard]] bool same_device(const PciAddress& other) const {
    return domain == other.domain && bus == other.bus && device == other.device;
  }
  auto operator<=>(const PciAddress&) const = default;
};

/// Name of a PCI root bus as the kernel names its sysfs directory, e.g. "pci0000:17".
/// Kubernetes uses this string for the `resource.kubernetes.io/pcieRoot` attribute.
std::string pci_root_name(std::uint32_t domain, std::uint8_t bus);

/// PCIe link state: speed in mega-transfers per second (2500 .. 64000) and lane count.
/// Zero means unknown (not PCIe, not reported, or "Unknown" in sysfs).
struct PcieLink {
  std::uint32_t speed_mts = 0;
  std::uint32_t width = 0;

  /// PCIe generation (1..6) derived from the speed; 0 when unknown.
  [[nodiscard]] int generation() const;
  [[nodiscard]] bool known() const { return speed_mts != 0 || width != 0; }
  /// "16 GT/s x16", "8 GT/s", "x4" or "" when unknown.
  [[nodiscard]] std::string to_string() const;
  /// Longest to_string(), every field at its widest: "ffffffff:ff:ff.ff".
  static constexpr std::size_t kMaxTextSize = 17;
  /// Writes to_string() at `out` (room for kMaxTextSize characters) and returns the end: for
  /// renderers that format thousands of addresses into a buffer of their own.
  char* to_chars(char* out) const;
  bool operator==(const PcieLink&) const = default;
};

/// Device/port type from the PCI Express capability register (bits 7:4).
enum class PciePortType : std::uint8_t {
  kEndpoint = 0x0,
  kLegacyEndpoint = 0x1,
  kRootPort = 0x4,
  kUpstreamPort = 0x5,
  kDownstreamPort = 0x6,
  kPcieToPciBridge = 0x7,
  kPciToPcieBridge = 0x8,
  kRootComplexEndpoint = 0x9,
  kRootComplexEventCollector = 0xa,
};

/// Decodes the 4-bit type field; nullopt for reserved values.
std::optional<PciePortType> pcie_port_type_from_field(unsigned field);
/// "endpoint", "root_port", "upstream_port", "downstream_port", ...
std::string_view to_string(PciePortType type);

}  // namespace nodetopo
