// Starting and refusing to start: --mock, a bad config, a bus name already owned, a bad root.
#include <csignal>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "agent_fixture.hpp"

namespace nodetopo::test {
namespace {

using namespace std::chrono_literals;

std::string topo() {
  return (build_dir() / "topo").string();
}

TEST(AgentStartup, MockHostIsBuiltForTheAgentsLifeAndRemovedAtExit) {
  TempDir dir;
  write_file(dir.path() / "agent.yaml",
             "dbus: {bus: none}\nhttp: {listen: \"\"}\nuevents: {source: none}\nsinks:\n  nfd: "
             "{path: " +
                 (dir.path() / "features").string() + "}\n");
  NotifySocket notify(dir.path() / "notify.sock");
  Child agent({topo(), "agent", "--config", (dir.path() / "agent.yaml").string(), "--mock",
               "synthetic:gpus=2,nics=2"},
              {"NOTIFY_SOCKET=" + notify.path().string(), "TMPDIR=" + dir.path().string()},
              dir.path() / "agent.log");
  ASSERT_TRUE(notify.wait_for("READY=1", 10s)) << read_file(dir.path() / "agent.log");
  EXPECT_NE(read_file(dir.path() / "features").find("nodetopo.dev/"), std::string::npos);
  const auto mock_dirs = [&] {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
      if (e.path().filename().string().rfind("nodetopo-mock-", 0) == 0) ++n;
    }
    return n;
  };
  EXPECT_EQ(mock_dirs(), 1U);
  agent.signal(SIGTERM);
  const auto status = agent.wait(3s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  EXPECT_EQ(mock_dirs(), 0U);
}

TEST(AgentStartup, BadConfigFileStopsTheStartWithItsKeyPath) {
  TempDir dir;
  write_file(dir.path() / "agent.yaml", "sinks:\n  nfd:\n    enabled: maybe\n");
  const auto r = run_command({topo(), "agent", "--config", (dir.path() / "agent.yaml").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("agent.yaml: line 3: sinks.nfd.enabled: expected true or false"),
            std::string::npos)
      << r.err;
  const auto missing =
      run_command({topo(), "agent", "--config", (dir.path() / "absent.yaml").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("absent.yaml"), std::string::npos) << missing.err;
}

TEST(AgentStartup, BadRootOrBusyBusNameIsAClearFailure) {
  AgentWithFakes agent;
  // A second agent on the same bus cannot own the name, and says so.
  const auto second = run_command(
      {topo(), "agent", "--config", agent.config_file().string(), "--root", agent.root().string()},
      {"DBUS_SESSION_BUS_ADDRESS=" + agent.bus_address()});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("cannot own dev.nodetopo.Topology1 on the session bus"),
            std::string::npos)
      << second.err;
  const auto no_root = run_command({topo(), "agent", "--config", agent.config_file().string(),
                                    "--root", (agent.dir() / "no-such-root").string()},
                                   {"DBUS_SESSION_BUS_ADDRESS=" + agent.bus_address()});
  EXPECT_EQ(no_root.exit_code, 1);
  EXPECT_NE(no_root.err.find("no-such-root"), std::string::npos) << no_root.err;
  // The running agent is not disturbed.
  EXPECT_EQ(agent.client().health(), "ok");
}

// What the agent process maps: its executable's name and whether any mapped file's name
// contains `needle` ("libgrpc", "libcurl").
std::string exe_name(pid_t pid) {
  return std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe").filename();
}
bool maps(pid_t pid, const std::string& needle) {
  return read_file("/proc/" + std::to_string(pid) + "/maps").find(needle) != std::string::npos;
}

TEST(AgentStartup, RunsAsTopoAgentWithoutTheOtherCommandsLibraries) {
  // `topo agent` replaces itself with topo-agent: same pid (the fixture's Child is what systemd
  // would watch), none of gRPC, libarchive or (without the Kubernetes sink) libcurl mapped.
  AgentWithFakes agent;
  const pid_t pid = agent.agent().pid();
  EXPECT_EQ(exe_name(pid), "topo-agent");
  EXPECT_TRUE(maps(pid, "libsystemd"));  // the check itself reads the right file
  EXPECT_FALSE(maps(pid, "libgrpc"));
  EXPECT_FALSE(maps(pid, "libprotobuf"));
  EXPECT_FALSE(maps(pid, "libarchive"));
  EXPECT_FALSE(maps(pid, "libcurl"));
  EXPECT_FALSE(maps(pid, "nodetopo-kube-sink"));
  EXPECT_EQ(agent.client().health(), "ok");
}

TEST(AgentStartup, WithoutTopoAgentTopoSaysWhatIsMissingAndDoesNotStart) {
  // topo does not link the daemon (docs/agent.md): a copy of topo without topo-agent beside it
  // or in ../libexec/nodetopo cannot run the agent, and says so instead of starting anything.
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "bin");
  std::filesystem::copy_file(topo(), dir.path() / "bin/topo");
  const auto r = run_command({(dir.path() / "bin/topo").string(), "agent", "--mock", "dgx-h100"},
                             {"NODETOPO_AGENT_IN_PROCESS=1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("topo agent: cannot run topo-agent"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find((dir.path() / "bin/topo-agent").string() + ": not found"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("reinstall the nodetopo package"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nodetopo::test
