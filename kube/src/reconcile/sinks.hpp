// The reconcilers behind the Publisher, one per kind of object, and what they have in common:
// the outcome of one sync, and how an API answer is classified (retry, conflict, parked).
// They run on the Publisher's I/O thread only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/kube/api_client.hpp>
#include <nodetopo/kube/publisher.hpp>

namespace nodetopo::kube {

using Json = nlohmann::json;

// Reading what the API server answered. Its JSON is data, not a promise: a proxy's HTML page, a
// field of another type, a list where an object belongs. nlohmann's value() and operator[]
// throw (or, const, assert) on such input, so answers are read only through these, which treat
// a missing or mistyped field as absent.

/// `obj[key]` when `obj` is an object holding `key`, else null.
inline const Json& field(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  const auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}
/// `obj[key]` as a string when it is one, else "".
inline std::string str_field(const Json& obj, const char* key) {
  const Json& v = field(obj, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

struct SyncOutcome {
  enum class Kind : std::uint8_t {
    kOk,        ///< the server holds the desired state
    kConflict,  ///< 409 or a failed precondition: read again and retry at once
    kFailed,    ///< transient (5xx after retries, timeouts, 422): retry with backoff
    kParked,    ///< refused by the cluster (403, CRD or group absent): retry slowly
  };
  Kind kind = Kind::kOk;
  std::string message;
  std::uint64_t writes = 0;
};

/// Classifies a failed response to `verb` on `resource` (in `name_space`, for `object`).
SyncOutcome failure(const ApiResponse& response, const std::string& verb,
                    const std::string& resource, const std::string& name_space,
                    const std::string& object);

inline constexpr const char* kSlicesPath = "/apis/resource.k8s.io/v1/resourceslices";
inline constexpr const char* kSliceGroupVersion = "resource.k8s.io/v1";
inline constexpr const char* kNfdGroupVersion = "nfd.k8s-sigs.io/v1alpha1";
inline constexpr const char* kNrtGroupVersion = "topology.node.k8s.io/v1alpha2";

/// GET /version and /apis.
Result<ServerInfo> discover_server(ApiClient& client);

/// The Node's UID (for ownerReferences) or the failure.
struct NodeRef {
  std::string uid;
  std::optional<SyncOutcome> error;
};
NodeRef read_node_uid(ApiClient& client, const std::string& node);

/// ResourceSlices of one node and driver, like the upstream slice controller, plus the watch
/// that notices foreign changes (kubelet wipes, deletions, edits).
class SliceReconciler {
 public:
  SliceReconciler(ApiClient& client, std::string driver, std::chrono::seconds watch_timeout);

  /// Lists the node's slices and makes them equal to `desired` (exporter slice objects).
  SyncOutcome sync(const std::string& node, const std::vector<Json>& desired);

  /// Keeps a watch open from the last listed version (call after a successful sync).
  void ensure_watch(const std::string& node);
  void close_watch();
  [[nodiscard]] bool watching() const { return watch_ != 0 && client_.watch_open(watch_); }
  /// When a broken watch may be opened again.
  [[nodiscard]] Clock::time_point watch_retry_at() const { return watch_retry_at_; }

  /// A watch event showed a change we did not make: the pool needs a repair.
  bool take_foreign_change() { return std::exchange(foreign_change_, false); }
  /// The watch expired (410) or broke in a way that can have lost events: list again.
  bool take_relist() { return std::exchange(relist_, false); }
  std::uint64_t watch_restarts() const { return watch_restarts_; }
  std::uint64_t relists() const { return relists_; }

 private:
  void on_event(const Json& event);
  void handle_event(const Json& event);
  void on_end(long status, const std::string& error);
  std::string field_selector(const std::string& node) const;

  ApiClient& client_;
  std::string driver_;
  std::chrono::seconds watch_timeout_;
  std::string node_;
  std::string resource_version_;             ///< of the last list, bookmark or event
  std::map<std::string, std::string> ours_;  ///< slice name -> resourceVersion we last saw/wrote
  int watch_ = 0;
  bool foreign_change_ = false;
  /// Events that arrive while sync() waits for its own writes are judged after it, against the
  /// versions those writes returned (else our own create would look like a foreign change).
  bool syncing_ = false;
  std::vector<Json> pending_;
  bool relist_ = false;
  Clock::time_point watch_retry_at_{};
  int watch_failures_ = 0;
  std::uint64_t watch_restarts_ = 0;
  std::uint64_t relists_ = 0;
};

/// NFD NodeFeature "<node>-nodetopo" in one namespace.
SyncOutcome sync_nodefeature(ApiClient& client, const std::string& node,
                             const std::string& name_space,
                             const std::map<std::string, std::string>& labels);

/// The Node's labels: only the keys listed in the ownership annotation are ours.
SyncOutcome sync_node_labels(ApiClient& client, const std::string& node,
                             const std::map<std::string, std::string>& labels);

/// What a HAMi sync learnt besides its outcome.
struct HamiSyncInfo {
  bool node_read = false;
  std::map<std::string, std::string> node_labels;  ///< instance_labels_of() the Node read
  std::uint64_t handshakes = 0;                    ///< scheduler requests answered
};

/// The Node's annotations and status for the HAMi bridge, and the handshake (hami.cpp).
SyncOutcome sync_hami(ApiClient& client, const std::string& node, const HamiNodeState& desired,
                      HamiSyncInfo& info);

/// The labels of a Node object the instance labels are chosen from
/// (exporters::instance_node_label_keys()).
std::map<std::string, std::string> instance_labels_of(const Json& node);

/// The cluster-scoped NodeResourceTopology named after the node.
SyncOutcome sync_nrt(ApiClient& client, const std::string& node, const Json& nrt);

}  // namespace nodetopo::kube
