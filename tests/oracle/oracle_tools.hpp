// Readers for the output of the real tools used as oracles on a host root:
//   HWLOC_FSROOT=<root> HWLOC_COMPONENTS=linux,stop lstopo-no-graphics --of xml --whole-io
//   lspci -A linux-sysfs -O sysfs.path=<root>/sys/bus/pci -tv
// and the same facts extracted from nodetopo's model, in one comparable shape.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/topology/topology.hpp>

namespace nodetopo::oracle {

/// What a PCI function's parent is called in the comparisons: the BDF of the nearest upstream PCI
/// function (a bridge, or whatever function sysfs nests it under), or this string when the
/// function sits directly on a root bus.
inline constexpr const char* kHostBridge = "host bridge";

/// BDF ("0000:17:00.0") -> parent (a BDF or kHostBridge).
using PciParents = std::map<std::string, std::string>;

struct NumaFacts {
  std::set<std::uint32_t> cpus;
  std::string subtype;  ///< "GPUMemory" or empty
  std::uint64_t memory_bytes = 0;
};

/// A PCI function's identity as hwloc's XML writes it: pci_type="CCCC [vvvv:dddd] [ssss:ssss] rr"
/// and pci_link_speed (GB/s of the current link, 0 when unknown).
struct PciIdentity {
  unsigned class_id = 0;  ///< base class and subclass
  unsigned vendor = 0;
  unsigned device = 0;
  unsigned subsystem_vendor = 0;
  unsigned subsystem_device = 0;
  unsigned revision = 0;
  double link_gbps = 0;
  bool is_bridge = false;
};

/// What lstopo's XML says about a root.
struct LstopoFacts {
  std::map<std::uint32_t, NumaFacts> numa;  ///< by OS index
  /// NUMALatency matrix by OS index pairs, when present.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t> distances;
  PciParents pci;
  std::map<std::string, PciIdentity> pci_identity;  ///< by BDF
  std::string stderr_text;
};

/// Runs lstopo-no-graphics on `root` (with HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES=1 like the probe) and
/// parses its XML. Throws std::runtime_error with the tool's stderr when it fails or the XML is
/// not what this reader understands.
LstopoFacts run_lstopo(const std::string& root);

/// Parses lstopo's XML text (exposed for tests of the reader itself).
LstopoFacts parse_lstopo_xml(const std::string& xml);

/// hwloc's bitmap text ("0x000000ff,0xff000000,,0x0000ffff") as a set of bit numbers. Throws on
/// anything else (including hwloc's infinite "0xf...f" form).
std::set<std::uint32_t> parse_hwloc_bitmap(const std::string& text);

struct LspciResult {
  int exit_code = -1;
  std::string stderr_text;
  PciParents pci;  ///< empty unless exit_code == 0
};

/// Runs `lspci -A linux-sysfs -O sysfs.path=<root>/sys/bus/pci -tv`; parses the tree on success.
LspciResult run_lspci_tree(const std::string& root);

/// Parses the tree art of `lspci -t` / `lspci -tv`. Nesting is by column: a `[dddd:bb]` entry is a
/// bus, `dd.f` a function on the bus of its parent (a bus entry, or the secondary bus `-[ss]` /
/// `-[ss-ee]` of the bridge it hangs from); a bus printed under a bridge belongs to that bridge.
/// Names after a function (-v) are ignored. Throws std::runtime_error on text it cannot place.
PciParents parse_lspci_tree(const std::string& text);

/// The same facts from nodetopo's model.
PciParents model_pci_parents(const Topology& topology);
std::map<std::uint32_t, NumaFacts> model_numa(const Topology& topology);

/// The same facts from `topo dump --format json` output.
PciParents json_pci_parents(const nlohmann::json& doc);
std::map<std::uint32_t, NumaFacts> json_numa(const nlohmann::json& doc);

/// Human-readable difference of two parent maps ("" when equal), naming `left` and `right`.
std::string diff_parents(const PciParents& left, const std::string& left_name,
                         const PciParents& right, const std::string& right_name);

}  // namespace nodetopo::oracle
