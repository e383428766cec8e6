// `topo fit --from-agent` against a real `topo agent` on a private bus: the same answer as
// `topo fit` on the agent's host (--root and --mock of the same profile), and exit 2 naming why
// when the agent is not running, has nothing published, or its topology is stale or degraded.
#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "agent_fixture.hpp"

namespace nodetopo::test {
namespace {

using namespace std::chrono_literals;

std::string example(const std::string& name) {
  return (source_dir() / "tests/fit/examples" / name).string();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

AgentSettings dgx() {
  AgentSettings s;
  s.profile = "dgx-h100";
  return s;
}

std::vector<std::string> fit_args(std::vector<std::string> extra) {
  std::vector<std::string> args = {"fit", example("gpu-nic-same-switch.yaml"), "--class",
                                   example("classes.yaml")};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(AgentFit, FromAgentGivesTheAnswerOfTheHost) {
  AgentWithFakes agent(dgx());
  const auto via = agent.topo(fit_args({"--from-agent", "--bus", "session"}));
  const auto mock = agent.topo(fit_args({"--mock", "dgx-h100"}));
  EXPECT_EQ(via.exit_code, 0) << via.err << via.out;
  EXPECT_EQ(via.out, mock.out);
  EXPECT_TRUE(contains(via.out, "gpu: nodetopo.dev/mock-dgx-h100/gpu-0000-1b-00-0")) << via.out;
  const auto json = agent.topo(fit_args({"--from-agent", "--bus", "session", "--format", "json"}));
  const auto root = agent.topo(fit_args({"--root", agent.root().string(), "--format", "json"}));
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out, root.out);
  // Does not fit: the same exit code and explanation.
  const std::vector<std::string> five = {"fit", example("five-gpus-one-numa.yaml"), "--class",
                                         example("classes.yaml")};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = five;
    a.insert(a.end(), extra.begin(), extra.end());
    return agent.topo(a);
  };
  const auto no = with({"--from-agent", "--bus", "session"});
  EXPECT_EQ(no.exit_code, 1) << no.err;
  EXPECT_EQ(no.out, with({"--mock", "dgx-h100"}).out);
  EXPECT_TRUE(contains(no.out, "best group 0: gpus 4")) << no.out;
}

TEST(AgentFit, WithoutAnAgentIsExitTwo) {
  AgentWithFakes agent;
  agent.agent().signal(SIGTERM);
  ASSERT_TRUE(agent.agent().wait(3s));
  const auto r = agent.topo(fit_args({"--from-agent", "--bus", "session"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "--from-agent")) << r.err;
  EXPECT_TRUE(contains(r.err, "dev.nodetopo.Topology1")) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(AgentFit, StaleTopologyIsRefused) {
  AgentWithFakes agent;
  // The host loses its network class directory: the agent keeps generation 1 (stale).
  const auto broken = agent.build_host("c", "synthetic:gpus=2,nics=2");
  std::filesystem::remove_all(broken / "sys/class/net");
  agent.use_host("c");
  EXPECT_EQ(agent.client().refresh(), 1U);
  const auto r = agent.topo(fit_args({"--from-agent", "--bus", "session"}));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.err, "stale")) << r.err;
  EXPECT_TRUE(contains(r.err, "generation 1 kept")) << r.err;

  // Healthy again: answered.
  agent.use_host("a");
  EXPECT_EQ(agent.client().refresh(), 1U);
  const auto ok = agent.topo(fit_args({"--from-agent", "--bus", "session"}));
  EXPECT_NE(ok.exit_code, 2) << ok.err;
  EXPECT_TRUE(contains(ok.out, "result: ")) << ok.out;

  // --max-age: a discovery older than allowed is stale too.
  std::this_thread::sleep_for(300ms);
  const auto old = agent.topo(fit_args({"--from-agent", "--bus", "session", "--max-age", "0.1"}));
  EXPECT_EQ(old.exit_code, 2);
  EXPECT_TRUE(contains(old.err, "stale: its last discovery finished")) << old.err;
  const auto young =
      agent.topo(fit_args({"--from-agent", "--bus", "session", "--max-age", "3600"}));
  EXPECT_NE(young.exit_code, 2) << young.err;
}

TEST(AgentFit, DegradedTopologyIsRefused) {
  // An agent whose first discovery is degraded (no CPU topology: the cpu probe fails): nothing
  // healthy to fall back on, so its slices cannot stand for the node.
  AgentWithFakes agent;
  agent.agent().signal(SIGTERM);
  ASSERT_TRUE(agent.agent().wait(3s));
  const auto broken = agent.build_host("c", "synthetic:gpus=2,nics=2");
  std::filesystem::remove_all(broken / "sys/devices/system/cpu");
  agent.use_host("c");
  Child second({(build_dir() / "topo").string(), "agent", "--config", agent.config_file().string(),
                "--root", agent.root().string()},
               {"DBUS_SESSION_BUS_ADDRESS=" + agent.bus_address(),
                "NOTIFY_SOCKET=" + agent.notify().path().string()},
               agent.dir() / "agent2.log");
  ASSERT_TRUE(agent.notify().wait_for("READY=1", 10s)) << read_file(agent.dir() / "agent2.log");
  const auto r = agent.topo(fit_args({"--from-agent", "--bus", "session"}));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.err, "the agent's topology is degraded")) << r.err;
  EXPECT_TRUE(contains(r.err, "probe cpu failed")) << r.err;
  second.signal(SIGTERM);
  EXPECT_TRUE(second.wait(3s));
}

TEST(AgentFit, FromAgentExcludesHostAndSliceOptions) {
  AgentWithFakes agent;
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--mock", "dgx-h100"},
        std::vector<std::string>{"--slices", example("classes.yaml")},
        std::vector<std::string>{"--sharing", "consumable"}}) {
    std::vector<std::string> args = fit_args({"--from-agent", "--bus", "session"});
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = agent.topo(args);
    EXPECT_EQ(r.exit_code, 2) << extra[0] << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "excludes")) << r.err;
  }
  const auto r = agent.topo(fit_args({"--max-age", "5"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "--from-agent")) << r.err;
}

}  // namespace
}  // namespace nodetopo::test
