// Running probes: the registry of the built-in probes and the runner that isolates their failures.
#pragma once

#include <memory>
#include <vector>

#include <nodetopo/probes/probe.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::probes {

/// The result of one discovery: the frozen topology and one report per probe, in run order.
struct Discovery {
  Topology topology;
  std::vector<ProbeReport> reports;
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
