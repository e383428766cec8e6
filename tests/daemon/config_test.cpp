// The strict agent config reader and `topo agent --check-config`.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nodetopo/daemon/config.hpp>

#include "test_support.hpp"

namespace nodetopo::test {
namespace {

using daemon::parse_agent_config;
using namespace std::chrono_literals;

std::string error_of(const std::string& yaml) {
  auto r = parse_agent_config(yaml, "agent.yaml");
  return r ? std::string("accepted") : r.error().describe();
}

TEST(AgentConfig, EmptyFileGivesTheDocumentedDefaults) {
  auto r = parse_agent_config("", "agent.yaml");
  ASSERT_TRUE(r) << r.error().describe();
  const daemon::AgentConfig& c = r.value();
  EXPECT_EQ(c.host_root, "");
  EXPECT_EQ(c.node_name, "");
  EXPECT_EQ(c.resync_interval, 5min);
  EXPECT_EQ(c.resync_jitter, 30s);
  EXPECT_EQ(c.debounce, 250ms);
  EXPECT_EQ(c.debounce_max, 2s);
  EXPECT_EQ(c.bus, daemon::BusKind::kSystem);
  EXPECT_EQ(c.http_listen, "127.0.0.1:9464");
  EXPECT_EQ(c.uevent_source, daemon::UeventSourceKind::kKernel);
  EXPECT_TRUE(c.nfd_enabled);
  EXPECT_EQ(c.nfd_path, "/etc/kubernetes/node-feature-discovery/features.d/nodetopo");
  EXPECT_FALSE(c.json_enabled);
  EXPECT_EQ(c.json_path, "/run/nodetopo/topology.json");
  EXPECT_TRUE(c.dbus_signal_enabled);
  EXPECT_EQ(c.log_level, "info");
  EXPECT_EQ(c.log_format, "text");
}

TEST(AgentConfig, EveryKeyIsRead) {
  auto r = parse_agent_config(R"(
host_root: /host
node_name: gpu-node-7
resync: {interval: 10m, jitter: 1m}
debounce: {quiet: 250ms, max: 2s}
dbus: {bus: session}
http: {listen: "[::1]:9100"}
uevents: {source: socket, socket: /run/nodetopo/uevents.sock}
sinks:
  nfd: {enabled: false, path: /tmp/features}
  json: {enabled: true, path: /tmp/topo.json}
  dbus: {enabled: false}
log: {level: debug, format: json}
)",
                              "agent.yaml");
  ASSERT_TRUE(r) << r.error().describe();
  const daemon::AgentConfig& c = r.value();
  EXPECT_EQ(c.host_root, "/host");
  EXPECT_EQ(c.node_name, "gpu-node-7");
  EXPECT_EQ(c.resync_interval, 10min);
  EXPECT_EQ(c.resync_jitter, 1min);
  EXPECT_EQ(c.debounce, 250ms);
  EXPECT_EQ(c.debounce_max, 2s);
  EXPECT_EQ(c.bus, daemon::BusKind::kSession);
  EXPECT_EQ(c.http_listen, "[::1]:9100");
  EXPECT_EQ(c.uevent_source, daemon::UeventSourceKind::kSocket);
  EXPECT_EQ(c.uevent_socket, "/run/nodetopo/uevents.sock");
  EXPECT_FALSE(c.nfd_enabled);
  EXPECT_EQ(c.nfd_path, "/tmp/features");
  EXPECT_TRUE(c.json_enabled);
  EXPECT_FALSE(c.dbus_signal_enabled);
  EXPECT_EQ(c.log_format, "json");
}

TEST(AgentConfig, UnknownKeysAreRejectedWithTheirPath) {
  const std::string top = error_of("resync_interval: 5m\n");
  EXPECT_NE(top.find("agent.yaml: line 1"), std::string::npos) << top;
  EXPECT_NE(top.find("resync_interval: unknown key (expected one of: dbus, debounce, host_root, "
                     "http, instance, kubernetes, log, node_name, resync, sinks, uevents)"),
            std::string::npos)
      << top;
  const std::string nested = error_of("sinks:\n  nfd:\n    pth: /x\n");
  EXPECT_NE(nested.find("line 3: sinks.nfd.pth: unknown key"), std::string::npos) << nested;
  EXPECT_NE(nested.find("expected one of: enabled, path"), std::string::npos) << nested;
  // Duplicate keys are refused too (yaml-cpp alone would keep the first one silently).
  const std::string twice = error_of("log:\n  level: info\n  level: debug\n");
  EXPECT_NE(twice.find("line 3: log.level: duplicate key"), std::string::npos) << twice;
}

TEST(AgentConfig, KubernetesKeysHaveDefaultsAndAreCheckedStrictly) {
  auto defaults = parse_agent_config("", "agent.yaml");
  ASSERT_TRUE(defaults) << defaults.error().describe();
  EXPECT_FALSE(defaults->kubernetes.enabled);
  EXPECT_EQ(defaults->kubernetes.driver, "nodetopo.dev");
  EXPECT_EQ(defaults->kubernetes.labels, "auto");
  EXPECT_TRUE(defaults->kubernetes.slices);
  EXPECT_TRUE(defaults->kubernetes.nrt);
  auto set = parse_agent_config(
      "kubernetes:\n  enabled: true\n  kubeconfig: /etc/kc\n  context: c1\n  driver: "
      "gpu.example.com\n"
      "  labels: node\n  slices: false\n  nrt: false\n  nodefeature_namespace: nfd\n",
      "agent.yaml");
  ASSERT_TRUE(set) << set.error().describe();
  EXPECT_TRUE(set->kubernetes.enabled);
  EXPECT_EQ(set->kubernetes.kubeconfig, "/etc/kc");
  EXPECT_EQ(set->kubernetes.context, "c1");
  EXPECT_EQ(set->kubernetes.driver, "gpu.example.com");
  EXPECT_EQ(set->kubernetes.labels, "node");
  EXPECT_FALSE(set->kubernetes.slices);
  EXPECT_FALSE(set->kubernetes.nrt);
  EXPECT_EQ(set->kubernetes.nodefeature_namespace, "nfd");
  EXPECT_NE(error_of("kubernetes: {enabled: yes please}\n").find("kubernetes.enabled"),
            std::string::npos);
  EXPECT_NE(
      error_of("kubernetes: {labels: everywhere}\n").find("kubernetes.labels: expected one of"),
      std::string::npos);
  EXPECT_NE(error_of("kubernetes: {driver: Not_A_Name}\n").find("kubernetes.driver"),
            std::string::npos);
  EXPECT_NE(error_of("kubernetes: {nodefeature_namespace: A.B}\n")
                .find("kubernetes.nodefeature_namespace"),
            std::string::npos);
  EXPECT_NE(error_of("kubernetes: {colour: blue}\n").find("kubernetes.colour: unknown key"),
            std::string::npos)
      << error_of("kubernetes: {colour: blue}\n");
  EXPECT_NE(error_of("kubernetes: {kubeconfig: relative}\n").find("kubernetes.kubeconfig"),
            std::string::npos);
}

// sinks.hami and instance: defaults, every key read, strict values, and the bridge refused
// without the Kubernetes connection it writes through.
TEST(AgentConfig, HamiAndInstanceKeysHaveDefaultsAndAreCheckedStrictly) {
  auto d = parse_agent_config("", "agent.yaml");
  ASSERT_TRUE(d) << d.error().describe();
  EXPECT_FALSE(d->hami.enabled);
  EXPECT_EQ(d->hami.options.split_count, 10U);
  EXPECT_EQ(d->hami.options.memory_scaling, 1.0);
  EXPECT_EQ(d->hami.options.core_scaling, 1.0);
  EXPECT_EQ(d->hami.options.mode, "hami-core");
  EXPECT_EQ(d->hami.options.resource_name, "nvidia.com/gpu");
  EXPECT_TRUE(d->hami.options.score);
  EXPECT_EQ(d->hami.poll, std::chrono::seconds(15));
  EXPECT_TRUE(d->instance.empty());
  auto set = parse_agent_config(
      "kubernetes: {enabled: true}\n"
      "sinks:\n  hami: {enabled: true, split_count: 4, memory_scaling: 1.5, core_scaling: 0.5,\n"
      "    mode: mps, resource_name: example.com/vgpu, score: false, poll: 2s}\n"
      "instance: {type: g4dn.xlarge, capacity_type: spot, reservation: cr-1}\n",
      "agent.yaml");
  ASSERT_TRUE(set) << set.error().describe();
  EXPECT_TRUE(set->hami.enabled);
  EXPECT_EQ(set->hami.options.split_count, 4U);
  EXPECT_EQ(set->hami.options.memory_scaling, 1.5);
  EXPECT_EQ(set->hami.options.core_scaling, 0.5);
  EXPECT_EQ(set->hami.options.mode, "mps");
  EXPECT_EQ(set->hami.options.resource_name, "example.com/vgpu");
  EXPECT_FALSE(set->hami.options.score);
  EXPECT_EQ(set->hami.poll, std::chrono::seconds(2));
  EXPECT_EQ(set->instance.at("instance-type"), "g4dn.xlarge");
  EXPECT_EQ(set->instance.at("capacity-type"), "spot");
  EXPECT_EQ(set->instance.at("reservation"), "cr-1");
  const std::string k = "kubernetes: {enabled: true}\n";
  for (const auto& [text, key] : std::vector<std::pair<std::string, std::string>>{
           {k + "sinks: {hami: {split_count: 0}}\n", "sinks.hami.split_count"},
           {k + "sinks: {hami: {split_count: 5000}}\n", "sinks.hami.split_count"},
           {k + "sinks: {hami: {memory_scaling: 0}}\n", "sinks.hami.memory_scaling"},
           {k + "sinks: {hami: {memory_scaling: lots}}\n", "sinks.hami.memory_scaling"},
           {k + "sinks: {hami: {core_scaling: -1}}\n", "sinks.hami.core_scaling"},
           {k + "sinks: {hami: {mode: mig}}\n", "sinks.hami.mode"},
           {k + "sinks: {hami: {resource_name: \"not a name\"}}\n", "sinks.hami.resource_name"},
           {k + "sinks: {hami: {poll: 2m}}\n", "sinks.hami.poll"},
           {k + "sinks: {hami: {splitcount: 3}}\n", "sinks.hami.splitcount: unknown key"},
           {"instance: {capacity_type: cheap}\n", "instance.capacity_type"},
           {"instance: {type: \"two words\"}\n", "instance.type"},
           {"instance: {zone: a}\n", "instance.zone: unknown key"},
           {"sinks: {hami: {enabled: true}}\n", "sinks.hami.enabled"}}) {
    const std::string e = error_of(text);
    EXPECT_NE(e.find(key), std::string::npos) << text << " -> " << e;
  }
  EXPECT_NE(error_of("sinks: {hami: {enabled: true}}\n").find("kubernetes.enabled: true"),
            std::string::npos);
}

TEST(AgentConfig, BadValuesAreRejectedWithTheReason) {
  EXPECT_NE(error_of("dbus: {bus: user}\n").find("dbus.bus: expected one of system, session, none"),
            std::string::npos);
  EXPECT_NE(error_of("resync: {interval: soon}\n").find("resync.interval: expected a duration"),
            std::string::npos);
  EXPECT_NE(error_of("resync: {interval: 10ms}\n").find("resync.interval: must be between"),
            std::string::npos);
  EXPECT_NE(error_of("resync: {interval: 1m, jitter: 40s}\n")
                .find("resync.jitter: must be less than half of resync.interval"),
            std::string::npos);
  EXPECT_NE(error_of("http: {listen: localhost:9464}\n")
                .find("http.listen: \"localhost\" is not a numeric IPv4 address"),
            std::string::npos);
  EXPECT_NE(error_of("http: {listen: \"127.0.0.1:99999\"}\n").find("http.listen: port"),
            std::string::npos);
  EXPECT_NE(error_of("host_root: relative/dir\n").find("host_root: expected an absolute path"),
            std::string::npos);
  EXPECT_NE(error_of("sinks: {json: {enabled: yes please}}\n")
                .find("sinks.json.enabled: expected true or false"),
            std::string::npos);
  EXPECT_NE(error_of("uevents: {source: socket}\n").find("uevents.socket: required"),
            std::string::npos);
  EXPECT_NE(error_of("debounce: {quiet: 2s, max: 1s}\n").find("debounce.max"), std::string::npos);
  EXPECT_NE(error_of("log: [text]\n").find("log: expected a mapping"), std::string::npos);
  EXPECT_NE(error_of("- a\n- b\n").find("(top level): expected a mapping"), std::string::npos);
  EXPECT_NE(error_of("resync: {interval: [1\n").find("not valid YAML"), std::string::npos);
}

TEST(AgentConfig, DurationsAndAddresses) {
  EXPECT_EQ(daemon::parse_duration("250ms"), 250ms);
  EXPECT_EQ(daemon::parse_duration("1.5s"), 1500ms);
  EXPECT_EQ(daemon::parse_duration("2"), 2s);
  EXPECT_EQ(daemon::parse_duration("1h"), 1h);
  EXPECT_FALSE(daemon::parse_duration("1d"));
  EXPECT_FALSE(daemon::parse_duration("-1s"));
  EXPECT_FALSE(daemon::parse_duration(""));
  EXPECT_EQ(daemon::check_listen_address("0.0.0.0:80"), "");
  EXPECT_EQ(daemon::check_listen_address("[::]:80"), "");
  EXPECT_NE(daemon::check_listen_address("9464"), "");
}

// A FIFO at the config path would block the agent's start and every SIGHUP; /dev/zero would grow
// it without bound: only a bounded regular file is read, anything else is refused by name.
TEST(AgentConfig, OnlyABoundedRegularFileIsRead) {
  TempDir d;
  const auto fifo = d.path() / "agent.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo.string(), std::string("/dev/zero"), d.path().string()}) {
    for (const bool must_exist : {true, false}) {
      auto r = daemon::load_agent_config(path, must_exist);
      ASSERT_FALSE(r) << path;
      EXPECT_EQ(r.error().describe(), path + ": the agent config is not a regular file: not read");
    }
  }
  const auto huge = d.path() / "huge.yaml";
  { std::ofstream(huge) << "log: {level: info}\n"; }
  std::filesystem::resize_file(huge, std::uintmax_t{2} << 20);
  auto r = daemon::load_agent_config(huge.string(), true);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().describe().find("larger than 1 MiB"), std::string::npos);
  write_file(d.path() / "ok.yaml", "log: {level: debug}\n");
  auto ok = daemon::load_agent_config((d.path() / "ok.yaml").string(), true);
  ASSERT_TRUE(ok) << ok.error().describe();
  EXPECT_EQ(ok->log_level, "debug");
  EXPECT_TRUE(daemon::load_agent_config((d.path() / "absent.yaml").string(), false));
}

// The shipped example parses, and with every line uncommented gives exactly the defaults (the
// example's values cannot drift from the code's).
TEST(AgentConfig, ShippedExampleHoldsTheDefaults) {
  const std::string example = read_file(source_dir() / "agent/daemon/agent.yaml.example");
  ASSERT_FALSE(example.empty());
  ASSERT_TRUE(parse_agent_config(example, "agent.yaml.example"));
  std::string uncommented;
  std::istringstream lines(example);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#host_root", 0) == 0 || line.rfind("#node_name", 0) == 0) continue;
    if (line.rfind("#", 0) == 0 && line.size() > 1 && line[1] != ' ') line.erase(0, 1);
    uncommented += line + "\n";
  }
  auto all = parse_agent_config(uncommented, "uncommented example");
  ASSERT_TRUE(all) << all.error().describe() << "\n" << uncommented;
  auto defaults = parse_agent_config("", "empty");
  ASSERT_TRUE(defaults);
  const auto& a = all.value();
  const auto& d = defaults.value();
  EXPECT_EQ(a.resync_interval, d.resync_interval);
  EXPECT_EQ(a.resync_jitter, d.resync_jitter);
  EXPECT_EQ(a.debounce, d.debounce);
  EXPECT_EQ(a.debounce_max, d.debounce_max);
  EXPECT_EQ(a.bus, d.bus);
  EXPECT_EQ(a.http_listen, d.http_listen);
  EXPECT_EQ(a.uevent_source, d.uevent_source);
  EXPECT_EQ(a.nfd_enabled, d.nfd_enabled);
  EXPECT_EQ(a.nfd_path, d.nfd_path);
  EXPECT_EQ(a.json_enabled, d.json_enabled);
  EXPECT_EQ(a.json_path, d.json_path);
  EXPECT_EQ(a.dbus_signal_enabled, d.dbus_signal_enabled);
  EXPECT_EQ(a.log_level, d.log_level);
  EXPECT_EQ(a.log_format, d.log_format);
  EXPECT_EQ(a.kubernetes.enabled, d.kubernetes.enabled);
  EXPECT_EQ(a.kubernetes.kubeconfig, d.kubernetes.kubeconfig);
  EXPECT_EQ(a.kubernetes.context, d.kubernetes.context);
  EXPECT_EQ(a.kubernetes.driver, d.kubernetes.driver);
  EXPECT_EQ(a.kubernetes.labels, d.kubernetes.labels);
  EXPECT_EQ(a.kubernetes.slices, d.kubernetes.slices);
  EXPECT_EQ(a.kubernetes.nrt, d.kubernetes.nrt);
  EXPECT_EQ(a.kubernetes.nodefeature_namespace, d.kubernetes.nodefeature_namespace);
  EXPECT_TRUE(a.hami == d.hami);
  EXPECT_EQ(a.instance, d.instance);
}

// Every key the reader accepts is documented in docs/agent.md's table.
TEST(AgentConfig, EveryKeyIsDocumented) {
  const std::string doc = read_file(source_dir() / "docs/agent.md");
  for (const char* key : {"kubernetes.enabled",
                          "kubernetes.kubeconfig",
                          "kubernetes.context",
                          "kubernetes.driver",
                          "kubernetes.labels",
                          "kubernetes.slices",
                          "kubernetes.nrt",
                          "kubernetes.nodefeature_namespace",
                          "host_root",
                          "node_name",
                          "resync.interval",
                          "resync.jitter",
                          "debounce.quiet",
                          "debounce.max",
                          "dbus.bus",
                          "http.listen",
                          "uevents.source",
                          "uevents.socket",
                          "sinks.nfd.enabled",
                          "sinks.nfd.path",
                          "sinks.json.enabled",
                          "sinks.json.path",
                          "sinks.dbus.enabled",
                          "log.level",
                          "log.format",
                          "sinks.hami.enabled",
                          "sinks.hami.split_count",
                          "sinks.hami.memory_scaling",
                          "sinks.hami.core_scaling",
                          "sinks.hami.mode",
                          "sinks.hami.resource_name",
                          "sinks.hami.score",
                          "sinks.hami.poll",
                          "instance.type",
                          "instance.capacity_type",
                          "instance.reservation"}) {
    EXPECT_NE(doc.find(std::string("| `") + key + "` |"), std::string::npos) << key;
  }
}

TEST(AgentConfig, CheckConfigCommand) {
  TempDir dir;
  write_file(dir.path() / "good.yaml", "resync: {interval: 2m}\n");
  write_file(dir.path() / "bad.yaml", "resync: {interval: 2m}\nlog: {formats: json}\n");
  const auto topo = (build_dir() / "topo").string();
  const auto good =
      run_command({topo, "agent", "--check-config", (dir.path() / "good.yaml").string()});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find("good.yaml: ok"), std::string::npos);
  const auto bad =
      run_command({topo, "agent", "--check-config", (dir.path() / "bad.yaml").string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("bad.yaml: line 2: log.formats: unknown key"), std::string::npos)
      << bad.err;
  const auto missing =
      run_command({topo, "agent", "--check-config", (dir.path() / "none.yaml").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("none.yaml"), std::string::npos) << missing.err;
  const auto usage = run_command({topo, "agent", "--root", "/", "--mock", "dgx-h100"});
  EXPECT_EQ(usage.exit_code, 2);
}

}  // namespace
}  // namespace nodetopo::test
