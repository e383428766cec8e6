// Names of PCI vendors and devices: the project's own table of recent parts first (the system
// pci.ids is often too old for H200, MI300X or Gaudi3), then libpci's pci.ids database.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace nodetopo::probes {

struct KnownPciDevice {
  std::uint16_t vendor_id;
  std::uint16_t device_id;
  std::string_view vendor_name;
  std::string_view device_name;
};

/// The project's own entry for vendor:device, if it has one.
std::optional<KnownPciDevice> find_known_pci_device(std::uint16_t vendor_id,
                                                    std::uint16_t device_id);
/// Short vendor name of the project's table ("NVIDIA Corporation"), if listed.
std::optional<std::string_view> find_known_pci_vendor(std::uint16_t vendor_id);

}  // namespace nodetopo::probes
