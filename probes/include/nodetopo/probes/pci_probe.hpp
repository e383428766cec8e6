// PCI discovery: host bridges, bridges and switch ports, and every PCI function.
#pragma once

#include <memory>

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
///
/// prefetch() is the walk (enumerating and reading every function, which needs nothing of the
/// platform); discover() settles each function's NUMA node against the platform's, builds the
/// tree, names the functions and places the host bridges. With a DiscoveryCache, functions no
/// event named are taken from it and pci.ids is scanned only for IDs not seen before.
class PciProbe final : public Probe {
 public:
  PciProbe();
  ~PciProbe() override;
  PciProbe(const PciProbe&) = delete;
  PciProbe& operator=(const PciProbe&) = delete;
  [[nodiscard]] std::string_view name() const override { return "pci"; }
  [[nodiscard]] ProbePhase phase() const override { return ProbePhase::kBus; }
  Result<void> discover(ProbeContext& ctx, TopologyBuilder& builder) override;
  [[nodiscard]] bool prefetches() const override { return true; }
  void prefetch(ProbeContext& ctx) override;

 private:
  struct Walked;  // pci_probe.cpp
  std::unique_ptr<Walked> walked_;
};

}  // namespace nodetopo::probes
