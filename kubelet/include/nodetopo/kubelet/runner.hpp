// `topo kubelet-plugin` without its command line: the plugin, the API reads of claims and, when
// configured, the publisher of our slices with the publish policy applied. Blocks until stopped.
#pragma once

#include <atomic>

#include <nodetopo/kube/client_config.hpp>
#include <nodetopo/kubelet/config.hpp>
#include <nodetopo/kubelet/devices.hpp>

namespace nodetopo::kubelet {

/// Runs until `stop` is set; returns the process exit code (0 after a clean stop, 1 when the
/// plugin could not start — the error is logged naming the file or socket).
int run_plugin(const PluginConfig& config, const kube::ClientConfig& client, DeviceSource devices,
               const std::atomic<bool>& stop);

}  // namespace nodetopo::kubelet
