// Opening the device directories of one PCI hierarchy through their parents' descriptors.
//
// A function's directory lies ten components deep on a machine with two levels of PCIe switches
// (sys/devices/pci0000:00/<root port>/<switch up>/<switch down>/.../<function>). Opened from the
// host root, every one of them makes the kernel look up and check every component again; opened
// in path order, each through the directory of its parent that is still open, it costs one
// component. The chain keeps only the ancestors of the directory last opened, so it holds at
// most one descriptor per level.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/probes/sys_dir.hpp>
#include <nodetopo/probes/sys_root.hpp>

namespace nodetopo::probes {

class PciDirChain {
 public:
  explicit PciDirChain(const SysRoot& root) : root_(root) {}

  /// Directory `rel` (a plain root-relative path, "sys/devices/pci0000:00/0000:00:01.0"), proven
  /// canonical: through the deepest ancestor still open, one component at a time and refusing
  /// symlinks (SysDir::open_subdir), the first ancestor by a kernel-checked open from the root.
  /// nullptr when a component does not open that way: the caller then takes the root's path
  /// (SysRoot::open_canonical_dir and its fallbacks), which decides and words the error exactly
  /// as without the chain. Valid until the next call.
  ///
  /// Cheapest when called in sorted path order, as then every parent is still open.
  [[nodiscard]] const SysDir* open(std::string_view rel);

 private:
  struct Opened {
    std::string path;
    SysDir dir;
  };

  const SysRoot& root_;
  std::vector<Opened> chain_;  // each the parent directory of the next
};

}  // namespace nodetopo::probes
