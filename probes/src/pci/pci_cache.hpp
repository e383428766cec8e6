// The PCI part of a DiscoveryCache (nodetopo/probes/discovery_cache.hpp): functions as read, and
// the pci.ids names of the devices present.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nodetopo/probes/pci_ids.hpp>

#include "pci/pci_device_path.hpp"
#include "pci/pci_function_reader.hpp"

namespace nodetopo::probes::detail {

struct PciCache {
  /// One bus/pci/devices entry as the last discovery read it: the link's target (the entry is
  /// reused only while it is the same) and the read before its NUMA node was settled.
  struct Function {
    std::string target;
    PciEntry entry;
    PciFunctionRead read;
  };
  std::map<std::string, Function, std::less<>> functions;  ///< by entry name
  /// Whether `functions` holds the last discovery (false: read every function).
  bool valid = false;
  /// Read again: every function (`all_dirty`) or those related to these device paths.
  bool all_dirty = true;
  std::vector<std::string> dirty_paths;

  /// Names found for the IDs asked so far (present devices only), and which were asked, found
  /// or not, so that absent names are not searched for again.
  PciNames names;
  std::set<std::uint16_t> vendors_asked;
  std::set<std::pair<std::uint16_t, std::uint16_t>> devices_asked;
  std::set<std::uint16_t> classes_asked;

  void clear() {
    functions.clear();
    valid = false;
    all_dirty = true;
    dirty_paths.clear();
    names = {};
    vendors_asked.clear();
    devices_asked.clear();
    classes_asked.clear();
  }

  /// Whether the function at `sysfs_path` must be read again: every path an event named, its
  /// PCI ancestors (a downstream port's link state changes with what is plugged below it) and
  /// its descendants (a bridge removed takes its subtree).
  [[nodiscard]] bool dirty(std::string_view sysfs_path) const {
    if (all_dirty) return true;
    for (const std::string& d : dirty_paths) {
      const std::string_view a = sysfs_path;
      const std::string_view b = d;
      const std::string_view shorter = a.size() < b.size() ? a : b;
      const std::string_view longer = a.size() < b.size() ? b : a;
      if (longer.starts_with(shorter) &&
          (longer.size() == shorter.size() || longer[shorter.size()] == '/')) {
        return true;
      }
    }
    return false;
  }
};

}  // namespace nodetopo::probes::detail
