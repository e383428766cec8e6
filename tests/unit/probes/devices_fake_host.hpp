// Small hand-made host roots for the device probe tests: PCI functions laid out the way the
// kernel lays them out (a directory under sys/devices/pciDDDD:BB, a link in sys/bus/pci/devices),
// network interfaces, RDMA devices and KFD trees.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/sys_root.hpp>

#include "test_support.hpp"

namespace nodetopo::test {

class FakeHost {
 public:
  FakeHost();

  [[nodiscard]] const std::filesystem::path& root() const { return dir_.path(); }

  /// Writes a root-relative file.
  void write(const std::string& rel, const std::string& content) const;
  /// Creates a root-relative symlink whose target is `target_rel` (root-relative), written as a
  /// relative link the way sysfs writes them.
  void link(const std::string& rel, const std::string& target_rel) const;
  /// Creates a symlink with a literal target.
  void raw_link(const std::string& rel, const std::string& target) const;

  struct Pci {
    std::string bdf;  ///< "0000:1b:00.0"
    std::uint16_t vendor = 0;
    std::uint16_t device = 0;
    std::uint32_t class_code = 0;  ///< 24-bit
    std::string driver;            ///< bound driver name, empty for none
  };
  /// Adds an endpoint function (identity files, a 64-byte config header, driver link, the
  /// sys/bus/pci/devices link) under `parent_dir` (root-relative; empty: its own root bus).
  /// Returns its root-relative device directory.
  std::string add_pci(const Pci& pci, const std::string& parent_dir = "") const;

  /// Adds a network interface directory under `device_dir` (empty: sys/devices/virtual/net) with
  /// the given attribute files and a `device` link to `device_dir`, plus its sys/class/net link.
  /// Returns the interface directory.
  std::string add_net(const std::string& name, const std::string& device_dir,
                      const std::map<std::string, std::string>& attrs) const;

  /// Adds an RDMA device under `device_dir` (empty: sys/devices/virtual/infiniband) and its
  /// sys/class/infiniband link. `ports` maps a port number to its attribute files (relative to
  /// the port directory, e.g. "state", "gid_attrs/ndevs/0"). Returns the device directory.
  std::string add_rdma(const std::string& name, const std::string& device_dir,
                       const std::string& node_guid,
                       const std::map<int, std::map<std::string, std::string>>& ports) const;

  /// Copies a directory of KFD nodes (a capture's `nodes/`) to sys/class/kfd/kfd/topology/nodes
  /// (hard links where the file system allows: the tests never write to it).
  void copy_kfd_nodes(const std::filesystem::path& nodes_dir) const;

  /// Opens the root as a capture (never live), its paths walked as `walk` says.
  [[nodiscard]] probes::SysRoot sys_root(
      probes::SysRoot::PathWalk walk = probes::SysRoot::PathWalk::kKernelChecked) const;

 private:
  TempDir dir_;
};

/// PCI + net + rdma + accelerator + kfd probes (no hwloc: hand-made roots have no CPUs).
std::vector<std::unique_ptr<probes::Probe>> device_probes();

/// Runs `probes` over `root`.
probes::Discovery run(const probes::SysRoot& root,
                      const std::vector<std::unique_ptr<probes::Probe>>& probes);

/// Whether this process may run on more than one CPU (its affinity mask): only then do the
/// probes read with several threads.
bool several_cpus();

/// run() with the process's affinity narrowed to its first CPU meanwhile (restored after): the
/// discovery one reader thread gives, to compare with run()'s.
probes::Discovery run_on_one_cpu(const probes::SysRoot& root,
                                 const std::vector<std::unique_ptr<probes::Probe>>& probes);

/// Every probe's discovery of the real capture `name` (captures.hpp).
probes::Discovery discover_capture(const std::string& name);

/// The report of probe `name` in a discovery (fails the test when absent).
const ProbeReport& report_of(const probes::Discovery& discovery, std::string_view name);

/// The id of a node's parent.
std::string parent_id(const Topology& topo, std::string_view id);

}  // namespace nodetopo::test
