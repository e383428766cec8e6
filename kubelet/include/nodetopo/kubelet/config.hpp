// The kubelet plugin's configuration (`topo kubelet-plugin --config FILE`, YAML). Every key, its
// default and why: docs/kubelet.md. Unknown keys and bad values are refused with the key's path.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/kubelet/devices.hpp>

namespace nodetopo::kubelet {

/// Whether the plugin's publisher puts a device of one kind into our slices.
enum class PublishPolicy : std::uint8_t {
  kAuto,    ///< unless another driver already publishes the same PCI function on this node
  kAlways,  ///< even when another driver publishes it
  kNever,   ///< never
};

struct PluginConfig {
  std::string driver = "nodetopo.dev";
  std::string node_name;  ///< default $NODE_NAME, else the host's hostname
  /// The kubelet's plugin watcher directory (where the registration socket goes).
  std::string registry_dir = "/var/lib/kubelet/plugins_registry";
  /// The kubelet's plugins directory: the DRA socket goes into <plugins_dir>/<driver>/.
  std::string plugins_dir = "/var/lib/kubelet/plugins";
  /// Where the per-claim CDI specs are written (the runtime reads /etc/cdi and /var/run/cdi).
  std::string cdi_dir = "/var/run/cdi";
  /// Where vendor CDI specs are looked for (an nvidia.com/gpu spec of the container toolkit).
  std::vector<std::string> vendor_cdi_dirs = {"/etc/cdi", "/var/run/cdi"};
  /// Checkpoint of the prepared claims; default <plugins_dir>/<driver>.
  std::string state_dir;
  /// Pod UID for rolling updates ($POD_UID): per-instance socket names, as the upstream
  /// kubeletplugin helper names them, so old and new pods overlap without a gap.
  std::string instance_uid;
  /// How often the sockets are checked (re-created when they disappear).
  std::chrono::milliseconds socket_check{1000};
  /// First delay before a refused registration is offered again (doubles up to 5 min).
  std::chrono::milliseconds registration_retry{2000};
  /// Publish our ResourceSlices from this process (the agent may do it instead).
  bool publish = false;
  /// Publish policy per device kind.
  std::map<DeviceKind, PublishPolicy> policy = {{DeviceKind::kGpu, PublishPolicy::kAuto},
                                                {DeviceKind::kNic, PublishPolicy::kAuto},
                                                {DeviceKind::kAccelerator, PublishPolicy::kAuto}};
  /// How often the node's slices of other drivers are read for the `auto` policy.
  std::chrono::milliseconds foreign_slice_poll{5000};

  [[nodiscard]] std::string registration_socket() const;  ///< full path
  [[nodiscard]] std::string dra_socket() const;           ///< full path
  [[nodiscard]] std::string checkpoint_file() const;      ///< full path
};

/// Reads `path` over the defaults in `config`. Errors name the file and the key.
Result<PluginConfig> load_plugin_config(const std::string& path, PluginConfig config = {});

Result<PublishPolicy> parse_publish_policy(const std::string& text);

}  // namespace nodetopo::kubelet
