// The D-Bus API of a running agent on a private bus: every method, property, signal and error,
// and `topo ... --from-agent` against the one-shot output.
#include <gtest/gtest.h>

#include "agent_fixture.hpp"

namespace nodetopo::test {
namespace {

std::string one_shot(AgentWithFakes& agent, std::vector<std::string> args) {
  args.push_back("--root");
  args.push_back(agent.root().string());
  const auto r = agent.topo(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

std::string error_name(const std::function<void()>& call) {
  try {
    call();
  } catch (const sdbus::Error& e) {
    return e.getName() + ": " + e.getMessage();
  }
  return "no error";
}

TEST(AgentDbus, MethodsAnswerWhatTheOneShotCommandsPrint) {
  AgentWithFakes agent;
  AgentClient& c = agent.client();
  EXPECT_EQ(c.call("GetTopology", {"json"}), one_shot(agent, {"dump", "--format", "json"}));
  EXPECT_EQ(c.call("GetTopology", {"text"}), one_shot(agent, {"dump"}));
  EXPECT_EQ(c.call("GetTopology", {"dot"}), one_shot(agent, {"dump", "--format", "dot"}));
  EXPECT_EQ(c.call("GetMatrix", {"text"}), one_shot(agent, {"matrix"}));
  EXPECT_EQ(c.call("GetMatrix", {"json"}), one_shot(agent, {"matrix", "--format", "json"}));
  for (const std::string format : {"plain", "nfd", "patch", "nodefeature"}) {
    EXPECT_EQ(c.call("Export", {"labels", format}),
              one_shot(agent, {"export", "labels", "--format", format}))
        << format;
  }
  for (const std::string format : {"yaml", "json"}) {
    EXPECT_EQ(c.call("Export", {"resourceslices", format}),
              one_shot(agent, {"export", "resourceslices", "--format", format}));
    EXPECT_EQ(c.call("Export", {"nrt", format}),
              one_shot(agent, {"export", "nrt", "--format", format}));
  }
  EXPECT_EQ(c.call("Export", {"shape", "json"}),
            one_shot(agent, {"export", "shape", "--format", "json"}));
  // The NFD sink wrote the same document.
  EXPECT_EQ(read_file(agent.nfd_file()), c.call("Export", {"labels", "nfd"}));
  EXPECT_EQ(read_file(agent.json_file()), c.call("GetTopology", {"json"}));
}

TEST(AgentDbus, PropertiesDescribeThePublishedSnapshot) {
  AgentWithFakes agent;
  AgentClient& c = agent.client();
  EXPECT_EQ(c.generation(), 1U);
  const std::string shape_json = c.call("Export", {"shape", "json"});
  EXPECT_EQ(c.shape().size(), 12U);
  EXPECT_NE(shape_json.find("\"shape\": \"" + c.shape() + "\""), std::string::npos) << shape_json;
  const auto now_us =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  EXPECT_GT(c.last_refresh(), now_us - 60'000'000U);
  EXPECT_LE(c.last_refresh(), now_us);
  EXPECT_EQ(c.health(), "ok");
}

TEST(AgentDbus, RefreshReturnsTheGenerationAndAnUnchangedHostKeepsIt) {
  AgentWithFakes agent;
  const auto before = agent.client().last_refresh();
  EXPECT_EQ(agent.client().refresh(), 1U);
  EXPECT_GT(agent.client().last_refresh(), before);
  EXPECT_EQ(agent.client().generation(), 1U);
  EXPECT_TRUE(agent.client().changed().empty());
}

TEST(AgentDbus, ErrorsAreNamedAndSayWhatFailed) {
  AgentSettings s;
  s.extra_yaml = "node_name: Not_A_Node\n";
  AgentWithFakes agent(s);
  AgentClient& c = agent.client();
  const std::string bad_format = error_name([&] { c.call("GetTopology", {"xml"}); });
  EXPECT_EQ(bad_format.rfind("dev.nodetopo.Error.InvalidFormat: ", 0), 0U) << bad_format;
  EXPECT_NE(bad_format.find("\"xml\""), std::string::npos) << bad_format;
  const std::string bad_matrix = error_name([&] { c.call("GetMatrix", {"yaml"}); });
  EXPECT_EQ(bad_matrix.rfind("dev.nodetopo.Error.InvalidFormat: ", 0), 0U) << bad_matrix;
  const std::string bad_kind = error_name([&] { c.call("Export", {"gpus", "yaml"}); });
  EXPECT_EQ(bad_kind.rfind("dev.nodetopo.Error.InvalidKind: ", 0), 0U) << bad_kind;
  EXPECT_NE(bad_kind.find("\"gpus\""), std::string::npos) << bad_kind;
  const std::string bad_kind_format = error_name([&] { c.call("Export", {"labels", "yaml"}); });
  EXPECT_EQ(bad_kind_format.rfind("dev.nodetopo.Error.InvalidFormat: ", 0), 0U) << bad_kind_format;
  // An invalid node name cannot make ResourceSlices: the export fails and says why.
  const std::string failed = error_name([&] { c.call("Export", {"resourceslices", "yaml"}); });
  EXPECT_EQ(failed.rfind("dev.nodetopo.Error.ExportFailed: ", 0), 0U) << failed;
  EXPECT_NE(failed.find("node name"), std::string::npos) << failed;
}

TEST(AgentDbus, NotReadyBeforeTheFirstDiscovery) {
  AgentSettings s;
  s.env = {"NODETOPO_AGENT_TEST_DISCOVERY_DELAY_MS=1500"};
  s.wait_ready = false;
  AgentWithFakes agent(s);
  std::string answer;
  ASSERT_TRUE(eventually(
      [&] {
        answer = error_name([&] { agent.client().call("GetTopology", {"json"}); });
        return answer.find("ServiceUnknown") == std::string::npos &&
               answer.find("NameHasNoOwner") == std::string::npos;
      },
      std::chrono::seconds(5)));
  EXPECT_EQ(answer.rfind("dev.nodetopo.Error.NotReady: ", 0), 0U) << answer;
  EXPECT_EQ(agent.client().generation(), 0U);
  EXPECT_EQ(agent.client().health(), "starting");
  ASSERT_TRUE(agent.notify().wait_for("READY=1", std::chrono::seconds(5)));
  EXPECT_EQ(agent.client().generation(), 1U);
}

TEST(AgentDbus, CallsAreAnsweredWhileADiscoveryRuns) {
  AgentSettings s;
  s.env = {"NODETOPO_AGENT_TEST_DISCOVERY_DELAY_MS=800"};
  AgentWithFakes agent(s);
  auto other = agent.new_client();
  std::thread refresher([&] { other->refresh(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(agent.client().call("GetTopology", {"json"}).empty());
  EXPECT_EQ(agent.client().generation(), 1U);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(400));
  refresher.join();
}

TEST(AgentDbus, FromAgentEqualsOneShot) {
  AgentWithFakes agent;
  const auto via = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--from-agent", "--bus", "session"});
    const auto r = agent.topo(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  EXPECT_EQ(via({"dump", "--format", "json"}), one_shot(agent, {"dump", "--format", "json"}));
  EXPECT_EQ(via({"dump"}), one_shot(agent, {"dump"}));
  EXPECT_EQ(via({"matrix"}), one_shot(agent, {"matrix"}));
  EXPECT_EQ(via({"matrix", "--format", "json"}), one_shot(agent, {"matrix", "--format", "json"}));
  EXPECT_EQ(via({"export", "labels", "--format", "nfd"}),
            one_shot(agent, {"export", "labels", "--format", "nfd"}));
  EXPECT_EQ(via({"export", "resourceslices"}), one_shot(agent, {"export", "resourceslices"}));
  EXPECT_EQ(via({"export", "nrt", "--format", "json"}),
            one_shot(agent, {"export", "nrt", "--format", "json"}));
  EXPECT_EQ(via({"export", "shape"}), one_shot(agent, {"export", "shape"}));
}

TEST(AgentDbus, FromAgentWithoutAnAgentFailsClearly) {
  AgentWithFakes agent;
  agent.agent().signal(SIGTERM);
  ASSERT_TRUE(agent.agent().wait(std::chrono::seconds(3)));
  const auto r = agent.topo({"dump", "--from-agent", "--bus", "session"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("dev.nodetopo.Topology1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nodetopo::test
