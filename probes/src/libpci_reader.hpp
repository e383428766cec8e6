// Thin RAII wrapper around libpci for the PCI probe: identity, class and PCIe capability of one
// function at a time, read through libpci's sysfs back end, with libpci's fatal error handler
// replaced by one that records messages instead of exiting the process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nodetopo/topology/error.hpp>
#include <nodetopo/topology/pci.hpp>

struct pci_access;

namespace nodetopo::probes {

/// What libpci reports about one PCI function.
struct LibpciFunction {
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint16_t subsystem_vendor_id = 0;
  std::uint16_t subsystem_device_id = 0;
  std::optional<std::uint32_t> class_code;  ///< 24-bit; nullopt when `class` is unreadable
  std::uint8_t revision = 0;
  bool ids_known = false;          ///< vendor and device files were readable
  std::optional<int> header_type;  ///< 0 device, 1 PCI bridge, 2 CardBus
  std::optional<std::uint8_t> secondary_bus;
  std::optional<std::uint8_t> subordinate_bus;
  std::optional<PciePortType> port_type;
  bool config_readable = false;       ///< the 64-byte standard header could be read
  std::vector<std::string> problems;  ///< libpci's own warnings about this function
};

class LibpciReader {
 public:
  /// `sysfs_bus_pci` is the root's sys/bus/pci directory (libpci's "sysfs.path").
  static Result<LibpciReader> open(const std::string& sysfs_bus_pci);
  ~LibpciReader();
  LibpciReader(LibpciReader&& other) noexcept;
  LibpciReader& operator=(LibpciReader&& other) noexcept;
  LibpciReader(const LibpciReader&) = delete;
  LibpciReader& operator=(const LibpciReader&) = delete;

  /// Reads one function. The caller has checked that its sysfs entry stays inside the root.
  [[nodiscard]] LibpciFunction read(const PciAddress& address);

 private:
  explicit LibpciReader(pci_access* access) : access_(access) {}
  pci_access* access_ = nullptr;
};

}  // namespace nodetopo::probes
