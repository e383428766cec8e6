#include "pci/pci_device_path.hpp"

#include <algorithm>

#include <nodetopo/probes/parsers.hpp>

namespace nodetopo::probes {

// "pci0000:17", "pci10000:00": the kernel's name for a PCI root bus directory.
bool is_root_bus_name(std::string_view name) {
  if (!name.starts_with("pci")) return false;
  const std::size_t colon = name.find(':');
  if (colon == std::string_view::npos || colon < 7 || colon > 11 || name.size() != colon + 3) {
    return false;
  }
  // Hex digits on both sides of the one colon ("pci0000::0" has the length but no bus).
  const auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  return std::all_of(name.begin() + 3, name.begin() + static_cast<std::ptrdiff_t>(colon), hex) &&
         std::all_of(name.begin() + static_cast<std::ptrdiff_t>(colon) + 1, name.end(), hex);
}

std::optional<std::string> join_plain_link(std::string_view dir, std::string_view target) {
  std::string joined(dir);
  std::size_t start = 0;
  bool climbing = true;
  while (start <= target.size()) {
    const std::size_t end = std::min(target.find('/', start), target.size());
    const std::string_view part = target.substr(start, end - start);
    start = end + 1;
    if (part == ".." && climbing) {
      if (joined.empty()) return std::nullopt;  // above the root
      const std::size_t slash = joined.rfind('/');
      joined.erase(slash == std::string::npos ? 0 : slash);
      continue;
    }
    climbing = false;
    if (part.empty() || part == "." || part == "..") return std::nullopt;
    if (!joined.empty()) joined += '/';
    joined += part;
  }
  if (climbing) return std::nullopt;  // only ".." (or nothing): not a device path
  return joined;
}

// Splits a resolved device path into its root bus and PCI ancestors. Path components before the
// root bus (ARM SoCs put root complexes under platform/...) are ignored. A root bus may nest
// inside a PCI function: Intel VMD puts its domain's root bus in the VMD endpoint
// (pci0000:00/0000:00:0e.0/pci10000:00/10000:00:02.0); the function then belongs to the inner
// root bus, as the kernel's bus hierarchy and lspci have it, and keeps the outer one as its PCIe
// root.
std::optional<PciEntry> parse_device_path(std::string_view resolved) {
  if (!resolved.starts_with("sys/devices/")) return std::nullopt;
  PciEntry entry;
  std::size_t start = std::string_view("sys/devices/").size();
  bool in_pci = false;
  while (start < resolved.size()) {
    const std::size_t end = std::min(resolved.find('/', start), resolved.size());
    const std::string_view part = resolved.substr(start, end - start);
    start = end + 1;
    if (!in_pci) {
      if (is_root_bus_name(part)) {
        entry.root_bus = std::string(part);
        entry.pcie_root = entry.root_bus;
        in_pci = true;
      }
      continue;
    }
    if (is_root_bus_name(part) && !entry.ancestors.empty()) {
      entry.root_bus = std::string(part);
      entry.ancestors.clear();
      continue;
    }
    auto addr = parse_pci_address(part);
    if (!addr) return std::nullopt;  // a non-PCI component inside a PCI path is not a device dir
    entry.ancestors.push_back(*addr);
  }
  if (!in_pci || entry.ancestors.empty()) return std::nullopt;
  entry.address = entry.ancestors.back();
  entry.ancestors.pop_back();
  entry.sysfs_path = std::string(resolved);
  return entry;
}

}  // namespace nodetopo::probes
