// Accelerators and NVSwitches, classified from the PCI functions the PCI probe found.
#pragma once

#include <cstdint>
#include <string>

#include <nodetopo/probes/probe.hpp>

namespace nodetopo::probes {

/// Adds `accelerator/<bdf>` (kAccelerator) and `nvswitch/<bdf>` (kNvSwitch) nodes, each under the
/// `pci/<bdf>` node of its PCI function, for:
///   - NVIDIA (10de): class 0x0300 or 0x0302; class 0x0680 with an NVSwitch device id
///     (0x1ac2, 0x1af1, 0x22a3) is an NVSwitch;
///   - AMD (1002): class 0x0300, 0x0380 or 0x1200 with a DRM node (`drm/` under the function,
///     amdgpu bound) or a KFD topology node at its address;
///   - Intel (8086): class 0x0300 or 0x0380 bound to i915 or xe;
///   - Habana (1da3): class 0x1200.
/// Functions whose vendor id is unreadable (trimmed captures report 0000) are not classified, nor
/// are SR-IOV virtual functions (slices of a GPU handed to virtual machines).
///
/// Fields from sysfs: vendor, product (the project's table of recent parts, then pci.ids, with the
/// vendor's brand in front), index (AMD: KFD node id of the GPU's first KFD node; Intel: DRM card
/// minor; Habana: accel minor; NVIDIA: left to the NVML probe). AMD GPUs also get memory
/// (`mem_info_vram_total`, else the sum of the KFD frame-buffer memory banks of all its
/// partitions), architecture (gfx target from KFD `gfx_target_version`), uuid ("GPU-" + the KFD
/// unique_id in hex, as ROCm names agents) and xgmi_hive_id. KFD partitions and xGMI links are the
/// KFD probe's job (phase kLinks).
class AcceleratorProbe final : public Probe {
 public:
  [[nodiscard]] std::string_view name() const override { return "accelerator"; }
  [[nodiscard]] ProbePhase phase() const override { return ProbePhase::kDevices; }
  /// The KFD tree needs nothing of earlier phases: read while they run, when the discovery
  /// overlaps (ProbeContext::shared_reads(), shared with the KFD probe).
  [[nodiscard]] bool prefetches() const override { return true; }
  void prefetch(ProbeContext& ctx) override;
  Result<void> discover(ProbeContext& ctx, TopologyBuilder& builder) override;
};

/// LLVM target name of a KFD `gfx_target_version` (major*10000 + minor*100 + stepping, minor and
/// stepping written as hex digits): 90010 -> "gfx90a", 90402 -> "gfx942", 110000 -> "gfx1100".
/// Empty for 0 or values that do not fit the scheme.
std::string gfx_target_name(std::uint32_t gfx_target_version);

}  // namespace nodetopo::probes
