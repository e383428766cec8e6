// Labels through the API: the NFD NodeFeature object (nfd-master turns its spec.labels into Node
// labels; the agent needs rights on one namespaced kind only), or a merge patch of the Node that
// owns exactly the keys listed in the kOwnedLabelsAnnotation annotation, so a key nodetopo stops
// publishing is removed and nobody else's label is ever touched.
#include <set>
#include <sstream>

#include <nodetopo/base/str_cat.hpp>
#include <nodetopo/exporters/node_labels.hpp>

#include "../log.hpp"
#include "sinks.hpp"

namespace nodetopo::kube {

namespace {

std::string nodefeature_path(const std::string& ns, const std::string& name = {}) {
  // str_cat, not operator+ on a literal: GCC 12 at -O3 warns a false -Wrestrict inside
  // operator+(const char*, std::string&&).
  std::string p =
      str_cat("/apis/nfd.k8s-sigs.io/v1alpha1/namespaces/", percent_encode(ns), "/nodefeatures");
  if (!name.empty()) str_append(p, "/", percent_encode(name));
  return p;
}

std::set<std::string> split_keys(const std::string& text) {
  std::set<std::string> keys;
  std::stringstream ss(text);
  std::string k;
  while (std::getline(ss, k, ',')) {
    if (!k.empty()) keys.insert(k);
  }
  return keys;
}

// What a GET of one object must answer before it is edited and written back: an object whose
// metadata, when present, is an object too.
bool is_object_with_metadata(const Json& j) {
  return j.is_object() && (!j.contains("metadata") || j["metadata"].is_object());
}

}  // namespace

SyncOutcome sync_nodefeature(ApiClient& client, const std::string& node, const std::string& ns,
                             const std::map<std::string, std::string>& labels) {
  exporters::LabelMap map(labels.begin(), labels.end());
  auto rendered = exporters::labels_to_nodefeature(map, node, ns);
  if (!rendered) return {SyncOutcome::Kind::kFailed, rendered.error().describe(), 0};
  const Json desired = Json::parse(rendered.value().dump());
  const std::string name = desired["metadata"]["name"].get<std::string>();
  const ApiResponse got =
      client.call({"GET", nodefeature_path(ns, name), "", "", "", "get", "nodefeatures"});
  if (got.status == 404 && got.json().is_object()) {
    // No such object (the CRD's absence is told by discovery before we get here): create it.
    const ApiResponse r = client.call({"POST", nodefeature_path(ns), "", desired.dump(),
                                       "application/json", "create", "nodefeatures"});
    if (r.ok()) return {SyncOutcome::Kind::kOk, {}, 1};
    SyncOutcome f = failure(r, "create", "nodefeatures", ns, name);
    if (r.status == 404) {
      f.kind = SyncOutcome::Kind::kParked;  // namespace missing or CRD removed
    } else if (r.status == 409 || r.status == 0 || r.status >= 500) {
      f.kind = SyncOutcome::Kind::kConflict;  // created meanwhile (or maybe by us): read again
    }
    return f;
  }
  if (!got.ok()) return failure(got, "get", "nodefeatures", ns, name);
  Json current = got.json();
  if (!is_object_with_metadata(current)) {
    return {SyncOutcome::Kind::kFailed,
            "get nodefeatures " + name + " in namespace " + ns +
                ": the answer is not a NodeFeature object",
            0};
  }
  const Json want_spec = desired["spec"];
  const Json& cur_spec = field(current, "spec");
  const Json want_labels = desired["metadata"]["labels"];
  const Json& cur_labels = field(current["metadata"], "labels");
  bool labels_ok = true;
  for (const auto& [k, v] : want_labels.items()) {
    if (field(cur_labels, k.c_str()) != v) labels_ok = false;
  }
  if (cur_spec == want_spec && labels_ok) return {};
  current["spec"] = want_spec;
  if (!cur_labels.is_object()) current["metadata"]["labels"] = Json::object();
  for (const auto& [k, v] : want_labels.items())
    current["metadata"]["labels"][k] = v;
  const ApiResponse r = client.call({"PUT", nodefeature_path(ns, name), "", current.dump(),
                                     "application/json", "update", "nodefeatures"});
  if (r.ok()) return {SyncOutcome::Kind::kOk, {}, 1};
  SyncOutcome f = failure(r, "update", "nodefeatures", ns, name);
  if (r.status == 404) f.kind = SyncOutcome::Kind::kConflict;
  return f;
}

SyncOutcome sync_node_labels(ApiClient& client, const std::string& node,
                             const std::map<std::string, std::string>& labels) {
  const std::string path = "/api/v1/nodes/" + percent_encode(node);
  const ApiResponse got = client.call({"GET", path, "", "", "", "get", "nodes"});
  if (!got.ok()) {
    SyncOutcome f = failure(got, "get", "nodes", "", node);
    if (got.status == 404) f.message = "Node " + node + " does not exist";
    return f;
  }
  const Json n = got.json();
  if (!is_object_with_metadata(n)) {
    return {SyncOutcome::Kind::kFailed,
            "get nodes " + node + " (cluster-scoped): the answer is not a Node object", 0};
  }
  const Json& meta = field(n, "metadata");
  const Json& cur_labels = field(meta, "labels");
  const Json& cur_ann = field(meta, "annotations");
  const std::string ann_key(kOwnedLabelsAnnotation);
  const std::set<std::string> owned = split_keys(str_field(cur_ann, ann_key.c_str()));
  Json patch_labels = Json::object();
  for (const auto& [k, v] : labels) {
    if (field(cur_labels, k.c_str()) != v) patch_labels[k] = v;
  }
  for (const std::string& k : owned) {
    if (labels.count(k) == 0 && !field(cur_labels, k.c_str()).is_null()) patch_labels[k] = nullptr;
  }
  std::string ann;
  for (const auto& [k, v] : labels)
    ann += (ann.empty() ? "" : ",") + k;
  const Json& cur_owned = field(cur_ann, ann_key.c_str());
  const bool ann_ok = cur_owned.is_null() ? labels.empty() : cur_owned == ann;
  if (patch_labels.empty() && ann_ok) return {};
  Json patch = {{"metadata",
                 {{"resourceVersion", str_field(meta, "resourceVersion")},
                  {"annotations",
                   {{std::string(kOwnedLabelsAnnotation), labels.empty() ? Json() : Json(ann)}}}}}};
  if (!patch_labels.empty()) patch["metadata"]["labels"] = patch_labels;
  const ApiResponse r = client.call(
      {"PATCH", path, "", patch.dump(), "application/merge-patch+json", "patch", "nodes"});
  if (r.ok()) return {SyncOutcome::Kind::kOk, {}, 1};
  return failure(r, "patch", "nodes", "", node);
}

SyncOutcome sync_nrt(ApiClient& client, const std::string& node, const Json& nrt) {
  const std::string base = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies";
  const std::string path = base + "/" + percent_encode(node);
  const ApiResponse got = client.call({"GET", path, "", "", "", "get", "noderesourcetopologies"});
  if (got.status == 404 && got.json().is_object()) {
    Json obj = nrt;
    const NodeRef owner = read_node_uid(client, node);
    if (owner.error) return *owner.error;
    obj["metadata"]["ownerReferences"] = Json::array(
        {Json{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}, {"uid", owner.uid}}});
    const ApiResponse r = client.call(
        {"POST", base, "", obj.dump(), "application/json", "create", "noderesourcetopologies"});
    if (r.ok()) return {SyncOutcome::Kind::kOk, {}, 1};
    SyncOutcome f = failure(r, "create", "noderesourcetopologies", "", node);
    if (r.status == 404) f.kind = SyncOutcome::Kind::kParked;
    if (r.status == 409 || r.status == 0 || r.status >= 500) f.kind = SyncOutcome::Kind::kConflict;
    return f;
  }
  if (!got.ok()) return failure(got, "get", "noderesourcetopologies", "", node);
  Json current = got.json();
  if (!is_object_with_metadata(current)) {
    return {SyncOutcome::Kind::kFailed,
            "get noderesourcetopologies " + node +
                " (cluster-scoped): the answer is not a NodeResourceTopology object",
            0};
  }
  bool same = true;
  for (const char* key : {"topologyPolicies", "zones", "attributes"}) {
    const Json want = nrt.contains(key) ? nrt[key] : Json();
    const Json have = current.contains(key) ? current[key] : Json();
    if (want != have) same = false;
  }
  if (same) return {};
  for (const char* key : {"topologyPolicies", "zones", "attributes"}) {
    if (nrt.contains(key)) {
      current[key] = nrt[key];
    } else {
      current.erase(key);
    }
  }
  const ApiResponse r = client.call(
      {"PUT", path, "", current.dump(), "application/json", "update", "noderesourcetopologies"});
  if (r.ok()) return {SyncOutcome::Kind::kOk, {}, 1};
  SyncOutcome f = failure(r, "update", "noderesourcetopologies", "", node);
  if (r.status == 404) f.kind = SyncOutcome::Kind::kConflict;
  return f;
}

}  // namespace nodetopo::kube
