// The one adapter between today's discovery path (HostSource + the exporters' ResourceSlices)
// and the kubelet plugin's view of the node. When discovery moves to the agent/core NodeSnapshot
// pipeline, only kubelet_devices.cpp changes.
#pragma once

#include <string>

#include <nodetopo/agent/host_source.hpp>
#include <nodetopo/kubelet/devices.hpp>

namespace nodetopo::agent {

/// A DeviceSource over `source` (which must outlive it) for `node` and `driver`.
kubelet::DeviceSource make_kubelet_device_source(const HostSource& source, std::string node,
                                                 std::string driver);

}  // namespace nodetopo::agent
