// The one adapter between the discovery pipeline (agent/core: an opened host, a snapshot, the
// exporters' ResourceSlices) and the kubelet plugin's view of the node.
#pragma once

#include <string>

#include <nodetopo/core/host_source.hpp>
#include <nodetopo/kubelet/devices.hpp>

namespace nodetopo::cli {

/// A DeviceSource over `host` (opened once, its process environment already written; it must
/// outlive the source) for `node` and `driver`. Each call takes one snapshot through a fresh
/// SysRoot, so hot-plugged devices are seen; calls are serialised (one snapshot at a time).
kubelet::DeviceSource make_kubelet_device_source(const core::OpenedHost& host, std::string node,
                                                 std::string driver);

}  // namespace nodetopo::cli
