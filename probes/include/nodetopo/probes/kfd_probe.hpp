// AMD KFD topology: compute partitions and xGMI links between AMD GPUs.
#pragma once

#include <nodetopo/probes/probe.hpp>

namespace nodetopo::probes {

/// Reads sys/class/kfd/kfd/topology/nodes/N/{properties,io_links/M/properties}. GPU nodes
/// (simd_count > 0) are matched to the accelerators of the PCI tree by domain + location_id
/// (bus << 8 | devfn). A partitioned GPU (CPX/DPX: several KFD nodes, location_id function bits
/// holding the partition number, one PCI function) collapses onto its physical GPU, whose
/// AcceleratorInfo::partitions counts its KFD nodes. xGMI io_links (type 11) between two
/// physical GPUs become one Link{kXgmi} per direction: value = io_links KFD reports between one
/// partition pair (1 on all known parts), bandwidth = max_bandwidth (0 when KFD says 0). Links
/// inside one GPU, PCIe io_links (type 2) and links to CPU nodes are not GPU-GPU links and are
/// ignored. A malformed file skips its node or link with one warning naming it; a GPU node with
/// no accelerator at its address is reported once per physical GPU and skipped.
class KfdProbe final : public Probe {
 public:
  [[nodiscard]] std::string_view name() const override { return "kfd"; }
  [[nodiscard]] ProbePhase phase() const override { return ProbePhase::kLinks; }
  Result<void> discover(ProbeContext& ctx, TopologyBuilder& builder) override;
};

}  // namespace nodetopo::probes
