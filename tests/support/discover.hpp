// Discovery in a test process, preceded by what topo's main does first: the process environment
// written for the root (nodetopo/probes/environment.hpp). A test calls these from its main thread
// between discoveries, when no other thread runs, as the rule requires.
#pragma once

#include <memory>
#include <vector>

#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/environment.hpp>

namespace nodetopo::test {

inline probes::Discovery discover(const probes::SysRoot& root,
                                  const probes::ProbeOptions& options = {}) {
  probes::write_process_environment(probes::discovery_environment(root, options));
  return probes::discover(root, options);
}

inline probes::Discovery run_probes(const probes::SysRoot& root,
                                    const std::vector<std::unique_ptr<probes::Probe>>& list,
                                    const probes::ProbeOptions& options) {
  probes::write_process_environment(probes::discovery_environment(root, options));
  return probes::run_probes(root, list, options);
}

}  // namespace nodetopo::test
