// `topo agent` with the Kubernetes sink against the fake API server (tests/kube's fixture): the
// node's slices and NodeFeature published, a hot-plug reaching the slices, an idle resync that
// writes nothing, a kubelet wipe repaired, SIGTERM within 2 s with the publisher's thread.
#include <csignal>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "agent_fixture.hpp"
#include "fake_apiserver.hpp"

namespace nodetopo::test {
namespace {

using namespace std::chrono_literals;

// Devices in this node's slices of our driver, by name.
std::set<std::string> slice_devices(const FakeApiServer& fake) {
  std::set<std::string> out;
  for (const auto& s : fake.objects("resourceslices")) {
    if (s["spec"].value("nodeName", "") != "node-a") continue;
    if (s["spec"].value("driver", "") != "nodetopo.dev") continue;
    for (const auto& d : s["spec"].value("devices", nlohmann::json::array()))
      out.insert(d.value("name", ""));
  }
  return out;
}

std::size_t gpus(const std::set<std::string>& devices) {
  std::size_t n = 0;
  for (const auto& d : devices)
    n += d.rfind("gpu-", 0) == 0 ? 1 : 0;
  return n;
}

int writes(const FakeApiServer& fake) {
  return fake.count("create") + fake.count("update") + fake.count("patch") + fake.count("delete");
}

AgentSettings kube_settings(const FakeApiServer& fake, const std::string& resync) {
  const auto kubeconfig = fake.write_kubeconfig("kc", "    token: token-1\n");
  AgentSettings s;
  s.resync = resync;
  s.extra_yaml =
      "node_name: node-a\nkubernetes:\n  enabled: true\n  kubeconfig: " + kubeconfig.string() +
      "\n  labels: nodefeature\n";
  return s;
}

TEST(AgentKubernetes, PublishesSlicesAndNodeFeatureAndFollowsAHotPlug) {
  FakeApiServer fake(FakeOptions{.crds = {"nfd"}});
  AgentWithFakes agent(kube_settings(fake, "interval: 1h\n  jitter: 0s"));
  ASSERT_TRUE(eventually([&] { return gpus(slice_devices(fake)) == 2; }, 8s)) << agent.log();
  ASSERT_TRUE(eventually([&] { return !fake.objects("nodefeatures").empty(); }, 8s)) << agent.log();
  const auto nf = fake.objects("nodefeatures").front();
  EXPECT_EQ(nf["metadata"].value("name", ""), "node-a-nodetopo");
  EXPECT_FALSE(nf["spec"]["labels"].empty());
  ASSERT_TRUE(eventually([&] { return agent.http_get("/readyz").first == 200; }, 8s))
      << agent.http_get("/readyz").second;
  EXPECT_GE(agent
                .metric("nodetopo_kube_requests_total{verb=\"create\",resource="
                        "\"resourceslices\",code=\"201\"}")
                .value_or(0),
            1.0)
      << agent.http_get("/metrics").second;
  EXPECT_GT(agent.metric("nodetopo_kube_last_sync_timestamp_seconds{sink=\"resourceslices\"}")
                .value_or(0),
            0.0);

  agent.build_host("b", "synthetic:gpus=3,nics=2");
  agent.use_host("b");
  agent.send_uevent("add", "/devices/pci0000:00/0000:00:03.0/0000:0b:00.0", "pci");
  ASSERT_TRUE(eventually([&] { return gpus(slice_devices(fake)) == 3; }, 8s)) << agent.log();
}

TEST(AgentKubernetes, IdleResyncWritesNothingAndAWipeIsRepaired) {
  FakeApiServer fake(FakeOptions{.crds = {"nfd"}});
  AgentWithFakes agent(kube_settings(fake, "interval: 200ms\n  jitter: 0s"));
  ASSERT_TRUE(eventually([&] { return gpus(slice_devices(fake)) == 2; }, 8s)) << agent.log();
  ASSERT_TRUE(eventually([&] { return agent.http_get("/readyz").first == 200; }, 8s))
      << agent.http_get("/readyz").second;
  const std::set<std::string> published = slice_devices(fake);
  fake.reset_stats();
  ASSERT_TRUE(eventually(
      [&] {
        return agent.metric(
                   "nodetopo_discoveries_total{trigger=\"resync\",result=\"unchanged\"}") >= 3.0;
      },
      5s))
      << agent.log();
  EXPECT_EQ(writes(fake), 0) << fake.stats().size();

  // What the wipe deleted, as the fake reports it: a read after it could already see the
  // agent's repair.
  const auto wiped = fake.control("POST", "wipe", {{"node", "node-a"}});
  EXPECT_GE(wiped.value("deleted", 0), 1) << wiped.dump();
  ASSERT_TRUE(eventually([&] { return slice_devices(fake) == published; }, 8s)) << agent.log();

  const auto asked = std::chrono::steady_clock::now();
  agent.agent().signal(SIGTERM);
  const auto status = agent.agent().wait(2s);
  ASSERT_TRUE(status.has_value()) << agent.log();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << agent.log();
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 2s);
}

TEST(AgentKubernetes, TheSinkModuleIsLoadedOnlyWhenEnabledAndItsAbsenceIsNamed) {
  FakeApiServer fake(FakeOptions{.crds = {"nfd"}});
  {
    AgentWithFakes agent(kube_settings(fake, "interval: 1h\n  jitter: 0s"));
    ASSERT_TRUE(eventually([&] { return gpus(slice_devices(fake)) == 2; }, 8s)) << agent.log();
    const std::string maps = read_file("/proc/" + std::to_string(agent.agent().pid()) + "/maps");
    EXPECT_NE(maps.find("nodetopo-kube-sink.so"), std::string::npos);
    EXPECT_NE(maps.find("libcurl"), std::string::npos);
  }
  // A module that is not there: the agent runs, publishes its files, and says what is missing.
  AgentSettings s = kube_settings(fake, "interval: 1h\n  jitter: 0s");
  s.env = {"NODETOPO_KUBE_SINK_MODULE_PATH=/nonexistent/nodetopo-kube-sink.so"};
  AgentWithFakes agent(s);
  ASSERT_TRUE(eventually(
      [&] {
        return agent.client().health().find("nodetopo-kube-sink.so is not installed") !=
               std::string::npos;
      },
      8s))
      << agent.client().health();
  EXPECT_NE(agent.client().health().find("/nonexistent/nodetopo-kube-sink.so"), std::string::npos);
  EXPECT_EQ(agent.http_get("/readyz").first, 503);
}

}  // namespace
}  // namespace nodetopo::test
