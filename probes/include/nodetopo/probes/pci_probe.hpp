// PCI discovery: host bridges, bridges and switch ports, and every PCI function.
#pragma once

#include <nodetopo/probes/probe.hpp>

namespace nodetopo::probes {

/// Enumerates `sys/bus/pci/devices` through SysRoot (each link must resolve inside the root), reads
/// identity, class and the PCIe capability through libpci, and the hierarchy, locality and link
/// attributes from sysfs. Nests each function under the nearest enumerated PCI ancestor of its
/// resolved sysfs path, or under the host bridge named by the path's `pciDDDD:BB` component (the
/// innermost one: an Intel VMD domain's root bus sits inside the VMD endpoint, and its functions
/// hang under their own host bridge, as lspci shows them; `pcie_root` stays the outermost);
/// host bridges go under the NUMA node (or package) of the devices below them.
///
/// A function's NUMA node comes from `numa_node`; when that is -1 it is derived from
/// `local_cpulist` if those CPUs lie in exactly one NUMA node, and otherwise left unknown.
class PciProbe final : public Probe {
 public:
  [[nodiscard]] std::string_view name() const override { return "pci"; }
  [[nodiscard]] ProbePhase phase() const override { return ProbePhase::kBus; }
  Result<void> discover(ProbeContext& ctx, TopologyBuilder& builder) override;
};

}  // namespace nodetopo::probes
