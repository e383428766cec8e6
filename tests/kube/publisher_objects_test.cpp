// Labels (NFD NodeFeature, or owned keys of the Node), NodeResourceTopology, a tenant control
// plane's kubeconfig, and `cleanup`, against the fake API server.
#include <thread>

#include "publisher_fixture.hpp"

namespace nodetopo::test {
namespace {

std::map<std::string, std::string> our_labels(const Topology& t) {
  kube::ServerInfo s;
  s.major = 1;
  s.minor = 35;
  kube::RenderOptions o;
  o.node_name = "node-a";
  return *kube::render_documents(t, o, s).value().labels;
}

TEST(KubePublisherLabels, NodeFeatureIsTheDefaultWhereTheCrdExists) {
  FakeOptions o;
  o.crds = {"nfd"};
  FakeApiServer fake(o);
  auto config = fast_config(fake.client_config());
  config.label_mode = kube::LabelMode::kAuto;
  kube::Publisher p(config);
  p.update(desired(make_dgx(), "node-a", true));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p, "nodefeature"); }))
      << p.status().sinks["nodefeature"].last_error;
  auto nfs = fake.objects("nodefeatures");
  ASSERT_EQ(nfs.size(), 1U);
  EXPECT_EQ(nfs[0]["metadata"]["name"], "node-a-nodetopo");
  EXPECT_EQ(nfs[0]["metadata"]["namespace"], "node-feature-discovery");
  EXPECT_EQ(nfs[0]["metadata"]["labels"]["nfd.node.kubernetes.io/node-name"], "node-a");
  using LabelMap = std::map<std::string, std::string>;
  EXPECT_EQ(nfs[0]["spec"]["labels"].get<LabelMap>(), our_labels(make_dgx()));
  EXPECT_EQ(node_of(fake)["metadata"]["labels"].size(), 2U);  // the Node is not touched
  p.update(desired(make_nic_farm(3), "node-a", true));
  ASSERT_TRUE(api_eventually([&] {
    auto n = fake.objects("nodefeatures");
    return n.size() == 1 && n[0]["spec"]["labels"].get<LabelMap>() == our_labels(make_nic_farm(3));
  }));
}

TEST(KubePublisherLabels, NodeModeOwnsOnlyItsKeysAndRemovesDroppedOnes) {
  FakeApiServer fake;
  auto config = fast_config(fake.client_config());
  config.label_mode = kube::LabelMode::kNode;
  kube::Publisher p(config);
  p.update(desired(make_dgx(), "node-a", true));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p, "nodelabels"); }))
      << p.status().sinks["nodelabels"].last_error;
  auto labels = node_of(fake)["metadata"]["labels"];
  for (const auto& [k, v] : our_labels(make_dgx()))
    EXPECT_EQ(labels[k], v) << k;
  EXPECT_EQ(labels["team.example.com/owner"], "infra");
  EXPECT_EQ(labels["kubernetes.io/hostname"], "node-a");
  // Someone else sets a label of their own under our domain: not listed, so never removed.
  auto n = node_of(fake);
  n["metadata"]["labels"]["nodetopo.dev/set-by-admin"] = "yes";
  fake.control("POST", "apply", {{"object", n}});
  // The GPUs go: their labels are removed, everything else stays.
  p.update(desired(make_nic_farm(2), "node-a", true));
  ASSERT_TRUE(api_eventually(
      [&] { return !node_of(fake)["metadata"]["labels"].contains("nodetopo.dev/gpu.product"); }));
  labels = node_of(fake)["metadata"]["labels"];
  EXPECT_EQ(labels["team.example.com/owner"], "infra");
  EXPECT_EQ(labels["nodetopo.dev/set-by-admin"], "yes");
  for (const auto& [k, v] : our_labels(make_nic_farm(2)))
    EXPECT_EQ(labels[k], v) << k;
  std::string owned;
  for (const auto& [k, v] : our_labels(make_nic_farm(2)))
    owned += (owned.empty() ? "" : ",") + k;
  EXPECT_EQ(node_of(fake)["metadata"]["annotations"][std::string(kube::kOwnedLabelsAnnotation)],
            owned);
  fake.reset_stats();
  std::this_thread::sleep_for(Ms(500));
  EXPECT_EQ(writes(fake), 0);
}

TEST(KubePublisherNrt, ParkedUntilTheCrdIsInstalledThenCreated) {
  FakeApiServer fake;
  auto config = fast_config(fake.client_config());
  config.publish_nrt = true;
  kube::Publisher p(config);
  p.update(desired(make_dgx(), "node-a", false, true));
  ASSERT_TRUE(api_eventually([&] { return p.status().sinks["nrt"].parked; }));
  EXPECT_NE(p.status().sinks["nrt"].last_error.find("NodeResourceTopology CRD"), std::string::npos);
  fake.control("POST", "crds", {{"name", "nrt"}, {"present", true}});
  ASSERT_TRUE(api_eventually([&] { return in_sync(p, "nrt"); }))
      << p.status().sinks["nrt"].last_error;
  const auto nrts = fake.objects("noderesourcetopologies");
  ASSERT_EQ(nrts.size(), 1U);
  EXPECT_EQ(nrts[0]["metadata"]["name"], "node-a");
  EXPECT_EQ(nrts[0]["metadata"]["ownerReferences"][0]["uid"], node_of(fake)["metadata"]["uid"]);
  EXPECT_FALSE(nrts[0]["zones"].empty());
}

TEST(KubePublisherTenant, EveryWriteGoesToTheTenantKubeconfigsServer) {
  FakeApiServer management;
  FakeOptions t;
  t.token = "tenant-token";
  t.crds = {"nfd", "nrt"};
  FakeApiServer tenant(t);
  const auto kubeconfig = tenant.write_kubeconfig("tenant.kubeconfig", "    token: tenant-token\n");
  auto client = kube::load_kubeconfig(kubeconfig.string());
  ASSERT_TRUE(client) << client.error().describe();
  auto config = fast_config(client.value());
  config.label_mode = kube::LabelMode::kAuto;
  config.publish_nrt = true;
  kube::Publisher p(config);
  p.update(desired(make_dgx(), "node-a", true, true));
  ASSERT_TRUE(
      api_eventually([&] { return in_sync(p) && in_sync(p, "nodefeature") && in_sync(p, "nrt"); }));
  EXPECT_EQ(pool_problems(tenant, make_dgx()), "");
  EXPECT_EQ(tenant.objects("nodefeatures").size(), 1U);
  // The context's namespace is the NodeFeature's.
  EXPECT_EQ(tenant.objects("nodefeatures")[0]["metadata"]["namespace"], "nodetopo");
  EXPECT_EQ(tenant.objects("noderesourcetopologies").size(), 1U);
  int management_requests = 0;
  for (const auto& [k, v] : management.stats())
    management_requests += v;
  EXPECT_EQ(management_requests, 0);
  EXPECT_TRUE(management.objects("resourceslices").empty());
}

TEST(KubeCleanup, RemovesOnlyWhatThePublisherWrote) {
  FakeOptions o;
  o.crds = {"nfd", "nrt"};
  o.nodes = {"node-a", "node-b"};
  FakeApiServer fake(o);
  {
    auto config = fast_config(fake.client_config());
    config.label_mode = kube::LabelMode::kNode;
    config.publish_nrt = true;
    kube::Publisher p(config);
    p.update(desired(make_dgx(), "node-a", true, true));
    ASSERT_TRUE(api_eventually(
        [&] { return in_sync(p) && in_sync(p, "nodelabels") && in_sync(p, "nrt"); }));
    config.label_mode = kube::LabelMode::kNodeFeature;
    kube::Publisher nf(config);
    nf.update(desired(make_dgx(), "node-a", true, false));
    ASSERT_TRUE(api_eventually([&] { return in_sync(nf, "nodefeature"); }));
    kube::Publisher other(fast_config(fake.client_config()));
    other.update(desired(make_dgx(), "node-b"));
    ASSERT_TRUE(api_eventually([&] { return in_sync(other); }));
  }
  // Another driver's slice on the same node.
  nlohmann::json foreign = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceSlice"},
      {"metadata", {{"generateName", "node-a-gpu.example.com-"}}},
      {"spec",
       {{"driver", "gpu.example.com"},
        {"nodeName", "node-a"},
        {"pool", {{"name", "node-a"}, {"generation", 1}, {"resourceSliceCount", 1}}}}}};
  fake.control("POST", "apply", {{"object", foreign}});
  kube::CleanupOptions what;
  what.node_name = "node-a";
  const auto report = kube::cleanup(fake.client_config(), {}, what);
  EXPECT_TRUE(report.errors.empty()) << report.errors[0];
  EXPECT_EQ(report.slices_deleted, 1);
  EXPECT_TRUE(report.nodefeature_deleted);
  EXPECT_TRUE(report.nrt_deleted);
  EXPECT_EQ(report.labels_removed, static_cast<int>(our_labels(make_dgx()).size()));
  EXPECT_TRUE(slices_of(fake, "node-a").empty());
  EXPECT_EQ(slices_of(fake, "node-b").size(), 1U);
  EXPECT_EQ(fake.objects("resourceslices").size(), 2U);  // node-b's and the other driver's
  EXPECT_TRUE(fake.objects("nodefeatures").empty());
  EXPECT_TRUE(fake.objects("noderesourcetopologies").empty());
  const auto node = node_of(fake);
  EXPECT_EQ(node["metadata"]["labels"].size(), 2U);
  EXPECT_FALSE(node["metadata"]
                   .value("annotations", nlohmann::json::object())
                   .contains(std::string(kube::kOwnedLabelsAnnotation)));
  // Again: nothing left to remove, no error.
  const auto again = kube::cleanup(fake.client_config(), {}, what);
  EXPECT_TRUE(again.errors.empty());
  EXPECT_EQ(again.slices_deleted, 0);
}

}  // namespace
}  // namespace nodetopo::test
