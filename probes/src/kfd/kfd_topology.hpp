// Reading the AMD KFD topology tree (sys/class/kfd/kfd/topology/nodes) and mapping its GPU nodes
// onto the PCI functions of physical GPUs. Shared by the accelerator probe (identity fields) and
// the KFD probe (partitions, xGMI links).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/probes/probe.hpp>
#include <nodetopo/probes/sys_dir.hpp>
#include <nodetopo/probes/sys_root.hpp>
#include <nodetopo/topology/pci.hpp>

namespace nodetopo::probes {

/// io_link types of include/uapi/linux/kfd_sysfs.h that matter here.
inline constexpr std::uint32_t kKfdIoLinkPcie = 2;
inline constexpr std::uint32_t kKfdIoLinkXgmi = 11;

struct KfdIoLink {
  std::uint32_t type = 0;
  std::uint32_t node_to = 0;
  std::uint64_t max_bandwidth = 0;  ///< MB/s; 0 when KFD does not know it
  std::string file;                 ///< root-relative path of its properties file
};

struct KfdNode {
  std::uint32_t id = 0;
  bool gpu = false;                   ///< simd_count > 0
  std::optional<PciAddress> address;  ///< GPU nodes: domain + location_id
  std::uint32_t vendor_id = 0;
  std::uint32_t device_id = 0;
  std::uint64_t unique_id = 0;  ///< 0 when the kernel does not report one
  std::uint64_t hive_id = 0;    ///< xGMI hive, 0 when none
  std::uint32_t gfx_target_version = 0;
  std::uint64_t frame_buffer_bytes = 0;  ///< sum of the FB_PUBLIC/FB_PRIVATE memory banks
  std::vector<KfdIoLink> io_links;
  std::string dir;  ///< root-relative node directory
};

/// The KFD topology as read. Malformed files do not stop the read: their node (properties) or
/// link (io_link properties) is left out and described in `problems`, one Error per file, and the
/// ids of left-out nodes are kept in `skipped_nodes` so that links to them are not reported twice.
struct KfdTopology {
  std::vector<KfdNode> nodes;  ///< by id
  std::vector<std::uint32_t> skipped_nodes;
  std::vector<Error> problems;

  [[nodiscard]] const KfdNode* find(std::uint32_t id) const;
  [[nodiscard]] bool skipped(std::uint32_t id) const;
};

/// The root-relative directory of the KFD nodes.
inline constexpr std::string_view kKfdNodesDir = "sys/class/kfd/kfd/topology/nodes";
/// The kernel's count of changes to the tree (kfd_topology.c adds one for every GPU added or
/// removed and every update of a node's properties; ROCm's libhsakmt compares it to learn
/// whether the topology it read is still current).
inline constexpr std::string_view kKfdGenerationFile = "sys/class/kfd/kfd/topology/generation_id";

/// Reads the tree: every node's properties, io_links and mem_banks. ErrorCode::kNotFound when
/// the root has no KFD topology; other errors only when the nodes directory itself cannot be
/// listed. `nodes_dir_open`: the nodes directory when the caller has it open already.
Result<KfdTopology> read_kfd_topology(const SysRoot& root,
                                      std::optional<SysDir> nodes_dir_open = std::nullopt);

/// read_kfd_topology() of the context's root, read once per discovery (ProbeContext::
/// shared_reads()): the accelerator probe and the KFD probe both need it. The result stays valid
/// while the context's shared reads do (the whole discovery). With a DiscoveryCache, the last
/// discovery's reading is taken again while the tree's generation_id reads the same (a root
/// without the file is read every time), and is read again after a full invalidation.
const Result<KfdTopology>& shared_kfd_topology(ProbeContext& ctx);

/// One physical GPU and its KFD nodes (one, or one per compute partition), by node id.
struct KfdGpu {
  PciAddress address;
  std::vector<const KfdNode*> nodes;
  /// The GPU's first KFD node (lowest id).
  [[nodiscard]] const KfdNode& primary() const { return *nodes.front(); }
};

/// A GPU node that matched no physical GPU.
struct KfdUnmatched {
  const KfdNode* node = nullptr;
  /// Why, when it is not simply "no accelerator at the node's address".
  std::string reason;
};

struct KfdGpuMap {
  std::map<PciAddress, KfdGpu> gpus;
  std::vector<KfdUnmatched> unmatched;
};

/// Maps each GPU node onto the physical GPU it belongs to. `is_gpu(address)` says whether the
/// topology has a GPU at a PCI address. A node matches the GPU at its own address; else, for a
/// partition (the kernel ORs the partition number into the function bits of location_id), the
/// GPU at function 0 of the same device. A node whose non-zero unique_id differs from that of
/// the GPU's first node is not a partition of it and stays unmatched.
KfdGpuMap map_kfd_gpus(const KfdTopology& topology,
                       const std::function<bool(const PciAddress&)>& is_gpu);

}  // namespace nodetopo::probes
