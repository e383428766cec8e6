// The configuration of `topo agent`: defaults, then the YAML file (/etc/nodetopo/agent.yaml or
// --config), then the command-line flags. One strict reader: unknown keys and bad values are
// rejected with the key's path and the reason. Every key and its default is documented in
// docs/agent.md; this file belongs to the process, not to the host root (the per-node export
// settings stay in etc/nodetopo/export.yaml under the root).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nodetopo/base/error.hpp>
#include <nodetopo/exporters/hami.hpp>

namespace nodetopo::daemon {

inline constexpr std::string_view kDefaultConfigPath = "/etc/nodetopo/agent.yaml";

enum class BusKind { kSystem, kSession, kNone };
enum class UeventSourceKind {
  kKernel,  ///< the kernel's own NETLINK_KOBJECT_UEVENT group (works without udevd)
  kSocket,  ///< an AF_UNIX datagram socket the agent binds: tests and replays (same format)
  kNone,    ///< no hot-plug events; resync, Refresh() and SIGHUP only
};

std::string_view to_string(BusKind bus);

struct AgentConfig {
  /// Host root (a directory holding sys/ and proc/). Empty: $HOST_ROOT, else "/".
  std::string host_root;
  /// Mock profile to run on (--mock); never read from the file.
  std::string mock_profile;
  /// Node name. Empty: $NODE_NAME, else the hostname under the root.
  std::string node_name;

  std::chrono::milliseconds resync_interval{std::chrono::minutes(5)};
  /// Each resync is moved by a random amount in [-jitter, +jitter], so that a fleet started
  /// together does not rediscover in lock-step.
  std::chrono::milliseconds resync_jitter{std::chrono::seconds(30)};
  /// A discovery starts this long after the last uevent of a burst ...
  std::chrono::milliseconds debounce{std::chrono::milliseconds(250)};
  /// ... but never later than this after the first one, even while events keep coming.
  std::chrono::milliseconds debounce_max{std::chrono::seconds(2)};

  BusKind bus = BusKind::kSystem;

  /// "HOST:PORT" of the health and metrics server; empty: no HTTP server.
  std::string http_listen = "127.0.0.1:9464";

  UeventSourceKind uevent_source = UeventSourceKind::kKernel;
  std::string uevent_socket;  ///< path for UeventSourceKind::kSocket

  bool nfd_enabled = true;
  std::string nfd_path = "/etc/kubernetes/node-feature-discovery/features.d/nodetopo";
  bool json_enabled = false;
  std::string json_path = "/run/nodetopo/topology.json";

  /// The Kubernetes publisher (kube::Publisher, docs/kube.md): the node's ResourceSlices, its
  /// labels and its NodeResourceTopology written to the API server. Off by default: a systemd
  /// node without credentials must not log API errors.
  struct Kubernetes {
    bool enabled = false;
    std::string kubeconfig;  ///< empty: $KUBECONFIG, else the in-cluster service account
    std::string context;     ///< empty: the kubeconfig's current-context
    std::string driver = "nodetopo.dev";
    std::string labels = "auto";  ///< auto | nodefeature | node | none
    bool slices = true;
    bool nrt = true;
    std::string nodefeature_namespace;  ///< empty: the credentials' namespace, else NFD's
  } kubernetes;
  bool dbus_signal_enabled = true;

  /// The HAMi bridge (docs/hami.md): through the Kubernetes publisher (needs kubernetes.enabled),
  /// HAMi's register/score annotations, the handshake and the nvidia.com/gpu capacity.
  struct Hami {
    bool enabled = false;
    /// What the annotations are rendered with (split count, scaling, mode, resource, score):
    /// the exporter's own options, so their defaults live in one place.
    exporters::HamiOptions options;
    std::chrono::milliseconds poll{std::chrono::seconds(15)};
    bool operator==(const Hami&) const = default;
  } hami;

  /// The operator's instance facts (`instance.type`, `instance.capacity_type`,
  /// `instance.reservation`): label name -> value; the host's export.yaml wins over these.
  std::map<std::string, std::string> instance;

  std::string log_level = "info";
  std::string log_format = "text";  ///< text | json | journal

  /// Where the file part came from ("" when only defaults were used), for messages.
  std::string source;
};

/// Parses YAML `text` over the defaults. Errors are "SOURCE: line N: KEY.PATH: reason".
Result<AgentConfig> parse_agent_config(std::string_view text, std::string_view source);

/// Reads and parses `path`. With `must_exist` false a missing file gives the defaults (the
/// default path need not exist); any other read error is reported with the path.
Result<AgentConfig> load_agent_config(const std::string& path, bool must_exist);

/// Parses "250ms", "1.5s", "5m", "1h" (a bare number is seconds).
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

/// "HOST:PORT" with a numeric IPv4 host, or "[IPv6]:PORT": the checks the HTTP server needs.
/// Returns the reason it is not, or an empty string.
std::string check_listen_address(std::string_view text);

/// Keys whose new value only takes effect after a restart (bus, HTTP, root, uevents): a reload
/// that changes one keeps the running value and says so. Returns the changed keys' paths.
std::string restart_only_changes(const AgentConfig& running, const AgentConfig& loaded);

}  // namespace nodetopo::daemon
