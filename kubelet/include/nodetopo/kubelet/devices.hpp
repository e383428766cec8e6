// The node's devices as the kubelet plugin needs them: what the driver publishes (the slice
// device: name, attributes, capacity) plus what only the host knows and a container needs (the
// device nodes). The plugin never discovers the host itself: `topo kubelet-plugin` hands it a
// DeviceSource (agent/cli/kubelet_plugin/src/kubelet_devices.cpp, the one adapter over agent/core).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/base/error.hpp>
#include <nodetopo/kube/publisher.hpp>

namespace nodetopo::kubelet {

/// What kind of device a slice device is, for the CDI edits and the publish policy.
enum class DeviceKind : std::uint8_t { kGpu, kNic, kAccelerator };

/// One device this node can publish under our driver.
struct NodeDevice {
  std::string name;  ///< the slice device name ("gpu-0000-1b-00-0")
  DeviceKind kind = DeviceKind::kGpu;
  /// The slice device as rendered by the exporters (`name`, `attributes`, `capacity`, ...).
  nlohmann::json slice_device;
  std::string pci_bus_id;           ///< "0000:1b:00.0"
  std::string vendor;               ///< "nvidia", "mellanox", ...
  std::string uuid;                 ///< accelerators
  std::string netdev;               ///< NICs: interface name
  std::string rdma_device;          ///< NICs: "mlx5_0"
  std::optional<int> vendor_index;  ///< accelerators: index among the vendor's devices (minor)
  /// Device nodes a container needs, as host paths ("/dev/infiniband/uverbs0").
  std::vector<std::string> device_nodes;
  /// The host is a mock (no real device behind it): the CDI edits carry environment only.
  bool mock = false;
  [[nodiscard]] std::optional<std::string> string_attribute(const std::string& key) const;
};

/// The devices of this node and the documents they came from.
struct NodeDevices {
  std::vector<NodeDevice> devices;
  /// Every ResourceSlice of our driver as the exporters render it (slice_to_json) for a server,
  /// so the plugin can publish them when configured to (the object form follows the server).
  std::function<Result<std::vector<nlohmann::json>>(const kube::ServerInfo&)> render_slices;
};

/// Discovers the node again. Called at start and when a claim names a device not seen before.
using DeviceSource = std::function<Result<NodeDevices>()>;

std::string to_string(DeviceKind kind);

}  // namespace nodetopo::kubelet
