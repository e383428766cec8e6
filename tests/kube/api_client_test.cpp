// The API client against the fake HTTPS API server: TLS with the test's CA, bearer tokens and
// client certificates, retries on 5xx/429/connection resets with Retry-After, timeouts, the 401
// credential reload, the rate limit, and a stop that interrupts a wait.
#include <thread>

#include <gtest/gtest.h>

#include <nodetopo/kube/api_client.hpp>

#include "fake_apiserver.hpp"

namespace nodetopo::test {
namespace {

using kube::ApiClient;
using kube::ApiRequest;

kube::ClientOptions fast() {
  kube::ClientOptions o;
  o.backoff_initial = Ms(50);
  o.backoff_max = Ms(400);
  o.request_timeout = Ms(1500);
  o.qps = 1000;
  o.burst = 1000;
  return o;
}

ApiRequest get_node() {
  return {"GET", "/api/v1/nodes/node-a", "", "", "", "get", "nodes"};
}

TEST(KubeApiClient, TalksTlsWithTokenAndCountsRequests) {
  FakeApiServer fake;
  ApiClient client(fake.client_config(), fast());
  const auto r = client.call(get_node());
  ASSERT_EQ(r.status, 200) << r.message();
  EXPECT_EQ(r.json()["metadata"]["name"], "node-a");
  const auto reqs = client.metrics()->requests();
  EXPECT_EQ(reqs.at({"get", "nodes", "200"}), 1U);
}

TEST(KubeApiClient, WrongCaIsATransportErrorNotASuccess) {
  FakeApiServer fake;
  FakeApiServer other;
  auto config = fake.client_config();
  config.ca.file = other.ca_file().string();
  auto o = fast();
  o.max_retries = 1;
  ApiClient client(config, o);
  const auto r = client.call(get_node());
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(r.message().empty());
}

TEST(KubeApiClient, ClientCertificateFromKubeconfigData) {
  FakeOptions opts;
  opts.token.clear();
  FakeApiServer fake(opts);
  const std::string cert = read_file(fake.client_cert());
  const std::string key = read_file(fake.client_key());
  auto config = fake.client_config();
  config.token.clear();
  config.client_cert.data = cert;
  config.client_key.data = key;
  ApiClient client(config, fast());
  EXPECT_EQ(client.call(get_node()).status, 200);
  config.client_cert = {};
  config.client_key = {};
  ApiClient anonymous(config, fast());
  EXPECT_EQ(anonymous.call(get_node()).status, 401);
}

TEST(KubeApiClient, RetriesA5xxBurstAndConnectionResets) {
  FakeApiServer fake;
  fake.fault({{"resource", "nodes"}, {"status", 503}, {"count", 2}});
  fake.fault({{"resource", "nodes"}, {"reset", true}, {"count", 3}});
  ApiClient client(fake.client_config(), fast());
  const auto r = client.call(get_node());
  EXPECT_EQ(r.status, 200) << r.message();
  // libcurl itself reconnects once when a reused connection turns out dead; every other reset
  // is one of our retries.
  EXPECT_GE(r.attempts, 4);
  EXPECT_LE(r.attempts, 6);
  EXPECT_EQ(client.metrics()->retries(), static_cast<std::uint64_t>(r.attempts - 1));
  EXPECT_EQ(client.metrics()->requests().at({"get", "nodes", "503"}), 2U);
  EXPECT_GE(client.metrics()->requests().at({"get", "nodes", "error"}), 1U);
}

TEST(KubeApiClient, GivesUpAfterMaxRetriesWithTheServersMessage) {
  FakeApiServer fake;
  fake.fault({{"resource", "nodes"}, {"status", 500}, {"count", -1}, {"message", "etcd down"}});
  auto o = fast();
  o.max_retries = 2;
  ApiClient client(fake.client_config(), o);
  const auto r = client.call(get_node());
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(r.message(), "etcd down");
}

TEST(KubeApiClient, HonoursRetryAfterOn429) {
  FakeApiServer fake;
  fake.fault({{"resource", "nodes"}, {"status", 429}, {"retryAfter", 1}, {"count", 1}});
  ApiClient client(fake.client_config(), fast());
  const auto start = std::chrono::steady_clock::now();
  const auto r = client.call(get_node());
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status, 200);
  EXPECT_GE(took, Ms(950));  // the backoff alone would be ~50 ms
}

TEST(KubeApiClient, SlowResponsesTimeOutAndAreRetried) {
  FakeApiServer fake;
  fake.fault({{"resource", "nodes"}, {"delayMs", 3000}, {"count", 1}});
  auto o = fast();
  o.request_timeout = Ms(300);
  ApiClient client(fake.client_config(), o);
  const auto start = std::chrono::steady_clock::now();
  const auto r = client.call(get_node());
  EXPECT_EQ(r.status, 200) << r.message();
  EXPECT_EQ(r.attempts, 2);
  EXPECT_LT(std::chrono::steady_clock::now() - start, Ms(2500));
}

TEST(KubeApiClient, CreatesAreNotRepeatedBlindlyAfterALostAnswer) {
  FakeApiServer fake;
  fake.fault({{"method", "POST"}, {"status", 500}, {"count", 1}});
  ApiClient client(fake.client_config(), fast());
  const auto r = client.call({"POST", "/apis/resource.k8s.io/v1/resourceslices", "", "{}",
                              "application/json", "create", "resourceslices"});
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.attempts, 1);
}

TEST(KubeApiClient, RereadsTheTokenFileAfter401) {
  FakeApiServer fake;
  auto config = fake.client_config_with_token_file("token-1");
  auto o = fast();
  o.token_reload = std::chrono::hours(1);  // only the 401 may make it read the file again
  ApiClient client(config, o);
  ASSERT_EQ(client.call(get_node()).status, 200);
  // Rotation: the server accepts only the new token, the kubelet writes it to the file.
  fake.control("POST", "tokens", {{"token", "token-2"}});
  fake.control("POST", "tokens/revoke", {{"token", "token-1"}});
  write_file(config.token_file, "token-2\n");
  const auto r = client.call(get_node());
  EXPECT_EQ(r.status, 200) << r.message();
  EXPECT_EQ(client.metrics()->requests().at({"get", "nodes", "401"}), 1U);
}

TEST(KubeApiClient, ExpiredTokenWithoutNewOneEndsIn401) {
  FakeOptions opts;
  opts.token = "short";
  FakeApiServer fake(opts);
  fake.control("POST", "tokens", {{"token", "short"}, {"ttlMs", 1}});
  std::this_thread::sleep_for(Ms(20));
  ApiClient client(fake.client_config(), fast());
  const auto r = client.call(get_node());
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.attempts, 2);  // one credential reload, then the answer
}

TEST(KubeApiClient, RateLimitSpacesRequestsAfterTheBurst) {
  FakeApiServer fake;
  auto o = fast();
  o.qps = 10;
  o.burst = 3;
  ApiClient client(fake.client_config(), o);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(client.call(get_node()).status, 200);
  // 3 at once, then 5 more at 10/s: at least ~500 ms.
  EXPECT_GE(std::chrono::steady_clock::now() - start, Ms(450));
}

TEST(KubeApiClient, StopInterruptsABackoffQuickly) {
  FakeApiServer fake;
  fake.fault({{"resource", "nodes"}, {"status", 503}, {"retryAfter", 30}, {"count", -1}});
  ApiClient client(fake.client_config(), fast());
  std::thread stopper([&] {
    std::this_thread::sleep_for(Ms(300));
    client.stop();
  });
  const auto start = std::chrono::steady_clock::now();
  const auto r = client.call(get_node());
  stopper.join();
  EXPECT_TRUE(r.stopped);
  EXPECT_LT(std::chrono::steady_clock::now() - start, Ms(1300));
}

}  // namespace
}  // namespace nodetopo::test
