// Reading one PCI function's sysfs directory into its model payload.
//
// Pure reading: no access to the TopologyBuilder, warnings collected rather than reported, so that
// several readers (one per thread, each with its own libpci decoder) can read functions at once
// and the probe then adds them to the tree in a fixed order. Nothing read depends on the platform
// probe either: the one fact that needs its NUMA nodes (which node a function belongs to) is
// settled afterwards by resolve_numa(), so the PCI walk can run while hwloc loads the CPUs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
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
  /// The `numa_node` attribute as read (nullopt: absent or unusable; inner nullopt: -1), for
  /// resolve_numa(). Its warning, if any, belongs at `numa_warning_at` in `warnings`.
  std::optional<std::optional<std::uint32_t>> numa_attr;
  std::size_t numa_warning_at = 0;
};

/// Settles `read.info->numa_node` (of a function read under `root`) once the platform is known:
/// `numa_ids` (every NUMA node of the platform; empty: none known, any id is taken) and
/// `numa_nodes` (those with CPUs). An id the platform does not have is dropped with a warning at
/// the place the reader would have put it; -1 (or no attribute) is derived from the local CPUs when
/// they lie in exactly one node.
void resolve_numa(const SysRoot& root, PciFunctionRead& read,
                  const std::vector<NumaCpus>& numa_nodes,
                  const std::vector<std::uint32_t>& numa_ids);

/// How a function's config space is read (PciFunctionReader::read_config()).
enum class ConfigReads {
  kWhole,   ///< the standard 256 bytes in one read: a capture or mock tree's plain file
  kSparse,  ///< only the registers decoded (pci_config_sparse.hpp): the kernel's config accessor
};

class PciFunctionReader {
 public:
  /// Config space is read sparsely on a live root, whole otherwise; tests choose with `reads`.
  PciFunctionReader(const SysRoot& root, LibpciConfig libpci);
  PciFunctionReader(const SysRoot& root, LibpciConfig libpci, ConfigReads reads);

  /// The local CPUs already read for a numa_node value (-1: inner nullopt) in one hierarchy.
  using LocalCpusByNode = std::vector<std::pair<std::optional<std::uint32_t>, CpuSet>>;

  /// Reads one function; its NUMA node is left for resolve_numa(). With `memo`, the local CPUs
  /// are taken from an earlier function of `memo` that named the same NUMA node (the kernel
  /// derives them from the node), else read and added to it; the caller keeps one memo per
  /// hierarchy, read in a fixed order, so that what is read does not depend on thread scheduling.
  [[nodiscard]] PciFunctionRead read(const PciEntry& entry, LocalCpusByNode* memo = nullptr);
  /// The same, from `dir`: the entry's directory, already opened (canonical for an entry read
  /// through its joined path, PciEntry::lexical).
  [[nodiscard]] PciFunctionRead read(const PciEntry& entry, const SysDir& dir,
                                     LocalCpusByNode* memo);

  /// Why libpci, opened by the first function whose capabilities had to be walked, could not be
  /// (LibpciConfig::open_error()): the reads since then lack what the capabilities say.
  [[nodiscard]] const std::optional<Error>& libpci_error() const { return libpci_.open_error(); }

 private:
  std::optional<std::string> optional_attr(const SysDir& dir, std::string_view attr);
  template <class T>
  std::optional<T> parsed_attr(const SysDir& dir, std::string_view attr,
                               Result<T> (*parse)(std::string_view));
  Result<std::uint64_t> read_hex(const SysDir& dir, std::string_view attr, std::uint64_t max);
  std::optional<std::uint16_t> id_attr(const SysDir& dir, std::string_view attr);
  std::optional<std::string> usable_config(const SysDir& dir, Result<std::string> bytes);
  std::optional<DecodedConfig> read_config(const SysDir& dir, const PciAddress& address);
  // The standard space (all of it when a capability runs past it) through `read_up_to`.
  std::optional<DecodedConfig> decode_whole(
      const SysDir& dir, const PciAddress& address,
      const std::function<Result<std::string>(std::size_t)>& read_up_to);
  // `file`: config opened by SysDir::open_file() (an error other than kInvalid).
  std::optional<DecodedConfig> read_config_sparse(const SysDir& dir, Result<SysFile> file,
                                                  const PciAddress& address);
  std::optional<PciUevent> optional_uevent(const SysDir& dir, const PciAddress& address);
  bool read_identity(const SysDir& dir, const PciAddress& address, PciFunctionInfo& f);
  CpuSet local_cpus(const SysDir& dir, const std::optional<std::optional<std::uint32_t>>& numa,
                    LocalCpusByNode* memo);
  void warn(std::string message, std::string path);

  const SysRoot& root_;
  LibpciConfig libpci_;
  ConfigReads config_reads_;
  std::vector<Error>* warnings_ = nullptr;  // of the function being read
  bool subsystem_read_ = false;             // its subsystem ids came from uevent
};

/// The one NUMA node whose CPUs contain all of `cpus`; nullopt when they span several or none.
std::optional<std::uint32_t> numa_from_cpus(const CpuSet& cpus,
                                            const std::vector<NumaCpus>& numa_nodes);

}  // namespace nodetopo::probes
