// The Kubernetes publisher of one node: keeps the node's DRA ResourceSlices, its labels (NFD
// NodeFeature object or owned keys of the Node) and its NodeResourceTopology equal to what the
// agent discovered, and keeps them so through kubelet wipes, API faults and token rotation.
//
// Integration contract (for `topo agent` and any other owner):
//
//   kube::PublisherConfig cfg;                 // defaults: docs/kube.md
//   cfg.client = kube::load_client_config(kubeconfig, context).value();
//   kube::Publisher publisher(cfg);            // starts its I/O thread; returns at once
//   publisher.update({node_name, [snapshot](const kube::ServerInfo& s) {
//     return render_documents(snapshot, s);    // exporters, for s.minor (1.34/1.35/1.36 rules)
//   }});                                       // any thread, any time: the newest wins
//   auto st = publisher.status();              // any thread: per-sink status + counters
//   publisher.stop();                          // or the destructor; returns within ~1 s
//
// - Threads: the Publisher owns exactly ONE thread. Every API request and the slice watch run on
//   it over one libcurl multi handle (curl_multi_poll, woken by curl_multi_wakeup); it needs no
//   event loop of its caller, and never calls back into the caller except through the render
//   function, which it calls on its own thread (it must be thread-safe with respect to the value
//   it captured: capture an immutable snapshot).
// - update() and status() are thread-safe and never block on I/O.
// - Never churn, never wipe: an object is written only when the server's copy differs from the
//   desired one; before the first update(), after a failed render or a failed discovery, nothing
//   is written or removed. Only `cleanup()` (topo cleanup) removes objects.
// - A sink the cluster refuses (403, or the CRD of its kind is absent) is "parked": one warning
//   naming verb, resource and namespace, then retried every `parked_retry`, never in a loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/base/error.hpp>
#include <nodetopo/kube/api_client.hpp>
#include <nodetopo/kube/client_config.hpp>

namespace nodetopo::kube {

/// What discovery learnt about the server; the object forms follow it.
struct ServerInfo {
  int major = 0;
  int minor = 0;            ///< "35+" reads as 35
  std::string git_version;  ///< "v1.35.2"
  /// Served group versions ("resource.k8s.io/v1", "nfd.k8s-sigs.io/v1alpha1", ...).
  std::set<std::string> group_versions;
  [[nodiscard]] bool serves(const std::string& group_version) const {
    return group_versions.count(group_version) != 0;
  }
  /// The Node's labels the render reads (exporters::instance_node_label_keys(): instance type,
  /// capacity type, reservation), as the publisher last read them from the Node it GETs anyway
  /// (at each discovery and each Node sync). A change re-renders; other labels are not kept, so
  /// their changes (or our own nodetopo.dev/ labels) never do.
  std::map<std::string, std::string> node_labels;
};

/// What the HAMi bridge keeps on the Node (exporters/hami.hpp renders it): annotations that are
/// ours, and extended resources of the Node's status (capacity and allocatable). The handshake
/// annotation is not in here: the reconciler answers the scheduler's requests itself.
struct HamiNodeState {
  std::map<std::string, std::string> annotations;  ///< hami.io/node-nvidia-register, -score
  std::map<std::string, std::string> resources;    ///< "nvidia.com/gpu" -> "20"
  /// The annotations HAMi may hold from an earlier render that this one no longer has (the
  /// score, when it was turned off): removed. Others' annotations are never touched.
  std::vector<std::string> remove_annotations;
  bool operator==(const HamiNodeState&) const = default;
};

/// The documents of one node, rendered for one server. Each part that is nullopt is not managed
/// by this update (nothing is written for it, nothing removed).
struct Documents {
  /// ResourceSlice objects as the exporters render them (slice_to_json): the publisher sets
  /// metadata (generateName, ownerReference), spec.pool.generation and resourceSliceCount itself.
  std::optional<std::vector<nlohmann::json>> slices;
  /// The node's labels (full keys "nodetopo.dev/<name>").
  std::optional<std::map<std::string, std::string>> labels;
  /// The NodeResourceTopology object (render_nrt).
  std::optional<nlohmann::json> nrt;
  /// The HAMi bridge's annotations and resources (off unless PublisherConfig::hami).
  std::optional<HamiNodeState> hami;
};

/// The desired state: the node and how to render its documents for a given server.
struct DesiredState {
  std::string node_name;
  std::function<Result<Documents>(const ServerInfo&)> render;
};

/// How labels reach the cluster.
enum class LabelMode : std::uint8_t {
  kAuto,         ///< NodeFeature when nfd.k8s-sigs.io/v1alpha1 is served, else the Node
  kNodeFeature,  ///< an NFD NodeFeature object (least privilege)
  kNode,         ///< merge patch of the Node, owning only the keys it lists in an annotation
  kNone,         ///< labels are not published through the API (feature file, or none)
};

struct PublisherConfig {
  ClientConfig client;
  ClientOptions options;
  std::string driver = "nodetopo.dev";  ///< DRA driver of our slices (spec.driver)
  LabelMode label_mode = LabelMode::kAuto;
  /// Namespace of the NodeFeature object; empty: the client's namespace, else
  /// "node-feature-discovery".
  std::string nodefeature_namespace;
  bool publish_slices = true;
  bool publish_nrt = true;
  /// Full re-read of every sink even when nothing changed (drift repair without a watch).
  Millis resync{std::chrono::minutes(30)};
  /// A parked sink (403, CRD absent) is retried this often.
  Millis parked_retry{std::chrono::minutes(5)};
  /// A failed sink sync is retried after this, doubling up to sync_backoff_max.
  Millis sync_backoff_initial{1'000};
  Millis sync_backoff_max{std::chrono::minutes(5)};
  /// After a watch event shows a foreign change, wait this long before repairing (doubles while
  /// another writer keeps changing our objects, so two writers never fight in a tight loop).
  Millis repair_delay{500};
  Millis repair_delay_max{std::chrono::minutes(2)};
  /// Start-up spread: the first request waits a random time in [0, startup_jitter].
  Millis startup_jitter{0};
  /// Server-side timeout of one watch request (the watch is then resumed from its last version).
  std::chrono::seconds watch_timeout{300};
  /// The HAMi bridge (docs/hami.md): keep Documents::hami on the Node and answer the HAMi
  /// scheduler's handshake. The Node is read every `hami_poll` (reads only while nothing
  /// changes); HAMi's scheduler gives a node 60 s to answer a request.
  bool hami = false;
  Millis hami_poll{std::chrono::seconds(15)};
};

/// Status of one sink ("resourceslices", "nodefeature", "nodelabels", "nrt", "hami").
struct SinkStatus {
  bool enabled = false;  ///< the sink is configured and has something to publish
  bool parked = false;   ///< refused by the cluster (403, CRD absent); retried slowly
  bool in_sync = false;  ///< the server held the desired state at the last sync
  std::optional<std::chrono::system_clock::time_point> last_success;
  std::string last_error;  ///< empty after a success
  std::uint64_t syncs = 0;
  std::uint64_t writes = 0;  ///< create/update/patch/delete requests that succeeded
  std::uint64_t failures = 0;
};

struct PublisherStatus {
  std::optional<ServerInfo> server;
  std::map<std::string, SinkStatus> sinks;
  std::map<ClientMetrics::Key, std::uint64_t> requests;  ///< verb, resource, code -> count
  std::uint64_t retries = 0;
  std::uint64_t watch_restarts = 0;
  std::uint64_t relists = 0;          ///< full lists after a 410 or a broken watch
  std::uint64_t hami_handshakes = 0;  ///< HAMi scheduler requests answered with "Reported"
  /// Increases after every completed pass over the sinks (tests wait for it).
  std::uint64_t passes = 0;
};

class Publisher {
 public:
  explicit Publisher(PublisherConfig config);
  ~Publisher();  ///< stop()
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  /// Replaces the desired state; the I/O thread picks it up at once. Thread-safe.
  void update(DesiredState desired);
  /// Asks for a full re-read of every sink soon (e.g. after SIGHUP). Thread-safe.
  void resync();
  /// A copy of the current status. Thread-safe.
  [[nodiscard]] PublisherStatus status() const;
  /// Stops the I/O thread (interrupting any request or wait) and joins it. Idempotent.
  void stop();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// What `topo cleanup` removes: this node's ResourceSlices of `driver`, our NodeFeature, the
/// Node labels listed in our ownership annotation (and the annotation), our NodeResourceTopology.
struct CleanupOptions {
  std::string node_name;
  std::string driver = "nodetopo.dev";
  std::string nodefeature_namespace;  ///< as in PublisherConfig
};

struct CleanupReport {
  int slices_deleted = 0;
  bool nodefeature_deleted = false;
  int labels_removed = 0;
  bool nrt_deleted = false;
  std::vector<std::string> errors;  ///< one message per failed step (the others still ran)
};

/// Removes what the publisher wrote for the node. Runs on the calling thread.
CleanupReport cleanup(const ClientConfig& client, const ClientOptions& options,
                      const CleanupOptions& what);

/// The annotation on the Node listing the label keys nodetopo owns (comma-separated, sorted).
inline constexpr std::string_view kOwnedLabelsAnnotation = "nodetopo.dev/owned-labels";
/// Suffix of the NodeFeature object's name: "<node>-nodetopo" (exporters' labels_to_nodefeature).
inline constexpr std::string_view kNodeFeatureSuffix = "-nodetopo";

}  // namespace nodetopo::kube
