// The HAMi bridge through the publisher, against the fake API server: the register and score
// annotations, nvidia.com/gpu in the Node's status (through the status subresource), the
// handshake followed as HAMi's scheduler drives it (v2.10.0 pkg/device/devices.go CheckHealth:
// it writes "Requesting_<2006-01-02 15:04:05>" and expects the device side to answer), nothing
// written while idle, what was published kept through an API outage, and the instance labels
// chosen from the Node's own labels.
#include <thread>

#include <nodetopo/exporters/hami.hpp>
#include <nodetopo/kube/api_client.hpp>

#include "publisher_fixture.hpp"

namespace nodetopo::test {
namespace {

const std::string kRegister(exporters::kHamiRegisterAnnotation);
const std::string kScore(exporters::kHamiScoreAnnotation);
const std::string kHandshake(exporters::kHamiHandshakeAnnotation);

std::string annotation(const nlohmann::json& node, const std::string& key) {
  const auto& a = node["metadata"].value("annotations", nlohmann::json::object());
  return a.contains(key) ? a[key].get<std::string>() : std::string();
}

kube::PublisherConfig hami_config(const FakeApiServer& fake) {
  auto c = fast_config(fake.client_config());
  c.publish_slices = false;
  c.hami = true;
  c.hami_poll = Ms(150);
  return c;
}

kube::DesiredState hami_desired(Topology topology, exporters::HamiOptions hami = {},
                                bool labels = false) {
  auto shared = std::make_shared<const Topology>(std::move(topology));
  kube::RenderOptions o;
  o.node_name = "node-a";
  o.slices = false;
  o.labels = labels;
  o.nrt = false;
  o.hami = hami;
  return {"node-a",
          [shared, o](const kube::ServerInfo& s) { return kube::render_documents(*shared, o, s); }};
}

// What HAMi's scheduler does: a strategic merge patch of the handshake annotation.
void scheduler_requests(const FakeApiServer& fake, const std::string& value) {
  kube::ApiClient client(fake.client_config(), {});
  const nlohmann::json patch = {{"metadata", {{"annotations", {{kHandshake, value}}}}}};
  const auto r = client.call({"PATCH", "/api/v1/nodes/node-a", "", patch.dump(),
                              "application/strategic-merge-patch+json", "patch", "nodes"});
  ASSERT_TRUE(r.ok()) << r.message();
}

TEST(KubePublisherHami, RegistersAnnotationsAndCapacityThroughTheStatusSubresource) {
  FakeApiServer fake;
  kube::Publisher p(hami_config(fake));
  const Topology t = make_dgx();
  p.update(hami_desired(t));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p, "hami"); }))
      << p.status().sinks["hami"].last_error;
  const auto expected = exporters::render_hami(t, {});
  const auto n = node_of(fake);
  EXPECT_EQ(annotation(n, kRegister), expected->register_json);
  EXPECT_EQ(annotation(n, kScore), expected->score_json);
  EXPECT_EQ(annotation(n, kHandshake).rfind("Reported ", 0), 0U) << annotation(n, kHandshake);
  EXPECT_EQ(n["status"]["capacity"]["nvidia.com/gpu"], "80");
  EXPECT_EQ(n["status"]["allocatable"]["nvidia.com/gpu"], "80");
  // The Node's other labels are untouched; the annotations went through a strategic merge
  // patch, the capacity through nodes/status.
  EXPECT_EQ(n["metadata"]["labels"]["team.example.com/owner"], "infra");
  EXPECT_GE(fake.count("patch nodes/status 200"), 1);
  EXPECT_GE(fake.count("patch nodes 200"), 1);
}

TEST(KubePublisherHami, AnswersTheSchedulersHandshakeAndIsQuietOtherwise) {
  FakeApiServer fake;
  kube::Publisher p(hami_config(fake));
  p.update(hami_desired(make_dgx({.gpus = 2})));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p, "hami"); }));
  // Idle: a few polls read the Node and write nothing.
  fake.reset_stats();
  std::this_thread::sleep_for(Ms(600));
  EXPECT_EQ(writes(fake), 0) << "idle polls must only read";
  EXPECT_GE(fake.count("get nodes 200"), 2);
  // HAMi's scheduler asks; the bridge answers at its next poll, well within the 60 s HAMi gives.
  // The publisher counts an answer after its PATCH returns, so the Node can show "Reported"
  // a moment before the counter moves: wait for both.
  const auto answered = [&](std::uint64_t n) {
    return api_eventually([&] {
      return annotation(node_of(fake), kHandshake).rfind("Reported ", 0) == 0 &&
             p.status().hami_handshakes == n;
    });
  };
  scheduler_requests(fake, "Requesting_2026-12-01 14:12:13");
  ASSERT_TRUE(answered(1U)) << p.status().hami_handshakes;
  // A deletion mark (the scheduler gave up on the node) is answered the same way.
  scheduler_requests(fake, "Deleted_2026-12-01 14:13:00");
  ASSERT_TRUE(answered(2U)) << p.status().hami_handshakes;
  // Someone else's annotation stays.
  scheduler_requests(fake, "Requesting_2026-12-01 14:14:00");
  kube::ApiClient client(fake.client_config(), {});
  const nlohmann::json other = {{"metadata", {{"annotations", {{"example.com/x", "1"}}}}}};
  ASSERT_TRUE(client
                  .call({"PATCH", "/api/v1/nodes/node-a", "", other.dump(),
                         "application/merge-patch+json", "patch", "nodes"})
                  .ok());
  ASSERT_TRUE(api_eventually([&] { return p.status().hami_handshakes == 3U; }));
  EXPECT_EQ(annotation(node_of(fake), "example.com/x"), "1");
}

TEST(KubePublisherHami, ConfigChangesRewriteAndTheScoreCanBeTurnedOff) {
  FakeApiServer fake;
  kube::Publisher p(hami_config(fake));
  const Topology t = make_dgx({.gpus = 4});
  p.update(hami_desired(t));
  ASSERT_TRUE(api_eventually([&] { return !annotation(node_of(fake), kScore).empty(); }));
  exporters::HamiOptions o;
  o.split_count = 3;
  o.score = false;
  p.update(hami_desired(t, o));
  ASSERT_TRUE(api_eventually([&] {
    const auto n = node_of(fake);
    return n["status"]["capacity"].value("nvidia.com/gpu", "") == "12" &&
           !n["metadata"]["annotations"].contains(kScore);
  })) << node_of(fake).dump();
  EXPECT_EQ(annotation(node_of(fake), kRegister), exporters::render_hami(t, o)->register_json);
}

TEST(KubePublisherHami, AnOutageRemovesNothingAndTheBridgeCatchesUp) {
  FakeApiServer fake;
  kube::Publisher p(hami_config(fake));
  const Topology t = make_dgx({.gpus = 2});
  p.update(hami_desired(t));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p, "hami"); }));
  const std::string published = annotation(node_of(fake), kRegister);
  // The scheduler asks just before the API server fails every request on Nodes.
  fake.fault({{"resource", "nodes"}, {"status", 503}, {"count", -1}});
  // Out of sync once a poll has spent its retries (four tries, with backoff between them).
  EXPECT_TRUE(api_eventually([&] { return !in_sync(p, "hami"); }));
  std::this_thread::sleep_for(Ms(300));  // more failed polls before the check below
  EXPECT_EQ(annotation(node_of(fake), kRegister), published);  // nothing removed meanwhile
  fake.clear_faults();
  scheduler_requests(fake, "Requesting_2026-12-01 14:12:13");
  ASSERT_TRUE(api_eventually([&] {
    return in_sync(p, "hami") && annotation(node_of(fake), kHandshake).rfind("Reported ", 0) == 0;
  }));
  EXPECT_EQ(annotation(node_of(fake), kRegister), published);
  EXPECT_EQ(node_of(fake)["status"]["capacity"]["nvidia.com/gpu"], "20");
}

TEST(KubePublisherHami, NoGpuWritesNothing) {
  FakeApiServer fake;
  kube::Publisher p(hami_config(fake));
  p.update(hami_desired(make_nic_farm(2)));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p, "hami"); }));
  const auto n = node_of(fake);
  EXPECT_EQ(annotation(n, kRegister), "");
  EXPECT_FALSE(n.contains("status") && n["status"].contains("capacity") &&
               n["status"]["capacity"].contains("nvidia.com/gpu"));
  EXPECT_EQ(writes(fake), 0);
}

// The instance labels, chosen from the Node's own labels that the publisher reads.
TEST(KubePublisherInstanceLabels, NodeLabelsAreReadAndWinOverCloudInit) {
  FakeApiServer fake;
  kube::ApiClient client(fake.client_config(), {});
  const nlohmann::json labels = {
      {"metadata",
       {{"labels",
         {{"node.kubernetes.io/instance-type", "p5.48xlarge"},
          {"karpenter.sh/capacity-type", "reserved"},
          {"karpenter.k8s.aws/capacity-reservation-id", "cr-56fac701cc1951b03"}}}}}};
  ASSERT_TRUE(client
                  .call({"PATCH", "/api/v1/nodes/node-a", "", labels.dump(),
                         "application/merge-patch+json", "patch", "nodes"})
                  .ok());
  auto config = fast_config(fake.client_config());
  config.publish_slices = false;
  config.label_mode = kube::LabelMode::kNode;
  kube::Publisher p(config);
  auto shared = std::make_shared<const Topology>(make_dgx({.gpus = 1}));
  kube::RenderOptions o;
  o.node_name = "node-a";
  o.slices = false;
  o.nrt = false;
  o.instance.cloud_init.values["instance-type"] = {"g4dn.xlarge", "cloud-init"};
  o.instance.cloud_init.values["capacity-type"] = {"spot", "cloud-init"};
  p.update({"node-a", [shared, o](const kube::ServerInfo& s) {
              return kube::render_documents(*shared, o, s);
            }});
  ASSERT_TRUE(api_eventually([&] { return in_sync(p, "nodelabels"); }))
      << p.status().sinks["nodelabels"].last_error;
  const auto l = node_of(fake)["metadata"]["labels"];
  EXPECT_EQ(l["nodetopo.dev/instance-type"], "p5.48xlarge");
  EXPECT_EQ(l["nodetopo.dev/capacity-type"], "reserved");
  EXPECT_EQ(l["nodetopo.dev/reservation"], "cr-56fac701cc1951b03");
  // A change of an unrelated label renders nothing again; writing our own labels did not either.
  fake.reset_stats();
  const nlohmann::json other = {{"metadata", {{"labels", {{"example.com/y", "2"}}}}}};
  ASSERT_TRUE(client
                  .call({"PATCH", "/api/v1/nodes/node-a", "", other.dump(),
                         "application/merge-patch+json", "patch", "nodes"})
                  .ok());
  p.resync();
  std::this_thread::sleep_for(Ms(400));
  EXPECT_EQ(fake.count("patch nodes 200"), 1);  // only the test's own patch
}

}  // namespace
}  // namespace nodetopo::test
