// CPU and NUMA discovery through hwloc: machine, packages, NUMA nodes and their distance matrix.
#pragma once

#include <nodetopo/probes/probe.hpp>

namespace nodetopo::probes {

/// Loads hwloc's Linux backend over the host root (HWLOC_FSROOT for captured roots) with I/O and
/// cache discovery off: PCI is the PCI probe's job, and reading it twice would double the cost.
/// Adds the Machine attributes, `package/<os>` and `numa/<os>` nodes, and NUMA distance links.
/// GPU-memory NUMA nodes of coherent GPUs are kept (HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES).
class CpuNumaProbe final : public Probe {
 public:
  [[nodiscard]] std::string_view name() const override { return "cpu"; }
  [[nodiscard]] ProbePhase phase() const override { return ProbePhase::kPlatform; }
  Result<void> discover(ProbeContext& ctx, TopologyBuilder& builder) override;
};

}  // namespace nodetopo::probes
