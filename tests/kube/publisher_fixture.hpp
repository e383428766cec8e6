// Shared pieces of the publisher suites: fast timings, desired states from hand-built topologies,
// and checks that the fake server holds exactly the desired pool (no duplicate, no lost slice).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nodetopo/kube/publisher.hpp>
#include <nodetopo/kube/render.hpp>

#include "fake_apiserver.hpp"
#include "test_topologies.hpp"

namespace nodetopo::test {

inline kube::PublisherConfig fast_config(const kube::ClientConfig& client) {
  kube::PublisherConfig c;
  c.client = client;
  c.options.backoff_initial = Ms(30);
  c.options.backoff_max = Ms(300);
  c.options.request_timeout = Ms(1500);
  c.options.max_retries = 3;
  c.sync_backoff_initial = Ms(100);
  c.sync_backoff_max = Ms(800);
  c.parked_retry = Ms(700);
  c.repair_delay = Ms(100);
  c.repair_delay_max = Ms(800);
  c.label_mode = kube::LabelMode::kNone;
  c.publish_nrt = false;
  return c;
}

struct Render {
  std::shared_ptr<const Topology> topology;
  kube::RenderOptions options;
};

inline kube::DesiredState desired(Topology topology, const std::string& node = "node-a",
                                  bool labels = false, bool nrt = false) {
  auto shared = std::make_shared<const Topology>(std::move(topology));
  kube::RenderOptions o;
  o.node_name = node;
  o.labels = labels;
  o.nrt = nrt;
  return {node,
          [shared, o](const kube::ServerInfo& s) { return kube::render_documents(*shared, o, s); }};
}

/// The device names the exporters put in the pool of `topology` for a 1.35 server.
inline std::multiset<std::string> expected_devices(const Topology& topology,
                                                   const std::string& node = "node-a") {
  kube::ServerInfo s;
  s.major = 1;
  s.minor = 35;
  kube::RenderOptions o;
  o.node_name = node;
  auto docs = kube::render_documents(topology, o, s);
  std::multiset<std::string> names;
  for (const auto& slice : *docs.value().slices) {
    for (const auto& d : slice["spec"].value("devices", nlohmann::json::array()))
      names.insert(d["name"].get<std::string>());
  }
  return names;
}

inline std::vector<nlohmann::json> slices_of(const FakeApiServer& fake,
                                             const std::string& node = "node-a") {
  std::vector<nlohmann::json> out;
  for (auto& s : fake.objects("resourceslices")) {
    if (s["spec"]["nodeName"] == node && s["spec"]["driver"] == "nodetopo.dev") out.push_back(s);
  }
  return out;
}

/// Empty when the server's pool of `node` is exactly the desired one, else what differs.
inline std::string pool_problems(const FakeApiServer& fake, const Topology& topology,
                                 const std::string& node = "node-a") {
  const auto slices = slices_of(fake, node);
  if (slices.empty()) return "no slices";
  std::string uid;
  for (const auto& n : fake.objects("nodes")) {
    if (n["metadata"]["name"] == node) uid = n["metadata"]["uid"];
  }
  std::multiset<std::string> names;
  std::set<std::int64_t> generations;
  std::string problems;
  for (const auto& s : slices) {
    generations.insert(s["spec"]["pool"]["generation"].get<std::int64_t>());
    if (s["spec"]["pool"]["resourceSliceCount"] != slices.size()) problems += "count; ";
    if (s["spec"]["pool"]["name"] != node) problems += "pool name; ";
    const auto& owners = s["metadata"].value("ownerReferences", nlohmann::json::array());
    if (owners.size() != 1 || owners[0]["uid"] != uid || owners[0]["kind"] != "Node") {
      problems += "owner of " + s["metadata"]["name"].get<std::string>() + "; ";
    }
    if (s["metadata"]["name"].get<std::string>().rfind(node + "-nodetopo.dev-", 0) != 0) {
      problems += "name; ";
    }
    for (const auto& d : s["spec"].value("devices", nlohmann::json::array()))
      names.insert(d["name"].get<std::string>());
  }
  if (generations.size() != 1) problems += "mixed generations; ";
  if (names != expected_devices(topology, node)) {
    problems += "devices differ (" + std::to_string(names.size()) + " on the server, " +
                std::to_string(expected_devices(topology, node).size()) + " desired); ";
  }
  return problems;
}

inline bool in_sync(const kube::Publisher& p, const std::string& sink = "resourceslices") {
  const auto st = p.status();
  const auto it = st.sinks.find(sink);
  return it != st.sinks.end() && it->second.in_sync;
}

/// The Node object `name` on the fake server, or null when it has none.
inline nlohmann::json node_of(const FakeApiServer& fake, const std::string& name = "node-a") {
  for (auto& n : fake.objects("nodes")) {
    if (n["metadata"]["name"] == name) return n;
  }
  return {};
}

/// Writes (create/update/patch/delete/deletecollection) counted by the fake.
inline int writes(const FakeApiServer& fake) {
  int n = 0;
  for (const auto& [k, v] : fake.stats()) {
    if (k.rfind("create", 0) == 0 || k.rfind("update", 0) == 0 || k.rfind("patch", 0) == 0 ||
        k.rfind("delete", 0) == 0) {
      n += v;
    }
  }
  return n;
}

}  // namespace nodetopo::test
