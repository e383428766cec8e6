// The agent's refresh loop end to end: hot-plug through every sink, no-change resyncs that write
// nothing, degraded discoveries, the systemd notify protocol, SIGHUP reloads and SIGTERM.
#include <algorithm>
#include <csignal>
#include <thread>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "agent_fixture.hpp"

namespace nodetopo::test {
namespace {

using namespace std::chrono_literals;

struct FileId {
  ino_t inode = 0;
  timespec mtime{};
  bool operator==(const FileId& o) const {
    return inode == o.inode && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
  }
};

FileId file_id(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {st.st_ino, st.st_mtim};
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

bool no_dot_files(const std::filesystem::path& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().front() == '.') return false;
  }
  return true;
}

TEST(AgentLifecycle, HotPlugReachesEverySinkWithinOneSecond) {
  // The four uevents below must land in one quiet window to make one discovery: 150 ms rather
  // than the fixture's 50 leaves room for a stall between two sends on a busy machine, and
  // still ends well within the second.
  AgentSettings s;
  s.debounce = "quiet: 150ms\n  max: 400ms";
  AgentWithFakes agent(s);
  agent.build_host("b", "synthetic:gpus=3,nics=3");
  auto watcher = agent.new_client();
  const std::string labels_before = read_file(agent.nfd_file());
  const std::string json_before = read_file(agent.json_file());
  const std::string dump_before = agent.client().call("GetTopology", {"json"});

  const auto plugged = std::chrono::steady_clock::now();
  agent.use_host("b");
  agent.send_uevent("add", "/devices/pci0000:00/0000:00:03.0/0000:0b:00.0", "pci");
  agent.send_uevent("add", "/devices/pci0000:00/0000:00:03.0/0000:0c:00.0", "pci");
  agent.send_uevent("add", "/devices/pci0000:00/0000:00:03.0/0000:0c:00.0/net/eth9", "net");
  agent.send_uevent("change", "/devices/system/cpu/cpu0/cpufreq", "cpufreq");  // not relevant

  ASSERT_TRUE(watcher->wait_changed(1, 1s)) << agent.log();
  ASSERT_TRUE(eventually([&] { return read_file(agent.nfd_file()) != labels_before; }, 1s));
  ASSERT_TRUE(eventually([&] { return read_file(agent.json_file()) != json_before; }, 1s));
  ASSERT_TRUE(eventually([&] { return agent.metric("nodetopo_generation ") == 2.0; }, 1s));
  EXPECT_LT(std::chrono::steady_clock::now() - plugged, 1s);

  // One burst, one discovery: a single new generation.
  EXPECT_EQ(watcher->changed().size(), 1U);
  EXPECT_EQ(watcher->changed().front().first, 2U);
  EXPECT_EQ(agent.client().generation(), 2U);
  const std::string dump_after = agent.client().call("GetTopology", {"json"});
  EXPECT_EQ(count_of(dump_after, "\"kind\": \"accelerator\""),
            count_of(dump_before, "\"kind\": \"accelerator\"") + 1);
  EXPECT_EQ(read_file(agent.json_file()), dump_after);
  EXPECT_EQ(read_file(agent.nfd_file()), agent.client().call("Export", {"labels", "nfd"}));
  EXPECT_EQ(agent.metric("nodetopo_devices{kind=\"accelerator\"}"), 3.0);
  EXPECT_EQ(agent.metric("nodetopo_uevents_received_total "), 4.0);
  EXPECT_EQ(agent.metric("nodetopo_uevents_relevant_total "), 3.0);
  EXPECT_EQ(agent.metric("nodetopo_discoveries_total{trigger=\"uevent\",result=\"published\"}"),
            1.0);
  EXPECT_TRUE(no_dot_files(agent.nfd_file().parent_path()));
}

TEST(AgentLifecycle, NoChangeResyncWritesNothing) {
  AgentSettings s;
  s.resync = "interval: 200ms\n  jitter: 0s";
  AgentWithFakes agent(s);
  auto watcher = agent.new_client();
  const FileId nfd = file_id(agent.nfd_file());
  const FileId json = file_id(agent.json_file());
  ASSERT_NE(nfd.inode, 0U);
  ASSERT_TRUE(eventually(
      [&] {
        return agent.metric(
                   "nodetopo_discoveries_total{trigger=\"resync\",result=\"unchanged\"}") >= 3.0;
      },
      3s))
      << agent.log();
  agent.send_uevent("change", "/devices/pci0000:00/0000:00:01.0", "pci");
  ASSERT_TRUE(eventually(
      [&] {
        return agent.metric(
                   "nodetopo_discoveries_total{trigger=\"uevent\",result=\"unchanged\"}") == 1.0;
      },
      2s));
  EXPECT_EQ(file_id(agent.nfd_file()), nfd);
  EXPECT_EQ(file_id(agent.json_file()), json);
  EXPECT_TRUE(watcher->changed().empty());
  EXPECT_EQ(agent.client().generation(), 1U);
  EXPECT_EQ(agent.metric("nodetopo_sink_writes_total{sink=\"nfd\"}"), 1.0);
}

TEST(AgentLifecycle, RestartWithTheSameTopologyRewritesNoFile) {
  {
    AgentWithFakes agent;
    const auto nfd = agent.nfd_file();
    const FileId before = file_id(nfd);
    // A second agent on the same files: stop the first, start another over the same paths.
    agent.agent().signal(SIGTERM);
    ASSERT_TRUE(agent.agent().wait(3s));
    Child second({(build_dir() / "topo").string(), "agent", "--config",
                  agent.config_file().string(), "--root", agent.root().string()},
                 {"DBUS_SESSION_BUS_ADDRESS=" + agent.bus_address(),
                  "NOTIFY_SOCKET=" + agent.notify().path().string()},
                 agent.dir() / "agent2.log");
    ASSERT_TRUE(agent.notify().wait_for("READY=1", 10s)) << read_file(agent.dir() / "agent2.log");
    EXPECT_EQ(file_id(nfd), before);
    second.signal(SIGTERM);
    EXPECT_TRUE(second.wait(3s));
  }
}

TEST(AgentLifecycle, DegradedProbeKeepsTheLastGoodResult) {
  AgentWithFakes agent;
  // The same host with its network class directory gone: the net probe becomes unavailable.
  const auto broken = agent.build_host("c", "synthetic:gpus=2,nics=2");
  std::filesystem::remove_all(broken / "sys/class/net");
  const std::string labels = read_file(agent.nfd_file());
  const FileId nfd = file_id(agent.nfd_file());
  const std::string dump = agent.client().call("GetTopology", {"json"});

  agent.use_host("c");
  EXPECT_EQ(agent.client().refresh(), 1U);
  EXPECT_EQ(agent.client().generation(), 1U);
  const std::string health = agent.client().health();
  EXPECT_EQ(health.rfind("degraded: probe net is unavailable", 0), 0U) << health;
  EXPECT_NE(health.find("generation 1 kept"), std::string::npos) << health;
  EXPECT_EQ(agent.client().call("GetTopology", {"json"}), dump);
  EXPECT_EQ(file_id(agent.nfd_file()), nfd);
  EXPECT_EQ(agent.metric("nodetopo_degraded "), 1.0);
  EXPECT_EQ(agent.metric("nodetopo_probe_status{probe=\"net\",status=\"unavailable\"}"), 1.0);
  EXPECT_EQ(agent.metric("nodetopo_discoveries_total{trigger=\"dbus\",result=\"degraded\"}"), 1.0);
  const auto [status, body] = agent.http_get("/readyz");
  EXPECT_EQ(status, 200) << body;  // the published topology is still good and published
  EXPECT_NE(body.find("degraded"), std::string::npos) << body;

  // The subsystem comes back: healthy again, nothing republished (nothing changed).
  agent.use_host("a");
  EXPECT_EQ(agent.client().refresh(), 1U);
  EXPECT_EQ(agent.client().health(), "ok");
  EXPECT_EQ(read_file(agent.nfd_file()), labels);
  EXPECT_EQ(agent.metric("nodetopo_degraded "), 0.0);
}

TEST(AgentLifecycle, DeviceSkippedWithAWarningKeepsTheLastGoodResult) {
  AgentWithFakes agent;
  // The same host with one NIC's device directory gone while its class link stays: the net
  // probe skips it with a warning, one net device fewer.
  const auto broken = agent.build_host("d", "synthetic:gpus=2,nics=2");
  std::filesystem::path victim;
  for (const auto& e : std::filesystem::directory_iterator(broken / "sys/class/net")) {
    if (e.path().filename() != "lo") victim = e.path();
  }
  ASSERT_FALSE(victim.empty());
  std::filesystem::remove_all(victim.parent_path() / std::filesystem::read_symlink(victim));
  const std::string dump = agent.client().call("GetTopology", {"json"});

  agent.use_host("d");
  EXPECT_EQ(agent.client().refresh(), 1U);
  const std::string health = agent.client().health();
  EXPECT_NE(health.find("fewer devices while probes report new warnings (net_device 3 -> 2)"),
            std::string::npos)
      << health;
  EXPECT_EQ(agent.client().call("GetTopology", {"json"}), dump);
  EXPECT_EQ(agent.metric("nodetopo_probe_status{probe=\"net\",status=\"warnings\"}"), 1.0);
}

TEST(AgentLifecycle, RealRemovalIsPublished) {
  AgentSettings s;
  s.profile = "synthetic:gpus=3,nics=3";
  AgentWithFakes agent(s);
  agent.build_host("smaller", "synthetic:gpus=2,nics=2");
  agent.use_host("smaller");
  agent.send_uevent("remove", "/devices/pci0000:00/0000:00:03.0/0000:0b:00.0", "pci");
  ASSERT_TRUE(eventually([&] { return agent.client().generation() == 2U; }, 1s)) << agent.log();
  EXPECT_EQ(agent.client().health(), "ok");
  EXPECT_EQ(agent.metric("nodetopo_devices{kind=\"accelerator\"}"), 2.0);
}

TEST(AgentLifecycle, NotifyProtocolInOrder) {
  AgentSettings s;
  s.env = {"WATCHDOG_USEC=200000"};
  s.wait_ready = false;
  AgentWithFakes agent(s);
  NotifySocket& n = agent.notify();
  const auto ready = n.wait_for("READY=1", 10s);
  ASSERT_TRUE(ready) << agent.log();
  EXPECT_NE(ready->find("STATUS=Generation 1, shape "), std::string::npos) << *ready;
  EXPECT_NE(ready->find("2 accelerators"), std::string::npos) << *ready;
  ASSERT_TRUE(n.wait_for("WATCHDOG=1", 1s));
  agent.agent().signal(SIGHUP);
  const auto reloading = n.wait_for("RELOADING=1", 2s);
  ASSERT_TRUE(reloading);
  EXPECT_NE(reloading->find("MONOTONIC_USEC="), std::string::npos);
  ASSERT_TRUE(n.wait_for("READY=1", 2s));
  agent.agent().signal(SIGTERM);
  ASSERT_TRUE(n.wait_for("STOPPING=1", 2s));
  ASSERT_TRUE(agent.agent().wait(2s));

  // The order over everything received: a STATUS= line before READY (the first discovery is
  // running), then READY, WATCHDOG, RELOADING, READY, STOPPING.
  const std::vector<std::string> received = n.received();
  std::vector<std::string> order;
  for (const std::string& m : received) {
    for (const char* key : {"READY=1", "WATCHDOG=1", "RELOADING=1", "STOPPING=1"}) {
      if (m.find(key) != std::string::npos && (order.empty() || order.back() != key)) {
        order.emplace_back(key);
      }
    }
  }
  const auto first_ready = std::find_if(received.begin(), received.end(), [](const std::string& m) {
    return m.find("READY=1") != std::string::npos;
  });
  EXPECT_TRUE(std::any_of(received.cbegin(), first_ready, [](const std::string& m) {
    return m.find("STATUS=Running the first discovery") != std::string::npos;
  }));
  const std::vector<std::string> expected = {"READY=1", "WATCHDOG=1", "RELOADING=1", "READY=1",
                                             "STOPPING=1"};
  std::vector<std::string> seen;  // watchdog pings also come between the others: keep firsts
  for (const auto& o : order) {
    if (seen.size() < expected.size() && o == expected[seen.size()]) seen.push_back(o);
  }
  EXPECT_EQ(seen, expected);
}

TEST(AgentLifecycle, SighupReloadsAGoodConfigAndRefusesABadOne) {
  AgentWithFakes agent;
  // Good: the JSON sink moves to a new file, which the reload writes.
  const auto moved = agent.dir() / "out/moved.json";
  std::string text = read_file(agent.config_file());
  text.replace(text.find(agent.json_file().string()), agent.json_file().string().size(),
               moved.string());
  write_file(agent.config_file(), text);
  agent.agent().signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(moved); }, 2s)) << agent.log();
  EXPECT_EQ(read_file(moved), agent.client().call("GetTopology", {"json"}));
  EXPECT_EQ(agent.client().health(), "ok");

  // Bad: an unknown key. The running config stays, health and the log say why.
  write_file(agent.config_file(), text + "resync_intervall: 5m\n");
  agent.agent().signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return agent.client().health() != "ok"; }, 2s));
  const std::string health = agent.client().health();
  EXPECT_NE(health.find("config reload refused"), std::string::npos) << health;
  EXPECT_NE(health.find("resync_intervall: unknown key"), std::string::npos) << health;
  EXPECT_NE(health.find(agent.config_file().string()), std::string::npos) << health;
  EXPECT_EQ(agent.metric("nodetopo_config_reload_failures_total "), 1.0);
  EXPECT_EQ(agent.client().call("GetTopology", {"json"}), read_file(moved));

  // Fixed again: healthy.
  write_file(agent.config_file(), text);
  agent.agent().signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return agent.client().health() == "ok"; }, 2s));
}

TEST(AgentLifecycle, SigtermDuringADiscoveryExitsWithinTwoSecondsAndLeavesNoPartialFile) {
  AgentSettings s;
  s.env = {"NODETOPO_AGENT_TEST_DISCOVERY_DELAY_MS=400"};
  AgentWithFakes agent(s);
  agent.build_host("b", "synthetic:gpus=3,nics=3");
  const std::string labels = read_file(agent.nfd_file());
  agent.use_host("b");
  agent.send_uevent("add", "/devices/pci0000:00/0000:00:03.0/0000:0b:00.0", "pci");
  std::this_thread::sleep_for(200ms);  // debounce 50 ms, then the discovery sleeps 400 ms
  const auto stopped = std::chrono::steady_clock::now();
  agent.agent().signal(SIGTERM);
  const auto status = agent.agent().wait(2s);
  ASSERT_TRUE(status) << "still running 2 s after SIGTERM\n" << agent.log();
  EXPECT_LT(std::chrono::steady_clock::now() - stopped, 2s);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << *status;
  EXPECT_EQ(read_file(agent.nfd_file()), labels);
  EXPECT_TRUE(no_dot_files(agent.nfd_file().parent_path()));
  EXPECT_TRUE(no_dot_files(agent.json_file().parent_path()));
}

TEST(AgentLifecycle, HealthEndpoints) {
  AgentWithFakes agent;
  EXPECT_EQ(agent.http_get("/healthz"), (std::pair<int, std::string>{200, "ok\n"}));
  EXPECT_EQ(agent.http_get("/readyz"), (std::pair<int, std::string>{200, "ready: ok\n"}));
  EXPECT_EQ(agent.http_get("/nothing").first, 404);
}

TEST(AgentLifecycle, FailingSinkDoesNotBlockTheOthers) {
  // The NFD directory does not exist: that sink fails, the JSON file and D-Bus still work.
  AgentSettings s;
  s.extra_yaml = "";
  AgentWithFakes agent(s);
  std::string text = read_file(agent.config_file());
  const std::string nfd = agent.nfd_file().string();
  text.replace(text.find(nfd), nfd.size(), (agent.dir() / "missing/dir/nodetopo").string());
  write_file(agent.config_file(), text);
  agent.agent().signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return agent.client().health() != "ok"; }, 2s)) << agent.log();
  EXPECT_NE(agent.client().health().find("sink nfd: "), std::string::npos)
      << agent.client().health();
  EXPECT_NE(agent.client().health().find("missing/dir"), std::string::npos);
  EXPECT_EQ(agent.http_get("/readyz").first, 503);
  EXPECT_EQ(agent.metric("nodetopo_sink_up{sink=\"nfd\"}"), 0.0);
  EXPECT_EQ(agent.metric("nodetopo_sink_up{sink=\"json\"}"), 1.0);

  agent.build_host("b", "synthetic:gpus=3,nics=3");
  auto watcher = agent.new_client();
  agent.use_host("b");
  agent.send_uevent("add", "/devices/pci0000:00/0000:00:03.0/0000:0b:00.0", "pci");
  ASSERT_TRUE(watcher->wait_changed(1, 1s));
  EXPECT_EQ(read_file(agent.json_file()), agent.client().call("GetTopology", {"json"}));
}

}  // namespace
}  // namespace nodetopo::test
