// Reading one PCI function's sysfs directory into its model payload.
//
// Pure reading: no access to the TopologyBuilder, warnings collected rather than reported, so that
// several readers (one per thread, each with its own libpci decoder) can read functions at once
// and the probe then adds them to the tree in a fixed order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nodetopo/probes/parsers.hpp>
#include <nodetopo/probes/sys_dir.hpp>
#include <nodetopo/probes/sys_root.hpp>
#include <nodetopo/topology/node.hpp>

#include "pci/libpci_config.hpp"
#include "pci/pci_device_path.hpp"

namespace nodetopo::probes {

/// CPUs of one NUMA node, for deriving a function's node from its local CPUs.
struct NumaCpus {
  std::uint32_t os_index = 0;
  CpuSet cpus;
};

/// What reading one function produced.
struct PciFunctionRead {
  std::optional<PciFunctionInfo> info;  ///< nullopt: skipped (the warnings say why)
  bool bridge = false;                  ///< forwards to a secondary bus: children nest below it
  /// The entry's joined path (PciEntry::lexical) did not open as canonical: nothing was read,
  /// the link must be resolved.
  bool not_canonical = false;
  std::vector<Error> warnings;  ///< in the order they arose; each names its file
};

class PciFunctionReader {
 public:
  /// `numa_nodes`: NUMA nodes with CPUs; `numa_ids`: every NUMA node of the platform. Both must
  /// outlive the reader and are only read.
  PciFunctionReader(const SysRoot& root, LibpciConfig libpci,
                    const std::vector<NumaCpus>& numa_nodes,
                    const std::vector<std::uint32_t>& numa_ids);

  [[nodiscard]] PciFunctionRead read(const PciEntry& entry);

 private:
  std::optional<std::string> optional_attr(const SysDir& dir, std::string_view attr);
  template <class T>
  std::optional<T> parsed_attr(const SysDir& dir, std::string_view attr,
                               Result<T> (*parse)(std::string_view));
  Result<std::uint64_t> read_hex(const SysDir& dir, std::string_view attr, std::uint64_t max);
  std::optional<std::uint16_t> id_attr(const SysDir& dir, std::string_view attr);
  std::optional<std::string> optional_config(const SysDir& dir);
  std::optional<PciUevent> optional_uevent(const SysDir& dir, const PciAddress& address);
  bool read_identity(const SysDir& dir, const PciAddress& address, PciFunctionInfo& f);
  void warn(std::string message, std::string path);

  const SysRoot& root_;
  LibpciConfig libpci_;
  const std::vector<NumaCpus>& numa_nodes_;
  const std::vector<std::uint32_t>& numa_ids_;
  std::vector<Error>* warnings_ = nullptr;  // of the function being read
  bool subsystem_read_ = false;             // its subsystem ids came from uevent
};

/// The one NUMA node whose CPUs contain all of `cpus`; nullopt when they span several or none.
std::optional<std::uint32_t> numa_from_cpus(const CpuSet& cpus,
                                            const std::vector<NumaCpus>& numa_nodes);

}  // namespace nodetopo::probes
