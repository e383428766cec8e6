// Running probes: the registry of the built-in probes and the runner that isolates their failures.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nodetopo/probes/discovery_cache.hpp>
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
///
/// Overlap: the prefetch() of every probe that has one (the PCI walk) runs on a second thread
/// while the platform phase (hwloc) runs on the calling thread, when the process may use more
/// than one CPU and ProbeOptions::overlap allows it (kAuto: overlap_pays()); otherwise right
/// before its discover(). Either way the result is the same: reports, warnings and the log keep
/// run order.
///
/// With a `cache` (an agent discovering the same host again, discovery_cache.hpp), the platform
/// phase's result is reused when the cache holds it, and probes reuse what they read before
/// where the cache says nothing changed; the result equals a discovery without it.
Discovery run_probes(const SysRoot& root, const std::vector<std::unique_ptr<Probe>>& probes,
                     const ProbeOptions& options, DiscoveryCache* cache = nullptr);

/// The root size from which a second thread pays for itself (overlap_pays()).
inline constexpr std::size_t kOverlapMinPciFunctions = 64;
/// The same for an AMD KFD tree, read in the accelerator probe's prefetch: nodes (a GPU, a
/// partition or a CPU each) in sys/class/kfd/kfd/topology/nodes.
inline constexpr std::size_t kOverlapMinKfdNodes = 8;

/// Whether overlapping the platform phase with the prefetches is worth a second thread on
/// `root`: at least kOverlapMinPciFunctions entries in `sys/bus/pci/devices`. What the overlap
/// can save is the shorter of hwloc's load and the PCI walk with its pci.ids names; starting,
/// waking and joining the thread, and two threads walking one tree in the kernel, cost 0.1–0.3 ms
/// and more on a VM whose second vCPU is busy. Measured on the benchmark VM (docs/performance.md,
/// round 9): every root below 64 functions — hwloc captures with 0–37, mock hosts with 9–55
/// functions and 128–384 CPUs — ran as fast or faster in one thread; dgx-h100 (84) and
/// synthetic-64 (1088) gain from the overlap when the VM gives the second vCPU. Or, below that,
/// at least kOverlapMinKfdNodes KFD nodes: the KFD tree is read beside hwloc then (round 13: the
/// mi300x profile, 55 functions and 10 KFD nodes, 0.54 -> 0.51x lstopo; its PCI tree with a
/// partitioned MI300X's 65 nodes 1.36 -> 1.13x). One or two directory listings; an unreadable
/// directory counts as empty.
bool overlap_pays(const SysRoot& root);

/// The most threads one discovery runs at once in this process. Two threads run prefetches (the
/// one beside the platform phase, and the calling thread once the platform is loaded), and each
/// may be running a reader pool of one thread per CPU this process may use, at most eight, itself
/// among them. On the 2-CPU benchmark VM, 4. `topo dump` gives glibc as many malloc arenas, so
/// that no two of these threads wait for each other's malloc() (docs/performance.md, round 14).
unsigned discovery_thread_limit();

/// default_probes() + run_probes().
Discovery discover(const SysRoot& root, const ProbeOptions& options = {},
                   DiscoveryCache* cache = nullptr);

}  // namespace nodetopo::probes
