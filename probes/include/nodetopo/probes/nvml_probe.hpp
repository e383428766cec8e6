// NVIDIA GPUs and their NVLink fabric through NVML (libnvidia-ml.so.1, opened with dlopen).
#pragma once

#include <memory>
#include <string_view>

#include <nodetopo/probes/probe.hpp>

namespace nodetopo::probes {

/// Loads ProbeOptions::nvml_library when set (any root: that is how tests and `--mock` use the
/// mock library), else "libnvidia-ml.so.1" but only on a live root, since NVML describes the
/// machine the process runs on. No library, a non-live root without a library, nvmlInit failing or
/// NVML reporting no GPU make discover() return ErrorCode::kUnavailable with a one-line reason.
///
/// For every NVML device it needs the PCI function `pci/<bdf>` of the PCI probe, and creates or
/// completes `accelerator/<bdf>` under it (vendor, product name, UUID, serial, memory, driver
/// version, NVML index, architecture, fabric cluster UUID and clique id). NVML's GPU NUMA node id
/// (coherent platforms) marks the memory-only `numa/<id>` node as that GPU's memory.
///
/// For every active NVLink it reads the remote PCI address and device type, and adds one
/// LinkKind::kNvLink link per (GPU, remote end) with value = number of active links: to the remote
/// GPU's `accelerator/<bdf>`, or to the NVSwitch's `nvswitch/<bdf>` (created under `pci/<bdf>` when
/// no other probe made it). A call failing for one device gives one warning naming the device by
/// PCI address and the call; the rest of that device and the other devices carry on.
///
/// prefetch() loads the library and initialises it (nvmlInit_v2), which needs nothing of the PCI
/// tree: beside hwloc's load, on the runner's second thread. With the driver that is the slow part
/// (nvmlInit opens /dev/nvidia* and talks to the kernel module); with the mock, the fixture parse.
/// It reads no file of the host root; what the library reads is its own (the driver, the mock's
/// fixture named in the environment main wrote).
class NvmlProbe final : public Probe {
 public:
  NvmlProbe();
  ~NvmlProbe() override;
  NvmlProbe(const NvmlProbe&) = delete;
  NvmlProbe& operator=(const NvmlProbe&) = delete;
  [[nodiscard]] std::string_view name() const override { return "nvml"; }
  [[nodiscard]] ProbePhase phase() const override { return ProbePhase::kLinks; }
  Result<void> discover(ProbeContext& ctx, TopologyBuilder& builder) override;
  [[nodiscard]] bool prefetches() const override { return true; }
  void prefetch(ProbeContext& ctx) override;

 private:
  struct Opened;  // nvml_probe.cpp: the library and its session
  std::unique_ptr<Opened> opened_;
};

}  // namespace nodetopo::probes
