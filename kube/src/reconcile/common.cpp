#include <string>

#include "../log.hpp"
#include "sinks.hpp"

namespace nodetopo::kube {

SyncOutcome failure(const ApiResponse& response, const std::string& verb,
                    const std::string& resource, const std::string& name_space,
                    const std::string& object) {
  SyncOutcome out;
  std::string what = verb + " " + resource;
  if (!object.empty()) what += " " + object;
  what += name_space.empty() ? " (cluster-scoped)" : " in namespace " + name_space;
  const std::string msg = response.message();
  switch (response.status) {
    case 409:
      out.kind = SyncOutcome::Kind::kConflict;
      out.message = what + ": conflict: " + msg;
      break;
    case 403:
      out.kind = SyncOutcome::Kind::kParked;
      out.message = what + ": forbidden: " + msg +
                    " (grant this verb on this resource to the agent's account; see docs/kube.md "
                    "RBAC)";
      break;
    case 401:
      out.kind = SyncOutcome::Kind::kFailed;
      out.message = what + ": unauthorized even after re-reading the credentials: " + msg;
      break;
    case 422:
      out.kind = SyncOutcome::Kind::kFailed;
      out.message = what + ": the API server rejected the object: " + msg;
      break;
    default:
      out.kind = SyncOutcome::Kind::kFailed;
      out.message = what + ": " + msg;
      if (response.attempts > 1) {
        out.message += " (after " + std::to_string(response.attempts) + " attempts)";
      }
      break;
  }
  return out;
}

Result<ServerInfo> discover_server(ApiClient& client) {
  ServerInfo info;
  const ApiResponse version = client.call({"GET", "/version", "", "", "", "get", "version"});
  if (!version.ok()) {
    return make_error(
        ErrorCode::kUnavailable,
        "server version (GET /version) from " + client.config().server + ": " + version.message());
  }
  const Json v = version.json();
  if (!v.is_object()) {
    return make_error(ErrorCode::kMalformed, "GET /version: the answer is not a JSON object");
  }
  auto number = [](const Json& j, const char* key) {
    if (!j.contains(key) || !j[key].is_string()) return 0;
    const std::string s = j[key].get<std::string>();
    int n = 0;
    for (const char c : s) {
      if (c < '0' || c > '9') break;  // "35+" (GKE, EKS) reads as 35
      n = n * 10 + (c - '0');
    }
    return n;
  };
  info.major = number(v, "major");
  info.minor = number(v, "minor");
  info.git_version = str_field(v, "gitVersion");
  const ApiResponse apis = client.call({"GET", "/apis", "", "", "", "get", "apis"});
  if (!apis.ok()) {
    return make_error(ErrorCode::kUnavailable, "API discovery (GET /apis) from " +
                                                   client.config().server + ": " + apis.message());
  }
  const Json groups = apis.json();
  if (!groups.is_object() || !groups.contains("groups") || !groups["groups"].is_array()) {
    return make_error(ErrorCode::kMalformed, "GET /apis: not an APIGroupList");
  }
  for (const Json& g : groups["groups"]) {
    if (!g.is_object() || !g.contains("versions") || !g["versions"].is_array()) continue;
    for (const Json& gv : g["versions"]) {
      if (gv.is_object() && gv.contains("groupVersion") && gv["groupVersion"].is_string()) {
        info.group_versions.insert(gv["groupVersion"].get<std::string>());
      }
    }
  }
  info.group_versions.insert("v1");  // the core group is always served
  return info;
}

NodeRef read_node_uid(ApiClient& client, const std::string& node) {
  NodeRef ref;
  const ApiResponse r =
      client.call({"GET", "/api/v1/nodes/" + percent_encode(node), "", "", "", "get", "nodes"});
  if (!r.ok()) {
    SyncOutcome out = failure(r, "get", "nodes", "", node);
    if (r.status == 404) {
      out.kind = SyncOutcome::Kind::kFailed;
      out.message = "Node " + node + " does not exist on " + client.config().server +
                    " (is the node name right, and is this the node's cluster?)";
    }
    ref.error = out;
    return ref;
  }
  ref.uid = str_field(field(r.json(), "metadata"), "uid");
  if (ref.uid.empty()) {
    ref.error =
        SyncOutcome{SyncOutcome::Kind::kFailed, "get nodes " + node + ": no metadata.uid", 0};
  }
  return ref;
}

}  // namespace nodetopo::kube
