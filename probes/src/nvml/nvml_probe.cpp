#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include <nodetopo/probes/environment.hpp>
#include <nodetopo/probes/nvml_probe.hpp>
#include <nodetopo/topology/ids.hpp>

#include "nvml/nvml_library.hpp"
#include "nvml/nvml_text.hpp"

namespace nodetopo::probes {

namespace {

using namespace nvml_abi;

constexpr std::uint32_t kBridgeOtherClass = 0x0680;  // NVSwitches: "Bridge: other" (class >> 8)
constexpr std::uint32_t kDisplayBaseClass = 0x03;    // GPUs: VGA 0300 or 3D controller 0302

// Answers that are normal on healthy hosts: the board, the driver or the platform simply does not
// have the attribute (no serial on GeForce, no GPU NUMA node on x86, no fabric without NVSwitch).
// They drop the attribute silently; every other failure is a warning.
bool quiet_failure(nvmlReturn_t rc) {
  return rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND ||
         rc == NVML_ERROR_DEPRECATED;
}

enum class RemoteKind { kGpu, kSwitch, kIbmNpu, kUnknown };

// The node at the far end of NVLinks to one PCI address, or why there is none.
struct RemoteEnd {
  NodeIndex node = kNoNode;
  std::string issue;  // set when node is kNoNode: the grouped warning's message
};

// One NVML device matched to its PCI function.
struct Gpu {
  unsigned int index = 0;
  nvmlDevice_t handle = nullptr;
  PciAddress address;
  std::string label;         // "NVML device 0000:1b:00.0 (index 0)", the prefix of its warnings
  NodeIndex node = kNoNode;  // its accelerator node
};

// What NVML said about one device; unset members were not reported.
struct DeviceFacts {
  std::optional<std::string> name;
  std::optional<std::string> uuid;
  std::optional<std::string> serial;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::string> architecture;
  std::optional<std::uint32_t> numa_node;
  std::optional<std::string> fabric_cluster_uuid;
  std::optional<std::uint32_t> fabric_clique_id;
};

// Problems with the NVLinks of one device, grouped by message, so that a call failing on all 18
// links of a GPU gives one warning that lists the links rather than 18 warnings.
class LinkIssues {
 public:
  void add(std::string message, unsigned int link) {
    by_message_[std::move(message)].push_back(link);
  }
  void flush(ProbeContext& ctx, const std::string& label) {
    for (const auto& [message, links] : by_message_) {
      ctx.warn(label + ": " + message + (links.size() == 1 ? " (NVLink " : " (NVLinks ") +
               link_list(links) + ")");
    }
    by_message_.clear();
  }

 private:
  std::map<std::string, std::vector<unsigned int>> by_message_;
};

class NvmlDiscovery {
 public:
  NvmlDiscovery(ProbeContext& ctx, TopologyBuilder& builder, const NvmlLibrary& library)
      : ctx_(ctx), builder_(builder), lib_(library), api_(library.api()) {}

  Result<void> run() {
    unsigned int count = 0;
    const nvmlReturn_t rc = api_.nvmlDeviceGetCount_v2(&count);
    if (rc != NVML_SUCCESS) {
      return make_error(ErrorCode::kIo, "nvmlDeviceGetCount_v2 failed: " + lib_.describe(rc));
    }
    if (count == 0) return make_error(ErrorCode::kUnavailable, "NVML reports no GPU on this host");
    read_system(count);
    for (unsigned int i = 0; i < count; ++i)
      open_device(i);
    for (Gpu& gpu : gpus_)
      read_links(gpu);
    for (const auto& [ends, count_of_links] : link_counts_) {
      Link link;
      link.kind = LinkKind::kNvLink;
      link.from = ends.first;
      link.to = ends.second;
      link.value = count_of_links;
      builder_.add_link(link);
    }
    return {};
  }

 private:
  // ---- system -----------------------------------------------------------------------------------
  void read_system(unsigned int count) {
    if (api_.nvmlSystemGetDriverVersion != nullptr) {
      char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
      const nvmlReturn_t rc = api_.nvmlSystemGetDriverVersion(buf, sizeof buf);
      if (rc == NVML_SUCCESS) {
        driver_version_ = nvml_string(buf, sizeof buf);
      } else {
        report("NVML", "nvmlSystemGetDriverVersion", rc);
      }
    }
    std::string cuda = "unknown";
    if (api_.nvmlSystemGetCudaDriverVersion_v2 != nullptr) {
      int version = 0;
      if (api_.nvmlSystemGetCudaDriverVersion_v2(&version) == NVML_SUCCESS && version > 0) {
        cuda = std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
      }
    }
    ctx_.log().debug("NVML from '{}': driver {}, CUDA {}, {} GPU(s)", lib_.path(),
                     driver_version_.empty() ? "unknown" : driver_version_, cuda, count);
  }

  // Records a failed call: a warning naming the object and the call, or a debug line for the
  // failures that only mean "not available here".
  void report(const std::string& who, const char* call, nvmlReturn_t rc) {
    if (quiet_failure(rc)) {
      ctx_.log().debug("{}: {}: {}", who, call, lib_.describe(rc));
      return;
    }
    ctx_.warn(who + ": " + call + " failed: " + lib_.describe(rc));
  }

  // ---- devices ----------------------------------------------------------------------------------
  void open_device(unsigned int index) {
    const std::string by_index = "NVML device index " + std::to_string(index);
    Gpu gpu;
    gpu.index = index;
    nvmlReturn_t rc = api_.nvmlDeviceGetHandleByIndex_v2(index, &gpu.handle);
    if (rc != NVML_SUCCESS) {
      ctx_.warn(by_index + ": nvmlDeviceGetHandleByIndex_v2 failed: " + lib_.describe(rc) +
                "; device skipped");
      return;
    }
    nvmlPciInfo_t pci{};
    rc = api_.nvmlDeviceGetPciInfo_v3(gpu.handle, &pci);
    if (rc != NVML_SUCCESS) {
      ctx_.warn(by_index + ": nvmlDeviceGetPciInfo_v3 failed: " + lib_.describe(rc) +
                "; device skipped (its PCI address is unknown)");
      return;
    }
    auto address = nvml_pci_address(pci);
    if (!address) {
      ctx_.warn(by_index + ": " + address.error().message + "; device skipped");
      return;
    }
    gpu.address = address.value();
    const std::string bdf = gpu.address.to_string();
    gpu.label = "NVML device " + bdf + " (index " + std::to_string(index) + ")";

    const auto pci_node = builder_.find(node_id::pci(bdf));
    if (!pci_node || !builder_.node(*pci_node).is_pci()) {
      ctx_.warn(gpu.label + ": no PCI function pci/" + bdf +
                " in the topology (PCI probe unavailable, or the root does not match the host "
                "NVML describes); device skipped");
      return;
    }
    if (gpu_nodes_.contains(gpu.address)) {
      ctx_.warn(gpu.label + ": NVML reports this PCI address twice; duplicate skipped");
      return;
    }
    const DeviceFacts facts = read_facts(gpu);
    gpu.node = accelerator_node(gpu, *pci_node);
    if (gpu.node == kNoNode) return;
    apply(gpu, facts);
    gpu_nodes_.emplace(gpu.address, gpu.node);
    gpus_.push_back(std::move(gpu));
  }

  template <class Fn>
  std::optional<std::string> read_string(const Gpu& gpu, Fn fn, const char* call,
                                         unsigned int size) {
    if (fn == nullptr) return std::nullopt;
    std::string buf(size, '\0');
    const nvmlReturn_t rc = fn(gpu.handle, buf.data(), size);
    if (rc != NVML_SUCCESS) {
      report(gpu.label, call, rc);
      return std::nullopt;
    }
    std::string value = nvml_string(buf.data(), buf.size());
    if (value.empty()) return std::nullopt;
    return value;
  }

  DeviceFacts read_facts(const Gpu& gpu) {
    DeviceFacts f;
    f.name = read_string(gpu, api_.nvmlDeviceGetName, "nvmlDeviceGetName",
                         NVML_DEVICE_NAME_V2_BUFFER_SIZE);
    f.uuid = read_string(gpu, api_.nvmlDeviceGetUUID, "nvmlDeviceGetUUID",
                         NVML_DEVICE_UUID_V2_BUFFER_SIZE);
    f.serial = read_string(gpu, api_.nvmlDeviceGetSerial, "nvmlDeviceGetSerial",
                           NVML_DEVICE_SERIAL_BUFFER_SIZE);
    if (api_.nvmlDeviceGetMemoryInfo != nullptr) {
      nvmlMemory_t memory{};
      const nvmlReturn_t rc = api_.nvmlDeviceGetMemoryInfo(gpu.handle, &memory);
      if (rc == NVML_SUCCESS) {
        f.memory_bytes = memory.total;
      } else {
        report(gpu.label, "nvmlDeviceGetMemoryInfo", rc);
      }
    }
    if (api_.nvmlDeviceGetArchitecture != nullptr) {
      nvmlDeviceArchitecture_t arch = NVML_DEVICE_ARCH_UNKNOWN;
      const nvmlReturn_t rc = api_.nvmlDeviceGetArchitecture(gpu.handle, &arch);
      if (rc == NVML_SUCCESS) {
        std::string name = nvml_architecture_name(arch);
        if (!name.empty()) {
          f.architecture = std::move(name);
        } else {
          ctx_.log().debug("{}: architecture {} not known to this build", gpu.label, arch);
        }
      } else {
        report(gpu.label, "nvmlDeviceGetArchitecture", rc);
      }
    }
    if (api_.nvmlDeviceGetNumaNodeId != nullptr) {
      unsigned int numa = 0;
      const nvmlReturn_t rc = api_.nvmlDeviceGetNumaNodeId(gpu.handle, &numa);
      if (rc == NVML_SUCCESS) {
        f.numa_node = numa;
      } else {
        report(gpu.label, "nvmlDeviceGetNumaNodeId", rc);
      }
    }
    read_fabric(gpu, f);
    return f;
  }

  // Fabric (NVLink domain) registration. The versioned call is tried first, v3 then v2, because
  // the unversioned one is deprecated (CUDA 13) and announced for removal; drivers before R550
  // only have the unversioned one, and a driver may know v2 but not v3. The first variant that
  // answers wins; when none does, the first real error (not "not supported", not a version the
  // driver does not know) is reported.
  void read_fabric(const Gpu& gpu, DeviceFacts& f) {
    std::optional<nvmlGpuFabricInfo_t> info;  // normalised to the unversioned layout
    const char* failed_call = nullptr;
    nvmlReturn_t failure = NVML_SUCCESS;
    auto note = [&](const char* call, nvmlReturn_t rc) {
      if (failed_call == nullptr && rc != NVML_ERROR_ARGUMENT_VERSION_MISMATCH &&
          !quiet_failure(rc)) {
        failed_call = call;
        failure = rc;
      }
    };
    if (api_.nvmlDeviceGetGpuFabricInfoV != nullptr) {
      nvmlGpuFabricInfo_v3_t v3{};
      v3.version = nvmlGpuFabricInfo_v3;
      nvmlReturn_t rc = api_.nvmlDeviceGetGpuFabricInfoV(gpu.handle, &v3);
      if (rc == NVML_SUCCESS) {
        info = from_versioned(v3);
      } else {
        note("nvmlDeviceGetGpuFabricInfoV", rc);
        nvmlGpuFabricInfo_v2_t v2{};
        v2.version = nvmlGpuFabricInfo_v2;
        rc = api_.nvmlDeviceGetGpuFabricInfoV(gpu.handle, &v2);
        if (rc == NVML_SUCCESS) info = from_versioned(v2);
      }
    }
    if (!info && api_.nvmlDeviceGetGpuFabricInfo != nullptr) {
      nvmlGpuFabricInfo_t legacy{};
      const nvmlReturn_t rc = api_.nvmlDeviceGetGpuFabricInfo(gpu.handle, &legacy);
      if (rc == NVML_SUCCESS) {
        info = legacy;
      } else {
        note("nvmlDeviceGetGpuFabricInfo", rc);
      }
    }
    if (!info) {
      if (failed_call != nullptr) {
        report(gpu.label, failed_call, failure);
      } else {
        ctx_.log().debug("{}: no GPU fabric information", gpu.label);
      }
      return;
    }
    if (info->state != NVML_GPU_FABRIC_STATE_COMPLETED) {
      // Not started / in progress (fabric manager still working) or not supported: no membership
      // to report yet, and not a fault of this host's probe.
      ctx_.log().debug("{}: GPU fabric registration state {}", gpu.label, unsigned{info->state});
      return;
    }
    if (info->status != NVML_SUCCESS) {
      ctx_.warn(gpu.label + ": GPU fabric registration completed with an error: " +
                lib_.describe(info->status));
      return;
    }
    std::string uuid = nvml_uuid_text(info->clusterUuid);
    if (uuid.empty()) return;  // registered, but in no cluster
    f.fabric_cluster_uuid = std::move(uuid);
    f.fabric_clique_id = info->cliqueId;
  }

  template <class Versioned>
  static nvmlGpuFabricInfo_t from_versioned(const Versioned& v) {
    nvmlGpuFabricInfo_t out{};
    std::copy(std::begin(v.clusterUuid), std::end(v.clusterUuid), std::begin(out.clusterUuid));
    out.status = v.status;
    out.cliqueId = v.cliqueId;
    out.state = v.state;
    return out;
  }

  // The GPU's accelerator node: the one a sysfs probe made, or a new one under its PCI function.
  NodeIndex accelerator_node(const Gpu& gpu, NodeIndex pci_node) {
    const std::string id = node_id::accelerator(gpu.address.to_string());
    if (auto found = builder_.find(id)) {
      if (builder_.node(*found).kind != NodeKind::kAccelerator) {
        ctx_.warn(gpu.label + ": node " + id + " exists but is not an accelerator; device skipped");
        return kNoNode;
      }
      return *found;
    }
    AcceleratorInfo info;
    info.vendor = AcceleratorVendor::kNvidia;
    // NVML's product name replaces this below; the PCI name stands in if NVML cannot tell.
    info.product = builder_.node(pci_node).as<PciFunctionInfo>().device_name;
    auto added = builder_.add(NodeKind::kAccelerator, id, pci_node, std::move(info));
    if (!added) {
      ctx_.warn(gpu.label + ": cannot add " + id + ": " + added.error().message);
      return kNoNode;
    }
    return added.value();
  }

  // Writes what NVML knows over what a sysfs probe may have guessed.
  void apply(const Gpu& gpu, const DeviceFacts& f) {
    auto& info = builder_.node(gpu.node).as<AcceleratorInfo>();
    info.vendor = AcceleratorVendor::kNvidia;
    info.index = gpu.index;
    if (f.name) info.product = *f.name;
    if (f.uuid) info.uuid = *f.uuid;
    if (f.serial) info.serial = *f.serial;
    if (f.memory_bytes) info.memory_bytes = *f.memory_bytes;
    if (f.architecture) info.architecture = *f.architecture;
    if (!driver_version_.empty()) info.driver_version = driver_version_;
    if (f.fabric_cluster_uuid) {
      info.fabric_cluster_uuid = *f.fabric_cluster_uuid;
      info.fabric_clique_id = f.fabric_clique_id;
    }
    if (f.numa_node) apply_numa(gpu, *f.numa_node);
  }

  // NVML's NUMA node id of a GPU is the node that holds the GPU's own memory, on platforms where
  // GPU memory is a NUMA node (GH200, GB200, POWER9 + V100). Such a node has no CPUs; the model
  // records which device it belongs to. A node with CPUs (a fixture giving host affinity) only
  // fills the GPU's PCI locality when sysfs did not tell it.
  void apply_numa(const Gpu& gpu, std::uint32_t numa) {
    const auto numa_node = builder_.find(node_id::numa(numa));
    if (!numa_node) {
      ctx_.log().debug("{}: NVML NUMA node {} is not in the topology", gpu.label, numa);
      return;
    }
    auto& info = builder_.node(*numa_node).as<NumaInfo>();
    if (info.cpus.empty()) {
      if (!info.device) {
        info.device = gpu.address;
      } else if (!(*info.device == gpu.address)) {
        ctx_.warn(gpu.label + ": NVML places the GPU's memory in NUMA node " +
                  std::to_string(numa) + ", which already belongs to " + info.device->to_string());
      }
      return;
    }
    auto& pci = builder_.node(builder_.node(gpu.node).parent).as<PciFunctionInfo>();
    if (!pci.numa_node) pci.numa_node = numa;
  }

  // ---- links ------------------------------------------------------------------------------------
  void read_links(const Gpu& gpu) {
    if (api_.nvmlDeviceGetNvLinkState == nullptr) return;
    LinkIssues issues;
    for (unsigned int link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
      nvmlEnableState_t state = NVML_FEATURE_DISABLED;
      const nvmlReturn_t rc = api_.nvmlDeviceGetNvLinkState(gpu.handle, link, &state);
      // INVALID_ARGUMENT: this GPU has fewer links; NOT_SUPPORTED: no NVLink (PCIe boards).
      if (rc == NVML_ERROR_INVALID_ARGUMENT || quiet_failure(rc)) continue;
      if (rc != NVML_SUCCESS) {
        issues.add("nvmlDeviceGetNvLinkState failed: " + lib_.describe(rc), link);
        continue;
      }
      if (state != NVML_FEATURE_ENABLED) continue;
      const NodeIndex target = remote_end(gpu, link, issues);
      if (target != kNoNode) ++link_counts_[{gpu.node, target}];
    }
    issues.flush(ctx_, gpu.label);
  }

  // The node at the far end of one active link, or kNoNode (with an issue recorded).
  NodeIndex remote_end(const Gpu& gpu, unsigned int link, LinkIssues& issues) {
    if (api_.nvmlDeviceGetNvLinkRemotePciInfo_v2 == nullptr) {
      issues.add("link active, but the NVML library lacks nvmlDeviceGetNvLinkRemotePciInfo_v2",
                 link);
      return kNoNode;
    }
    nvmlPciInfo_t pci{};
    nvmlReturn_t rc = api_.nvmlDeviceGetNvLinkRemotePciInfo_v2(gpu.handle, link, &pci);
    if (rc != NVML_SUCCESS) {
      issues.add("nvmlDeviceGetNvLinkRemotePciInfo_v2 failed: " + lib_.describe(rc), link);
      return kNoNode;
    }
    auto remote = remote_address(pci);
    if (!remote) {
      issues.add("remote end: " + remote.error().message, link);
      return kNoNode;
    }
    const PciAddress addr = remote.value();

    RemoteKind kind = RemoteKind::kUnknown;
    if (api_.nvmlDeviceGetNvLinkRemoteDeviceType != nullptr) {
      nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
      rc = api_.nvmlDeviceGetNvLinkRemoteDeviceType(gpu.handle, link, &type);
      if (rc == NVML_SUCCESS) {
        kind = from_nvml(type);
      } else if (!quiet_failure(rc)) {
        issues.add("nvmlDeviceGetNvLinkRemoteDeviceType failed: " + lib_.describe(rc) +
                       " (remote type taken from the PCI tree)",
                   link);
      }
    }
    if (kind == RemoteKind::kUnknown) kind = infer_kind(addr);

    switch (kind) {
      case RemoteKind::kGpu:
      case RemoteKind::kSwitch:
        break;
      case RemoteKind::kIbmNpu:
        // POWER9 CPU links: the model has no CPU-side NVLink end, so they are left out.
        ctx_.log().debug("{}: NVLink {} leads to an IBM NPU at {}", gpu.label, link,
                         addr.to_string());
        return kNoNode;
      case RemoteKind::kUnknown:
        issues.add("remote device " + addr.to_string() +
                       " is of unknown type (neither a GPU nor an NVSwitch); link skipped",
                   link);
        return kNoNode;
    }
    const RemoteEnd& end = far_end(addr, kind);
    if (end.node == kNoNode) {
      issues.add(end.issue, link);
      return kNoNode;
    }
    if (end.node == gpu.node) {
      issues.add("NVML reports the GPU itself as the remote end; link skipped", link);
      return kNoNode;
    }
    return end.node;
  }

  // The address in NVML's remote PCI info. Consecutive links of a GPU mostly lead to the same
  // end (links 0-4 to one NVSwitch, 5-8 to the next, ...): the last conversion is kept.
  Result<PciAddress> remote_address(const nvmlPciInfo_t& pci) {
    if (last_remote_ && std::memcmp(&last_remote_->first, &pci, sizeof pci) == 0) {
      return last_remote_->second;
    }
    auto addr = nvml_pci_address(pci);
    if (addr) last_remote_.emplace(pci, addr.value());
    return addr;
  }

  // The far end at `addr`, looked up once per address and kind in a discovery rather than once
  // per link: every GPU of an HGX board reaches the same few NVSwitches over 18 links. What the
  // lookup depends on does not change while links are read (GPUs and accelerator nodes are all
  // known, an NVSwitch node is only added here), so the first answer holds for every link.
  const RemoteEnd& far_end(const PciAddress& addr, RemoteKind kind) {
    auto [it, inserted] = remote_ends_.try_emplace({addr, kind});
    if (inserted) it->second = kind == RemoteKind::kGpu ? remote_gpu(addr) : remote_switch(addr);
    return it->second;
  }

  static RemoteKind from_nvml(nvmlIntNvLinkDeviceType_t type) {
    switch (type) {
      case NVML_NVLINK_DEVICE_TYPE_GPU:
        return RemoteKind::kGpu;
      case NVML_NVLINK_DEVICE_TYPE_SWITCH:
        return RemoteKind::kSwitch;
      case NVML_NVLINK_DEVICE_TYPE_IBMNPU:
        return RemoteKind::kIbmNpu;
      default:
        return RemoteKind::kUnknown;
    }
  }

  // Without NVML's answer: an NVML GPU, an existing NVSwitch node, or NVIDIA's PCI class codes.
  RemoteKind infer_kind(const PciAddress& addr) const {
    if (gpu_nodes_.contains(addr)) return RemoteKind::kGpu;
    const std::string bdf = addr.to_string();
    if (builder_.find(node_id::nvswitch(bdf))) return RemoteKind::kSwitch;
    if (builder_.find(node_id::accelerator(bdf))) return RemoteKind::kGpu;
    if (auto pci = builder_.find(node_id::pci(bdf))) {
      if (const auto* f = builder_.node(*pci).get_if<PciFunctionInfo>();
          f != nullptr && f->vendor_id == pci_vendor::kNvidia) {
        if ((f->class_code >> 16) == kDisplayBaseClass) return RemoteKind::kGpu;
        if ((f->class_code >> 8) == kBridgeOtherClass) return RemoteKind::kSwitch;
      }
    }
    return RemoteKind::kUnknown;
  }

  RemoteEnd remote_gpu(const PciAddress& addr) {
    if (auto it = gpu_nodes_.find(addr); it != gpu_nodes_.end()) return {it->second, {}};
    const std::string bdf = addr.to_string();
    // A GPU NVML does not list here (another partition's, or skipped above) but that a sysfs
    // probe knows.
    if (auto found = builder_.find(node_id::accelerator(bdf));
        found && builder_.node(*found).kind == NodeKind::kAccelerator) {
      return {*found, {}};
    }
    return {kNoNode,
            builder_.find(node_id::pci(bdf))
                ? "remote GPU " + bdf + " is not an NVML device here; link skipped"
                : "remote GPU " + bdf + " has no PCI function in the topology; link skipped"};
  }

  RemoteEnd remote_switch(const PciAddress& addr) {
    const std::string bdf = addr.to_string();
    const std::string id = node_id::nvswitch(bdf);
    if (auto found = builder_.find(id)) {
      if (builder_.node(*found).kind == NodeKind::kNvSwitch) return {*found, {}};
      return {kNoNode, "node " + id + " exists but is not an NVSwitch; link skipped"};
    }
    const auto pci = builder_.find(node_id::pci(bdf));
    const PciFunctionInfo* f = pci ? builder_.node(*pci).get_if<PciFunctionInfo>() : nullptr;
    if (f == nullptr) {
      return {kNoNode,
              "remote NVSwitch " + bdf + " has no PCI function in the topology; link skipped"};
    }
    // Vendor 0 means sysfs could not tell the ids (seen on real NVSwitches): trust NVML then.
    if (f->vendor_id != pci_vendor::kNvidia && f->vendor_id != 0) {
      char vendor[8];
      std::snprintf(vendor, sizeof vendor, "%04x", f->vendor_id);
      return {kNoNode, "remote NVSwitch " + bdf +
                           " is, by its PCI function, not an NVIDIA device " + "(vendor " + vendor +
                           "); link skipped"};
    }
    AcceleratorInfo info;
    info.vendor = AcceleratorVendor::kNvidia;
    info.product = f->device_name.empty() ? std::string("NVSwitch") : f->device_name;
    auto added = builder_.add(NodeKind::kNvSwitch, id, *pci, std::move(info));
    if (!added) return {kNoNode, "cannot add " + id + ": " + added.error().message};
    return {added.value(), {}};
  }

  ProbeContext& ctx_;
  TopologyBuilder& builder_;
  const NvmlLibrary& lib_;
  const NvmlLibrary::Api& api_;
  std::string driver_version_;
  std::vector<Gpu> gpus_;
  std::map<PciAddress, NodeIndex> gpu_nodes_;
  std::map<std::pair<NodeIndex, NodeIndex>, std::int64_t> link_counts_;
  std::map<std::pair<PciAddress, RemoteKind>, RemoteEnd> remote_ends_;
  std::optional<std::pair<nvmlPciInfo_t, PciAddress>> last_remote_;
};

}  // namespace

struct NvmlProbe::Opened {
  Result<void> result;                 ///< why there is no session, when there is none
  std::optional<NvmlLibrary> library;  ///< declared before the session, which refers to it
  std::unique_ptr<NvmlSession> session;
};

NvmlProbe::NvmlProbe() = default;
NvmlProbe::~NvmlProbe() = default;

void NvmlProbe::prefetch(ProbeContext& ctx) {
  opened_ = std::make_unique<Opened>();
  Opened& o = *opened_;
  std::string path = ctx.options().nvml_library;
  if (path.empty()) {
    if (!ctx.root().is_live()) {
      o.result = make_error(ErrorCode::kUnavailable,
                            "the host root is a capture or mock tree, and NVML only describes the "
                            "machine it runs on (give an NVML library, e.g. the mock, to use one)");
      return;
    }
    path = "libnvidia-ml.so.1";
  }
  // A drop-in library reads its settings from the environment, which main wrote once.
  std::vector<EnvVar> wanted;
  for (const auto& [name, value] : ctx.options().library_environment)
    wanted.push_back({name, value});
  if (auto wrong = environment_mismatch(wanted)) {
    o.result = make_error(ErrorCode::kInvalid, environment_not_written(*wrong));
    return;
  }
  auto library = NvmlLibrary::open(path);
  if (!library) {
    o.result = library.error();
    return;
  }
  o.library.emplace(std::move(library.value()));
  o.session = std::make_unique<NvmlSession>(*o.library);
  if (!o.session->ok()) {
    // The library's own text says why (the mock's names its fixture); the guess about the
    // driver fits only the system's library.
    const bool system_library = ctx.options().nvml_library.empty();
    o.result = make_error(
        ErrorCode::kUnavailable,
        "nvmlInit_v2 failed: " + o.library->describe(o.session->init_result()) +
            (system_library ? " (NVIDIA driver not loaded, or no permission on /dev/nvidia*?)"
                            : ""));
  }
}

Result<void> NvmlProbe::discover(ProbeContext& ctx, TopologyBuilder& builder) {
  if (!opened_) prefetch(ctx);
  // Released (nvmlShutdown, dlclose) when this discovery is done, as before the prefetch.
  const std::unique_ptr<Opened> opened = std::move(opened_);
  if (!opened->result.ok()) return opened->result;
  NvmlDiscovery discovery(ctx, builder, *opened->library);
  return discovery.run();
}

}  // namespace nodetopo::probes
