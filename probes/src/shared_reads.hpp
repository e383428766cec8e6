// What more than one probe of a discovery reads (ProbeContext::shared_reads()): read by the
// first probe that needs it, kept for the others.
#pragma once

#include <memory>

#include <nodetopo/base/error.hpp>

#include "kfd/kfd_topology.hpp"

namespace nodetopo::probes {

struct SharedReads {
  /// The KFD tree, once read (shared_kfd_topology()): by the accelerator probe's prefetch, which
  /// the runner awaits before that probe's discover() and so before the KFD probe's, or by the
  /// first discover() that needs it. Never two threads at once, so no lock.
  /// Shared with the DiscoveryCache when there is one (kfd/kfd_cache.hpp).
  std::shared_ptr<const Result<KfdTopology>> kfd_topology;
};

}  // namespace nodetopo::probes
