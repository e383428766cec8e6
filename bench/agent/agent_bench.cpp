// Measures a running `topo agent` on a mock host (docs/performance.md, "topo agent"):
//   idle    RSS, CPU time and wake-ups (context switches of all its threads) over an idle period
//   latency uevent -> every sink updated (the Changed signal is sent after the files), p50/p99,
//           with the default debounce (250 ms quiet) and with a short one (50 ms)
//   storm   GetTopology("json") latency while another client calls Refresh() back to back and
//           uevents keep arriving, against the same call on an idle agent
// It drives the agent through the tests' AgentWithFakes fixture (private bus, uevent socket).
//
//   kube    the idle measure again with the Kubernetes sink on, against the fake API server
//           (tests/fakes/kube-apiserver; bookmarks every 60 s as a real one sends them)
//
//   nodetopo_agent_bench [idle_seconds=60] [latency_runs=40] [storm_calls=400]
//   [kube_idle_seconds=0]
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "agent_fixture.hpp"
#include "fake_apiserver.hpp"

using namespace nodetopo::test;
using Clock = std::chrono::steady_clock;

namespace {

struct ProcSample {
  double rss_mib = 0;
  double hwm_mib = 0;
  double cpu_ms = 0;
  long switches = 0;  // voluntary + involuntary, all threads
  int threads = 0;
  std::map<long, long> per_thread;  ///< tid -> its switches (which thread wakes, and how often)
};

long field(const std::string& status, const std::string& key) {
  const auto at = status.find(key);
  if (at == std::string::npos) return 0;
  return std::stol(status.substr(at + key.size()));
}

ProcSample sample(pid_t pid) {
  ProcSample s;
  const std::string base = "/proc/" + std::to_string(pid);
  const std::string status = read_file(base + "/status");
  s.rss_mib = static_cast<double>(field(status, "VmRSS:")) / 1024.0;
  s.hwm_mib = static_cast<double>(field(status, "VmHWM:")) / 1024.0;
  s.threads = static_cast<int>(field(status, "Threads:"));
  for (const auto& task : std::filesystem::directory_iterator(base + "/task")) {
    const std::string t = read_file(task.path() / "status");
    const long n = field(t, "voluntary_ctxt_switches:") + field(t, "nonvoluntary_ctxt_switches:");
    s.switches += n;
    s.per_thread[std::stol(task.path().filename().string())] = n;
  }
  // utime and stime are fields 14 and 15 of stat, after the parenthesised command name.
  const std::string stat = read_file(base + "/stat");
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string f;
  long utime = 0;
  long stime = 0;
  for (int i = 3; i <= 15 && rest >> f; ++i) {
    if (i == 14) utime = std::stol(f);
    if (i == 15) stime = std::stol(f);
  }
  s.cpu_ms =
      static_cast<double>(utime + stime) * 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  return s;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// The agent's /proc/PID/smaps_rollup lines that say where its RSS is: anonymous (its own heap
// and stacks) against file pages (the mapped executable and libraries).
void print_rollup(pid_t pid) {
  std::istringstream in(read_file("/proc/" + std::to_string(pid) + "/smaps_rollup"));
  std::string line;
  std::string out;
  while (std::getline(in, line)) {
    for (const char* key : {"Rss:", "Pss:", "Anonymous:", "Shared_Clean:", "Private_Clean:"}) {
      if (line.rfind(key, 0) != 0) continue;
      std::istringstream f(line.substr(std::string(key).size()));
      long kb = 0;
      f >> kb;
      char part[64];
      std::snprintf(part, sizeof part, "%s%s %.1f MiB", out.empty() ? "" : ", ", key,
                    static_cast<double>(kb) / 1024.0);
      out += part;
    }
  }
  std::printf("  smaps_rollup: %s\n", out.c_str());
}

void measure_idle(AgentWithFakes& agent, int seconds, const char* label) {
  std::this_thread::sleep_for(std::chrono::seconds(2));  // let the first publish settle
  const ProcSample a = sample(agent.agent().pid());
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  const ProcSample b = sample(agent.agent().pid());
  const double minutes = seconds / 60.0;
  std::printf(
      "%s: %d s, %d threads, RSS %.1f MiB (peak %.1f MiB), CPU %.1f ms, %.1f wake-ups/min "
      "(%ld context switches)\n",
      label, seconds, b.threads, b.rss_mib, b.hwm_mib, b.cpu_ms - a.cpu_ms,
      static_cast<double>(b.switches - a.switches) / minutes, b.switches - a.switches);
  // Threads in creation order (tids grow): the loop (the pid itself), the discovery worker, then
  // the HTTP thread and, with the Kubernetes sink, the publisher.
  std::printf("  context switches per thread (tid order):");
  for (const auto& [tid, n] : b.per_thread) {
    const auto before = a.per_thread.find(tid);
    std::printf(" %ld", n - (before == a.per_thread.end() ? 0 : before->second));
  }
  std::printf("\n");
  print_rollup(agent.agent().pid());
  // After one more discovery (what every resync does): the RSS a long-running agent keeps.
  agent.client().refresh();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const ProcSample c = sample(agent.agent().pid());
  std::printf("  after one more discovery: RSS %.1f MiB (peak %.1f MiB)\n", c.rss_mib, c.hwm_mib);
  print_rollup(agent.agent().pid());
}

AgentSettings idle_settings() {
  AgentSettings s;
  s.resync = "interval: 5m\n  jitter: 30s";
  s.debounce = "quiet: 250ms\n  max: 2s";
  s.log_level = "info";
  return s;
}

void idle(int seconds) {
  AgentWithFakes agent(idle_settings());
  measure_idle(agent, seconds, "idle");
}

void idle_kube(int seconds) {
  FakeOptions fo;
  fo.crds = {"nfd"};
  fo.bookmark_ms = 60'000;
  FakeApiServer fake(fo);
  AgentSettings s = idle_settings();
  const auto kubeconfig = fake.write_kubeconfig("kc", "    token: token-1\n");
  s.extra_yaml =
      "node_name: node-a\nkubernetes:\n  enabled: true\n  kubeconfig: " + kubeconfig.string() +
      "\n  labels: nodefeature\n";
  AgentWithFakes agent(s);
  if (!eventually([&] { return !fake.objects("resourceslices").empty(); },
                  std::chrono::seconds(20))) {
    std::fprintf(stderr, "the agent published no ResourceSlice:\n%s\n", agent.log().c_str());
    return;
  }
  fake.reset_stats();
  measure_idle(agent, seconds, "idle, Kubernetes sink on");
  std::printf("  API requests meanwhile:");
  for (const auto& [k, n] : fake.stats())
    std::printf(" %s: %d;", k.c_str(), n);
  std::printf("\n");
}

void latency(int runs, const std::string& debounce, const char* label) {
  AgentSettings s;
  s.debounce = debounce;
  s.log_level = std::getenv("NODETOPO_BENCH_DEBUG") != nullptr ? "debug" : "info";
  AgentWithFakes agent(s);
  agent.build_host("b", "synthetic:gpus=3,nics=3");
  auto watcher = agent.new_client();
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    agent.use_host(i % 2 == 0 ? "b" : "a");
    const auto t0 = Clock::now();
    agent.send_uevent("add", "/devices/pci0000:00/0000:00:03.0/0000:0b:00.0", "pci");
    const std::size_t want = static_cast<std::size_t>(i) + 1;
    while (watcher->changed().size() < want) {
      if (Clock::now() - t0 > std::chrono::seconds(10)) {
        std::fprintf(
            stderr,
            "no Changed signal within 10 s: run %d, %zu signals seen, agent at generation %llu\n",
            i, watcher->changed().size(),
            static_cast<unsigned long long>(agent.client().generation()));
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::printf("uevent -> sinks (%s): %d runs, p50 %.0f ms, p99 %.0f ms, max %.0f ms\n", label, runs,
              percentile(ms, 0.5), percentile(ms, 0.99), percentile(ms, 1.0));
}

// One call every 5 ms, so that the storm's calls spread over many discoveries.
std::vector<double> get_topology_latencies(AgentClient& c, int calls) {
  std::vector<double> ms;
  for (int i = 0; i < calls; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const auto t0 = Clock::now();
    const std::string doc = c.call("GetTopology", {"json"});
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (doc.empty()) std::fprintf(stderr, "empty answer\n");
  }
  return ms;
}

void storm(int calls) {
  AgentSettings s;
  s.log_level = "info";
  AgentWithFakes agent(s);
  const auto quiet = get_topology_latencies(agent.client(), calls);
  auto stormer = agent.new_client();
  std::atomic<bool> stop{false};
  std::atomic<int> refreshes{0};
  std::thread t([&] {
    while (!stop) {
      stormer->refresh();
      ++refreshes;
    }
  });
  std::thread u([&] {
    while (!stop) {
      agent.send_uevent("change", "/devices/pci0000:00/0000:00:01.0", "pci");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const auto busy = get_topology_latencies(agent.client(), calls);
  stop = true;
  t.join();
  u.join();
  std::printf("GetTopology(json) idle:  %d calls, p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", calls,
              percentile(quiet, 0.5), percentile(quiet, 0.99), percentile(quiet, 1.0));
  std::printf(
      "GetTopology(json) storm: %d calls, p50 %.2f ms, p99 %.2f ms, max %.2f ms "
      "(%d Refresh() completed meanwhile)\n",
      calls, percentile(busy, 0.5), percentile(busy, 0.99), percentile(busy, 1.0),
      refreshes.load());
}

}  // namespace

int main(int argc, char** argv) {
  const int idle_seconds = argc > 1 ? std::stoi(argv[1]) : 60;
  const int runs = argc > 2 ? std::stoi(argv[2]) : 40;
  const int calls = argc > 3 ? std::stoi(argv[3]) : 400;
  const int kube_idle_seconds = argc > 4 ? std::stoi(argv[4]) : 0;
  try {
    if (idle_seconds > 0) idle(idle_seconds);
    if (runs > 0) {
      latency(runs, "quiet: 250ms\n  max: 2s", "default debounce 250 ms");
      latency(runs, "quiet: 50ms\n  max: 300ms", "debounce 50 ms");
    }
    if (calls > 0) storm(calls);
    if (kube_idle_seconds > 0) idle_kube(kube_idle_seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "agent bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
