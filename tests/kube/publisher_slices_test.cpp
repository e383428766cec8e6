// The ResourceSlice publisher against the fake API server: what it creates, that it then stays
// quiet, and that every fault ends with the server holding exactly the desired pool.
#include <thread>

#include "publisher_fixture.hpp"

namespace nodetopo::test {
namespace {

kube::ApiResponse admin(const FakeApiServer& fake, const std::string& method,
                        const std::string& path, const std::string& query = {}) {
  kube::ApiClient client(fake.client_config(), {});
  return client.call({method, path, query, "", "", method, "admin"});
}

TEST(KubePublisherSlices, PublishesThePoolThenWritesNothing) {
  FakeApiServer fake;
  kube::Publisher p(fast_config(fake.client_config()));
  const Topology dgx = make_dgx();
  p.update(desired(make_dgx()));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p); }))
      << p.status().sinks["resourceslices"].last_error;
  EXPECT_EQ(pool_problems(fake, dgx), "");
  const auto slices = slices_of(fake);
  ASSERT_EQ(slices.size(), 1U);
  EXPECT_EQ(slices[0]["spec"]["pool"]["generation"], 1);
  EXPECT_EQ(slices[0]["metadata"]["generateName"], "node-a-nodetopo.dev-");
  // Steady state: the watch stays open, nothing is written, nothing is polled.
  fake.reset_stats();
  p.update(desired(make_dgx()));  // same hardware again: no write either
  std::this_thread::sleep_for(Ms(1200));
  EXPECT_EQ(writes(fake), 0);
  EXPECT_LE(fake.count("list"), 1);
  EXPECT_EQ(fake.control("GET", "stats")["watchers"], 1);
  EXPECT_TRUE(p.status().sinks["resourceslices"].last_success.has_value());
}

TEST(KubePublisherSlices, ManyDevicesMakeSeveralSlicesAndAChangeBumpsTheGeneration) {
  FakeApiServer fake;
  kube::Publisher p(fast_config(fake.client_config()));
  p.update(desired(make_nic_farm(200)));
  ASSERT_TRUE(api_eventually([&] {
    return in_sync(p) && pool_problems(fake, make_nic_farm(200)).empty();
  })) << pool_problems(fake, make_nic_farm(200));
  ASSERT_EQ(slices_of(fake).size(), 2U);
  // 200 -> 150 NICs: the second slice no longer matches: delete, create, generation 2.
  p.update(desired(make_nic_farm(150)));
  ASSERT_TRUE(api_eventually([&] { return pool_problems(fake, make_nic_farm(150)).empty(); }))
      << pool_problems(fake, make_nic_farm(150));
  for (const auto& s : slices_of(fake))
    EXPECT_EQ(s["spec"]["pool"]["generation"], 2);
}

TEST(KubePublisherSlices, OneSliceIsUpdatedInPlaceKeepingItsGeneration) {
  FakeApiServer fake;
  kube::Publisher p(fast_config(fake.client_config()));
  p.update(desired(make_dgx()));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p); }));
  const std::string uid = slices_of(fake)[0]["metadata"]["uid"];
  DgxOptions four;
  four.gpus = 4;
  p.update(desired(make_dgx(four)));
  ASSERT_TRUE(api_eventually([&] { return pool_problems(fake, make_dgx(four)).empty(); }))
      << pool_problems(fake, make_dgx(four));
  const auto slices = slices_of(fake);
  ASSERT_EQ(slices.size(), 1U);
  EXPECT_EQ(slices[0]["metadata"]["uid"], uid);  // updated, not replaced
  EXPECT_EQ(slices[0]["spec"]["pool"]["generation"], 1);
}

TEST(KubePublisherSlices, KubeletWipeIsRepairedWithinSeconds) {
  FakeApiServer fake;
  kube::Publisher p(fast_config(fake.client_config()));
  p.update(desired(make_nic_farm(200)));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p) && slices_of(fake).size() == 2; }));
  // What the kubelet sends at its start: DeleteCollection by node name.
  const auto r = admin(fake, "DELETE", "/apis/resource.k8s.io/v1/resourceslices",
                       "fieldSelector=spec.nodeName%3Dnode-a");
  ASSERT_EQ(r.status, 200) << r.message();
  // Both slices went, as the answer lists them: a read of the slices now could already see
  // the repair, which the watch asks for at once and which runs 100 ms later (fast_config()).
  ASSERT_EQ(r.json().value("items", nlohmann::json::array()).size(), 2U) << r.body;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(api_eventually([&] { return pool_problems(fake, make_nic_farm(200)).empty(); }))
      << pool_problems(fake, make_nic_farm(200));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  std::this_thread::sleep_for(Ms(500));
  EXPECT_EQ(slices_of(fake).size(), 2U);  // no duplicate afterwards
}

TEST(KubePublisherSlices, ADeletedSliceIsRestoredAndAForeignEditRepaired) {
  FakeApiServer fake;
  kube::Publisher p(fast_config(fake.client_config()));
  p.update(desired(make_nic_farm(200)));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p) && slices_of(fake).size() == 2; }));
  const std::string name = slices_of(fake)[1]["metadata"]["name"];
  ASSERT_EQ(admin(fake, "DELETE", "/apis/resource.k8s.io/v1/resourceslices/" + name).status, 200);
  ASSERT_TRUE(api_eventually([&] {
    return slices_of(fake).size() == 2 && pool_problems(fake, make_nic_farm(200)).empty();
  }));
  // Someone edits our slice's devices: repaired; a label added by someone else is kept.
  auto s = slices_of(fake)[0];
  const std::string edited_name = s["metadata"]["name"];
  const nlohmann::json device = s["spec"]["devices"][0];
  s["spec"]["devices"][0]["attributes"]["productName"] = {{"string", "edited"}};
  s["metadata"]["labels"]["example.com/note"] = "kept";
  fake.control("POST", "apply", {{"object", s}});
  // pool_problems() compares device names only: the edited attribute itself must come back.
  const auto first_device_of_edited = [&] {
    for (const auto& x : slices_of(fake)) {
      if (x["metadata"]["name"] == edited_name) return x["spec"]["devices"][0];
    }
    return nlohmann::json();
  };
  ASSERT_TRUE(api_eventually([&] {
    return pool_problems(fake, make_nic_farm(200)).empty() && first_device_of_edited() == device;
  })) << pool_problems(fake, make_nic_farm(200))
      << first_device_of_edited().dump();
  bool label_kept = false;
  for (const auto& x : slices_of(fake)) {
    if (x["metadata"].value("labels", nlohmann::json::object()).contains("example.com/note"))
      label_kept = true;
  }
  EXPECT_TRUE(label_kept);
}

TEST(KubePublisherSlices, ConflictFromAConcurrentWriterIsReadAgainAndRetried) {
  FakeApiServer fake;
  kube::Publisher p(fast_config(fake.client_config()));
  p.update(desired(make_dgx()));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p); }));
  fake.fault({{"method", "PUT"}, {"resource", "resourceslices"}, {"conflictWriter", true}});
  DgxOptions four;
  four.gpus = 4;
  p.update(desired(make_dgx(four)));
  ASSERT_TRUE(api_eventually([&] { return pool_problems(fake, make_dgx(four)).empty(); }))
      << pool_problems(fake, make_dgx(four));
  EXPECT_GE(fake.count("update resourceslices 409"), 1);
  EXPECT_EQ(slices_of(fake).size(), 1U);
}

TEST(KubePublisherSlices, ServerFaultsEndInTheDesiredPoolWithoutDuplicates) {
  FakeApiServer fake;
  // A 5xx burst on lists, a reset, then creates whose answers are lost (stored, but too slow).
  fake.fault({{"method", "GET"}, {"resource", "resourceslices"}, {"status", 503}, {"count", 4}});
  fake.fault({{"method", "GET"}, {"resource", "resourceslices"}, {"reset", true}, {"count", 1}});
  fake.fault({{"method", "POST"}, {"resource", "resourceslices"}, {"delayMs", 1800}, {"count", 1}});
  fake.fault({{"method", "POST"}, {"resource", "resourceslices"}, {"status", 500}, {"count", 1}});
  auto config = fast_config(fake.client_config());
  config.options.request_timeout = Ms(600);
  kube::Publisher p(config);
  p.update(desired(make_nic_farm(200)));
  ASSERT_TRUE(api_eventually([&] { return pool_problems(fake, make_nic_farm(200)).empty(); }))
      << pool_problems(fake, make_nic_farm(200));
  std::this_thread::sleep_for(Ms(2000));  // the delayed create has landed by now
  EXPECT_TRUE(api_eventually([&] {
    return slices_of(fake).size() == 2 && pool_problems(fake, make_nic_farm(200)).empty();
  })) << slices_of(fake).size()
      << " slices: " << pool_problems(fake, make_nic_farm(200));
}

TEST(KubePublisherSlices, ThrottledWritesHonourRetryAfter) {
  FakeApiServer fake;
  fake.fault({{"method", "POST"}, {"status", 429}, {"retryAfter", 1}, {"count", 1}});
  kube::Publisher p(fast_config(fake.client_config()));
  const auto start = std::chrono::steady_clock::now();
  p.update(desired(make_dgx()));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p); }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, Ms(950));
  EXPECT_EQ(pool_problems(fake, make_dgx()), "");
}

TEST(KubePublisherSlices, DataLossRestartIsRepublishedWithTheNewNodeUid) {
  FakeApiServer fake;
  kube::Publisher p(fast_config(fake.client_config()));
  p.update(desired(make_dgx()));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p); }));
  const std::string old_uid = slices_of(fake)[0]["metadata"]["uid"];
  fake.control("POST", "reset");  // the agent may have republished before the next line runs
  ASSERT_TRUE(api_eventually([&] {
    const auto s = slices_of(fake);
    return s.size() == 1 && s[0]["metadata"]["uid"] != old_uid &&
           pool_problems(fake, make_dgx()).empty();
  })) << pool_problems(fake, make_dgx());
  // The status takes the watch's relist count at the end of the pass that republished.
  EXPECT_TRUE(api_eventually([&] { return p.status().relists >= 1U; })) << p.status().relists;
}

TEST(KubePublisherSlices, TokenRotationKeepsRepairing) {
  FakeApiServer fake;
  auto config = fast_config(fake.client_config_with_token_file("token-1"));
  config.options.token_reload = std::chrono::hours(1);
  kube::Publisher p(config);
  p.update(desired(make_dgx()));
  ASSERT_TRUE(api_eventually([&] { return in_sync(p); }));
  fake.control("POST", "tokens", {{"token", "token-2"}});
  write_file(config.client.token_file, "token-2\n");
  fake.control("POST", "tokens/revoke", {{"token", "token-1"}});
  fake.control("POST", "wipe", {{"node", "node-a"}});
  ASSERT_TRUE(api_eventually([&] { return pool_problems(fake, make_dgx()).empty(); }))
      << pool_problems(fake, make_dgx()) << p.status().sinks["resourceslices"].last_error;
  EXPECT_GE(fake.count("list resourceslices 401") + fake.count("get nodes 401") +
                fake.count("create resourceslices 401"),
            1);
}

TEST(KubePublisherSlices, ForbiddenIsParkedWithOneClearMessageNotAHotLoop) {
  FakeApiServer fake;
  fake.fault({{"method", "GET"},
              {"resource", "resourceslices"},
              {"status", 403},
              {"count", -1},
              {"message",
               "User \"system:serviceaccount:nodetopo:agent\" cannot list resource "
               "\"resourceslices\""}});
  kube::Publisher p(fast_config(fake.client_config()));
  p.update(desired(make_dgx()));
  ASSERT_TRUE(api_eventually([&] { return p.status().sinks["resourceslices"].parked; }));
  const std::string error = p.status().sinks["resourceslices"].last_error;
  EXPECT_NE(error.find("list resourceslices (cluster-scoped): forbidden"), std::string::npos)
      << error;
  fake.reset_stats();
  std::this_thread::sleep_for(Ms(1600));
  EXPECT_LE(fake.count("list resourceslices"), 3);  // parked_retry is 700 ms
  EXPECT_GE(fake.count("list resourceslices"), 1);  // but retried
  fake.clear_faults();
  ASSERT_TRUE(api_eventually([&] { return in_sync(p); }));
  EXPECT_FALSE(p.status().sinks["resourceslices"].parked);
}

TEST(KubePublisherSlices, AServerWithoutDraParksTheSink) {
  FakeOptions o;
  o.dra = false;
  FakeApiServer fake(o);
  kube::Publisher p(fast_config(fake.client_config()));
  p.update(desired(make_dgx()));
  ASSERT_TRUE(api_eventually([&] { return p.status().sinks["resourceslices"].parked; }));
  EXPECT_NE(p.status().sinks["resourceslices"].last_error.find("resource.k8s.io/v1 is not served"),
            std::string::npos);
}

TEST(KubePublisherSlices, ARestartReusesThePoolAndAFailedStartRemovesNothing) {
  FakeApiServer fake;
  {
    kube::Publisher p(fast_config(fake.client_config()));
    p.update(desired(make_nic_farm(200)));
    ASSERT_TRUE(api_eventually([&] { return in_sync(p); }));
  }
  const auto before = slices_of(fake);
  fake.reset_stats();
  {
    // Discovery fails throughout, or the render fails: nothing is touched.
    fake.fault({{"resource", "version"}, {"status", 500}, {"count", -1}});
    kube::Publisher p(fast_config(fake.client_config()));
    p.update(desired(make_nic_farm(200)));
    std::this_thread::sleep_for(Ms(600));
    fake.clear_faults();
    p.update({"node-a", [](const kube::ServerInfo&) -> Result<kube::Documents> {
                return make_error(ErrorCode::kUnavailable, "probe failed");
              }});
    std::this_thread::sleep_for(Ms(600));
  }
  EXPECT_EQ(writes(fake), 0);
  {
    kube::Publisher p(fast_config(fake.client_config()));
    p.update(desired(make_nic_farm(200)));
    ASSERT_TRUE(api_eventually([&] { return in_sync(p); }));
  }
  EXPECT_EQ(writes(fake), 0);  // the same pool: reused as it is
  EXPECT_EQ(slices_of(fake), before);
}

TEST(KubePublisherSlices, StopReturnsWithinASecondEvenDuringBackoff) {
  FakeApiServer fake;
  fake.fault({{"status", 503}, {"retryAfter", 30}, {"count", -1}});
  auto p = std::make_unique<kube::Publisher>(fast_config(fake.client_config()));
  p->update(desired(make_dgx()));
  std::this_thread::sleep_for(Ms(300));
  const auto start = std::chrono::steady_clock::now();
  p->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, Ms(1000));
  p.reset();
}

}  // namespace
}  // namespace nodetopo::test
