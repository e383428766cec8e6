// Running probes: the registry of the built-in probes and the runner that isolates their failures.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nodetopo/probes/probe.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::probes {

/// The result of one discovery: the frozen topology and one report per probe, in run order.
struct Discovery {
  Topology topology;
  std::vector<ProbeReport> reports;

  /// Why this result is degraded, or an empty string when it is not. A discovery is degraded when
  /// a probe failed (ProbeStatus::kFailed: its subsystem exists but could not be read, or the
  /// probe threw): the topology then lacks what that probe would have added, and publishing it
  /// would withdraw those devices from the cluster. Probes that are unavailable (no NVML, no KFD
  /// on this host) or finished with warnings do not degrade it. Commands that publish
  /// (`topo export`) refuse a degraded result; `dump` and `matrix` print it and exit 1. The
  /// message names each failed probe and its error ("probe pci failed: sys/bus/pci/devices: ...").
  [[nodiscard]] std::string degraded() const;
};

/// The built-in probes, in the order they run (explicit list, no static self-registration).
std::vector<std::unique_ptr<Probe>> default_probes();

/// Runs `probes` over `root` phase by phase. Errors and exceptions of one probe are caught and
/// reported; the others still run. Never throws for a probe's fault.
Discovery run_probes(const SysRoot& root, const std::vector<std::unique_ptr<Probe>>& probes,
                     const ProbeOptions& options);

/// default_probes() + run_probes().
Discovery discover(const SysRoot& root, const ProbeOptions& options = {});

}  // namespace nodetopo::probes
