// What more than one probe of a discovery reads (ProbeContext::shared_reads()): read by the
// first probe that needs it, kept for the others.
#pragma once

#include <memory>
#include <optional>

#include <nodetopo/base/error.hpp>
#include <nodetopo/probes/sys_dir.hpp>

#include "kfd/kfd_topology.hpp"

namespace nodetopo::probes {

struct SharedReads {
  /// The KFD tree, once read (shared_kfd_topology()): by the accelerator probe's prefetch, which
  /// the runner awaits before that probe's discover() and so before the KFD probe's, or by the
  /// first discover() that needs it. Never two threads at once, so no lock.
  /// Shared with the DiscoveryCache when there is one (kfd/kfd_cache.hpp).
  std::shared_ptr<const Result<KfdTopology>> kfd_topology;

  /// The directories the runner opened and listed to decide on a second thread (overlap_pays()):
  /// bus/pci/devices and the KFD nodes directory, each taken (std::exchange) by the one read that
  /// walks it — the PCI walk, the KFD read of a discovery without a cache — so that neither is
  /// listed twice. Set before any probe runs; only what opened is kept, so that a missing
  /// directory is opened again by its reader, whose error words it as before.
  std::optional<SysDir> pci_devices_dir;
  std::optional<SysDir> kfd_nodes_dir;
};

}  // namespace nodetopo::probes
