// The KFD part of a DiscoveryCache (nodetopo/probes/discovery_cache.hpp): the last reading of the
// KFD tree and the kernel's generation_id it was read under.
#pragma once

#include <memory>
#include <string>

#include <nodetopo/base/error.hpp>

#include "kfd/kfd_topology.hpp"

namespace nodetopo::probes::detail {

struct KfdCache {
  /// The last reading; null when there is none to reuse.
  std::shared_ptr<const Result<KfdTopology>> topology;
  /// sys/class/kfd/kfd/topology/generation_id as read right before it.
  std::string generation;

  void clear() {
    topology.reset();
    generation.clear();
  }
};

}  // namespace nodetopo::probes::detail
