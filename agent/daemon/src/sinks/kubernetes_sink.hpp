// The Kubernetes sink: the node's ResourceSlices, labels (NodeFeature or Node) and
// NodeResourceTopology kept on the API server by a kube::Publisher (docs/kube.md), and the HAMi
// bridge's annotations and capacity when sinks.hami is on (docs/hami.md).
#pragma once

#include <memory>

#include <nodetopo/base/error.hpp>
#include <nodetopo/daemon/config.hpp>
#include <nodetopo/daemon/sink.hpp>

namespace nodetopo::daemon {

/// Loads the credentials of `config` (kubeconfig, else in-cluster) and starts the publisher's
/// one I/O thread, so call it only after the process environment is written
/// (open_snapshot_source). The error names the kubeconfig or the missing service account.
/// With `hami.enabled` the same publisher runs the HAMi bridge (docs/hami.md).
Result<std::unique_ptr<Sink>> make_kubernetes_sink(const AgentConfig::Kubernetes& config,
                                                   const AgentConfig::Hami& hami = {});

}  // namespace nodetopo::daemon
