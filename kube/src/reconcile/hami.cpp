// The HAMi bridge on the Node: our annotations (hami.io/node-nvidia-register, -score), the
// extended resource in the Node's status, and the handshake with HAMi's scheduler.
//
// The handshake (HAMi v2.10.0 pkg/device/devices.go CheckHealth; the device plugin's side in
// v2.4-v2.7 nvinternal/plugin/register.go): the scheduler writes
// "hami.io/node-handshake: Requesting_<2006-01-02 15:04:05, its local time>" whenever the value
// does not contain "Requesting" (or a "Deleted_<time>" has aged 60 s), and treats the node's
// devices as gone when a request is 60 s old while status.allocatable[nvidia.com/gpu] is zero.
// A device plugin answers with "Reported <Go time.Now().String()>" together with its register
// annotation. So: a request (or a deletion mark) is answered at the next poll, the register
// annotation is written with a report, and nothing is written while both sides agree.
#include <chrono>
#include <ctime>

#include <nodetopo/exporters/hami.hpp>
#include <nodetopo/exporters/instance_labels.hpp>

#include "../log.hpp"
#include "sinks.hpp"

namespace nodetopo::kube {

namespace {

// Go's time.Time.String() in UTC: "2026-12-01 14:12:13.123456789 +0000 UTC".
std::string go_time_now() {
  const auto now = std::chrono::system_clock::now();
  const auto secs = std::chrono::time_point_cast<std::chrono::seconds>(now);
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now - secs).count();
  const std::time_t t = std::chrono::system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%09lld", static_cast<long long>(nanos));
  return std::string(buf) + frac + " +0000 UTC";
}

std::string annotation(const Json& meta, const std::string& key) {
  if (!meta.contains("annotations") || !meta["annotations"].is_object()) return {};
  const Json& a = meta["annotations"];
  auto it = a.find(key);
  return it != a.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool has_annotation(const Json& meta, const std::string& key) {
  return meta.contains("annotations") && meta["annotations"].is_object() &&
         meta["annotations"].contains(key);
}

std::string quantity(const Json& status, const char* field, const std::string& name) {
  if (!status.is_object() || !status.contains(field) || !status[field].is_object()) return {};
  auto it = status[field].find(name);
  return it != status[field].end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::map<std::string, std::string> instance_labels_of(const Json& node) {
  std::map<std::string, std::string> out;
  if (!node.is_object() || !node.contains("metadata") || !node["metadata"].is_object()) return out;
  const Json& meta = node["metadata"];
  if (!meta.contains("labels") || !meta["labels"].is_object()) return out;
  for (const std::string& k : exporters::instance_node_label_keys()) {
    auto it = meta["labels"].find(k);
    if (it != meta["labels"].end() && it->is_string()) out[k] = it->get<std::string>();
  }
  return out;
}

SyncOutcome sync_hami(ApiClient& client, const std::string& node, const HamiNodeState& desired,
                      HamiSyncInfo& info) {
  const std::string path = "/api/v1/nodes/" + percent_encode(node);
  const ApiResponse got = client.call({"GET", path, "", "", "", "get", "nodes"});
  if (!got.ok()) {
    SyncOutcome f = failure(got, "get", "nodes", "", node);
    if (got.status == 404) {
      f.kind = SyncOutcome::Kind::kFailed;
      f.message = "Node " + node + " does not exist on " + client.config().server;
    }
    return f;
  }
  const Json n = got.json();
  if (!n.is_object() || !n.contains("metadata") || !n["metadata"].is_object()) {
    return {SyncOutcome::Kind::kFailed, "get nodes " + node + ": the answer is not a Node", 0};
  }
  info.node_labels = instance_labels_of(n);
  info.node_read = true;
  const Json& meta = n["metadata"];
  const Json status = n.value("status", Json::object());
  const std::string register_key(exporters::kHamiRegisterAnnotation);
  const std::string handshake_key(exporters::kHamiHandshakeAnnotation);

  // Nothing to bridge on a node without NVIDIA GPUs, unless we registered some before (they
  // went away: HAMi must hear so).
  bool all_zero = true;
  for (const auto& [name, value] : desired.resources)
    all_zero = all_zero && value == "0";
  if (all_zero && !has_annotation(meta, register_key)) return {};

  Json annotations = Json::object();
  bool register_changed = false;
  for (const auto& [k, v] : desired.annotations) {
    if (!has_annotation(meta, k) || annotation(meta, k) != v) {
      annotations[k] = v;
      register_changed = register_changed || k == register_key;
    }
  }
  for (const std::string& k : desired.remove_annotations) {
    if (has_annotation(meta, k)) annotations[k] = nullptr;
  }
  const std::string handshake = annotation(meta, handshake_key);
  const bool requested = !has_annotation(meta, handshake_key) ||
                         handshake.find("Requesting") != std::string::npos ||
                         handshake.find("Deleted") != std::string::npos;
  if (requested || register_changed) {
    annotations[handshake_key] = "Reported " + go_time_now();
    if (requested && has_annotation(meta, handshake_key)) ++info.handshakes;
  }

  SyncOutcome out;
  if (!annotations.empty()) {
    // As HAMi's own plugin patches them (a strategic merge patch of metadata.annotations, no
    // precondition: only our keys are set, and a request answered late is still answered).
    const Json patch = {{"metadata", {{"annotations", annotations}}}};
    const ApiResponse r = client.call({"PATCH", path, "", patch.dump(),
                                       "application/strategic-merge-patch+json", "patch", "nodes"});
    if (!r.ok()) return failure(r, "patch", "nodes", "", node);
    ++out.writes;
  }

  Json capacity = Json::object();
  Json allocatable = Json::object();
  for (const auto& [name, value] : desired.resources) {
    if (quantity(status, "capacity", name) != value) capacity[name] = value;
    if (quantity(status, "allocatable", name) != value) allocatable[name] = value;
  }
  if (!capacity.empty() || !allocatable.empty()) {
    Json st = Json::object();
    if (!capacity.empty()) st["capacity"] = capacity;
    if (!allocatable.empty()) st["allocatable"] = allocatable;
    const Json patch = {{"status", st}};
    const ApiResponse r = client.call({"PATCH", path + "/status", "", patch.dump(),
                                       "application/merge-patch+json", "patch", "nodes/status"});
    if (!r.ok()) {
      SyncOutcome f = failure(r, "patch", "nodes/status", "", node);
      f.writes = out.writes;
      return f;
    }
    ++out.writes;
  }
  return out;
}

}  // namespace nodetopo::kube
