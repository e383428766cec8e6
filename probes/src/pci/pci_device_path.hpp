// Where a PCI function sits: its resolved sysfs path split into root bus and PCI ancestors.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/topology/pci.hpp>

namespace nodetopo::probes {

/// One enumerated function before it becomes a node.
struct PciEntry {
  PciAddress address;
  std::string name;                   ///< directory name under bus/pci/devices
  std::string sysfs_path;             ///< resolved, root-relative
  std::string root_bus;               ///< "pci0000:17": the root bus the function hangs from
  std::string pcie_root;              ///< the first root bus on the path (Kubernetes' pcieRoot)
  std::vector<PciAddress> ancestors;  ///< PCI functions on the path, outermost first
  /// sysfs_path was joined from the link's text, not resolved: it holds only if the directory
  /// opens as canonical (SysRoot::open_canonical_dir), else the link is resolved after all.
  bool lexical = false;
};

/// "pci0000:17", "pci10000:00": the kernel's name for a PCI root bus directory.
bool is_root_bus_name(std::string_view name);

/// The root-relative path a symlink in directory `dir` leads to, joined as text, when its target
/// is a run of ".." followed by plain names — how the kernel writes every sysfs link
/// ("../../../devices/pci0000:00/0000:00:01.0"). nullopt for anything else (absolute, "." or ".."
/// further on, climbing above the root): such a link needs SysRoot::resolve.
std::optional<std::string> join_plain_link(std::string_view dir, std::string_view target);

/// Splits a resolved device path ("sys/devices/pci0000:17/0000:17:00.0/...") into its root bus and
/// PCI ancestors; nullopt when it is not a PCI device directory under sys/devices.
std::optional<PciEntry> parse_device_path(std::string_view resolved);

}  // namespace nodetopo::probes
