#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <utility>

#include <nodetopo/probes/accelerator_probe.hpp>
#include <nodetopo/probes/parsers.hpp>
#include <nodetopo/topology/ids.hpp>

#include "kfd/kfd_topology.hpp"

namespace nodetopo::probes {

namespace {

// Base class + subclass.
constexpr std::uint16_t kClassVga = 0x0300;
constexpr std::uint16_t kClass3d = 0x0302;
constexpr std::uint16_t kClassDisplayOther = 0x0380;
constexpr std::uint16_t kClassBridgeOther = 0x0680;
constexpr std::uint16_t kClassProcessingAccelerator = 0x1200;

constexpr std::array<std::uint16_t, 3> kNvSwitchIds{0x1ac2, 0x1af1, 0x22a3};

struct Classified {
  NodeKind kind;
  AcceleratorVendor vendor;
};

std::optional<Classified> classify(const PciFunctionInfo& f, bool amd_has_kfd_or_drm) {
  const auto cls = static_cast<std::uint16_t>(f.class_code >> 8);
  switch (f.vendor_id) {
    case pci_vendor::kNvidia:
      if (cls == kClassVga || cls == kClass3d) {
        return Classified{NodeKind::kAccelerator, AcceleratorVendor::kNvidia};
      }
      if (cls == kClassBridgeOther &&
          std::find(kNvSwitchIds.begin(), kNvSwitchIds.end(), f.device_id) != kNvSwitchIds.end()) {
        return Classified{NodeKind::kNvSwitch, AcceleratorVendor::kNvidia};
      }
      return std::nullopt;
    case pci_vendor::kAmd:
      if ((cls == kClassVga || cls == kClassDisplayOther || cls == kClassProcessingAccelerator) &&
          amd_has_kfd_or_drm) {
        return Classified{NodeKind::kAccelerator, AcceleratorVendor::kAmd};
      }
      return std::nullopt;
    case pci_vendor::kIntel:
      if ((cls == kClassVga || cls == kClassDisplayOther) &&
          (f.driver == "i915" || f.driver == "xe")) {
        return Classified{NodeKind::kAccelerator, AcceleratorVendor::kIntel};
      }
      return std::nullopt;
    case pci_vendor::kHabana:
      if (cls == kClassProcessingAccelerator) {
        return Classified{NodeKind::kAccelerator, AcceleratorVendor::kHabana};
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

bool is_amd_gpu_class(const PciFunctionInfo& f) {
  const auto cls = static_cast<std::uint16_t>(f.class_code >> 8);
  return f.vendor_id == pci_vendor::kAmd &&
         (cls == kClassVga || cls == kClassDisplayOther || cls == kClassProcessingAccelerator);
}

std::string_view brand(AcceleratorVendor vendor) {
  switch (vendor) {
    case AcceleratorVendor::kNvidia:
      return "NVIDIA";
    case AcceleratorVendor::kAmd:
      return "AMD";
    case AcceleratorVendor::kIntel:
      return "Intel";
    case AcceleratorVendor::kHabana:
      return "Habana";
    case AcceleratorVendor::kOther:
      break;
  }
  return {};
}

// The function's device name (the PCI probe took it from the project's table, else pci.ids),
// reduced to the marketing name pci.ids keeps in brackets ("GA100 [A100 SXM4 80GB]" ->
// "A100 SXM4 80GB") and prefixed with the vendor's brand.
std::string product_name(const PciFunctionInfo& f, AcceleratorVendor vendor) {
  std::string name = f.device_name;
  const std::size_t open = name.rfind('[');
  const std::size_t close = name.rfind(']');
  if (open != std::string::npos && close != std::string::npos && close > open + 1) {
    name = name.substr(open + 1, close - open - 1);
  }
  if (name.empty()) return name;
  const std::string_view prefix = brand(vendor);
  if (prefix.empty() || name.starts_with(prefix)) return name;
  return std::string(prefix) + " " + name;
}

// Lowest N of the entries "<stem>N" of a directory (DRM "card0", accel "accel0").
std::optional<std::uint32_t> lowest_minor(const SysRoot& root, const std::string& dir,
                                          std::string_view stem) {
  auto names = root.list_dir(dir);
  if (!names) return std::nullopt;
  std::optional<std::uint32_t> lowest;
  for (const std::string& name : names.value()) {
    if (!name.starts_with(stem)) continue;
    auto n = parse_uint(std::string_view(name).substr(stem.size()));
    if (!n || *n > UINT32_MAX) continue;
    if (!lowest || *n < *lowest) lowest = static_cast<std::uint32_t>(*n);
  }
  return lowest;
}

std::string hex16(std::uint64_t v) {
  std::array<char, 24> buf{};
  std::snprintf(buf.data(), buf.size(), "%016llx", static_cast<unsigned long long>(v));
  return buf.data();
}

class AcceleratorDiscovery {
 public:
  AcceleratorDiscovery(ProbeContext& ctx, TopologyBuilder& builder)
      : ctx_(ctx), root_(ctx.root()), builder_(builder) {}

  void run() {
    load_kfd();
    // Indices copied first: adding nodes grows the builder's node vector.
    for (NodeIndex index : builder_.nodes_of_kind(NodeKind::kPciDevice))
      consider(index);
  }

 private:
  // The KFD probe reports KFD problems; here a bad node only means "no KFD data".
  void load_kfd() {
    const Result<KfdTopology>& kfd = shared_kfd_topology(ctx_);
    if (!kfd) return;
    kfd_gpus_ = map_kfd_gpus(kfd.value(), [this](const PciAddress& addr) {
      const auto node = builder_.find(node_id::pci(addr.to_string()));
      if (!node) return false;
      const auto* f = builder_.node(*node).get_if<PciFunctionInfo>();
      return f != nullptr && is_amd_gpu_class(*f);
    });
  }

  void consider(NodeIndex index) {
    const auto& f = builder_.node(index).as<PciFunctionInfo>();
    // An SR-IOV VF of a GPU (vGPU, MxGPU) is a slice of its PF handed to a virtual machine, not
    // an accelerator of this host; inside the VM it has no physfn link and is classified there.
    if (f.is_virtual_function) return;
    const KfdGpu* kfd = nullptr;
    if (const auto it = kfd_gpus_.gpus.find(f.address); it != kfd_gpus_.gpus.end()) {
      kfd = &it->second;
    }
    const bool amd_ready =
        f.vendor_id == pci_vendor::kAmd && (kfd != nullptr || root_.exists(f.sysfs_path + "/drm"));
    const auto classified = classify(f, amd_ready);
    if (!classified) return;

    AcceleratorInfo info;
    info.vendor = classified->vendor;
    info.product = product_name(f, classified->vendor);
    switch (classified->vendor) {
      case AcceleratorVendor::kAmd:
        fill_amd(f, kfd, info);
        break;
      case AcceleratorVendor::kIntel:
        info.index = lowest_minor(root_, f.sysfs_path + "/drm", "card");
        break;
      case AcceleratorVendor::kHabana:
        info.index = lowest_minor(root_, f.sysfs_path + "/accel", "accel");
        break;
      default:
        break;  // NVIDIA identity comes from NVML
    }
    const std::string id = classified->kind == NodeKind::kNvSwitch
                               ? node_id::nvswitch(f.address)
                               : node_id::accelerator(f.address);
    auto added = builder_.add(classified->kind, id, index, std::move(info));
    if (!added) ctx_.warn(added.error());
  }

  void fill_amd(const PciFunctionInfo& f, const KfdGpu* kfd, AcceleratorInfo& info) {
    const std::string vram = f.sysfs_path + "/mem_info_vram_total";
    if (auto text = root_.read_attr(vram)) {
      if (auto bytes = parse_uint(text.value())) {
        info.memory_bytes = *bytes;
      } else {
        ctx_.warn(bytes.error().message + " (memory size ignored)", root_.host_path(vram));
      }
    }
    if (auto serial = root_.read_attr(f.sysfs_path + "/serial_number")) {
      info.serial = std::move(serial.value());
    }
    if (kfd == nullptr) return;
    const KfdNode& primary = kfd->primary();
    info.index = primary.id;
    info.architecture = gfx_target_name(primary.gfx_target_version);
    if (primary.unique_id != 0) info.uuid = "GPU-" + hex16(primary.unique_id);
    if (primary.hive_id != 0) info.xgmi_hive_id = hex16(primary.hive_id);
    if (info.memory_bytes == 0) {
      // Each partition reports its share of the memory: the GPU holds their sum.
      for (const KfdNode* node : kfd->nodes)
        info.memory_bytes += node->frame_buffer_bytes;
    }
  }

  ProbeContext& ctx_;
  const SysRoot& root_;
  TopologyBuilder& builder_;
  KfdGpuMap kfd_gpus_;  // points into the discovery's shared KFD reading
};

}  // namespace

std::string gfx_target_name(std::uint32_t gfx_target_version) {
  const std::uint32_t major = gfx_target_version / 10000;
  const std::uint32_t minor = (gfx_target_version / 100) % 100;
  const std::uint32_t stepping = gfx_target_version % 100;
  if (major == 0 || minor > 15 || stepping > 15) return {};
  static constexpr std::string_view kHex = "0123456789abcdef";
  return "gfx" + std::to_string(major) + kHex[minor] + kHex[stepping];
}

void AcceleratorProbe::prefetch(ProbeContext& ctx) {
  (void)shared_kfd_topology(ctx);
}

Result<void> AcceleratorProbe::discover(ProbeContext& ctx, TopologyBuilder& builder) {
  AcceleratorDiscovery discovery(ctx, builder);
  discovery.run();
  return {};
}

}  // namespace nodetopo::probes
