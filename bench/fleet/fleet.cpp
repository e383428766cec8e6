// Fleet simulation (not a ctest entry): N publishers, one per simulated node, against one fake
// API server (tests/fakes/kube-apiserver). Phases: all start at once; steady state; a 30 s API
// outage (every request refused, every watch cut); kubelet wipes on 10 % of the nodes; a hardware
// change on 1 %. Reports the server's peak and mean request rates per phase, the time until the
// server holds every node's desired pool again, and the steady requests per node per hour.
//
//   kube_fleet [--nodes 100] [--outage 30] [--steady 20] [--jitter 5] [--out FILE]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include <nodetopo/kube/publisher.hpp>
#include <nodetopo/kube/render.hpp>

#include "fake_apiserver.hpp"
#include "test_topologies.hpp"

using namespace nodetopo;
using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

namespace {

struct Expect {
  int slices = 0;
  int devices = 0;
};

Expect expect_of(const Topology& t, const std::string& node) {
  kube::ServerInfo s;
  s.major = 1;
  s.minor = 35;
  kube::RenderOptions o;
  o.node_name = node;
  o.labels = false;
  o.nrt = false;
  Expect e;
  const auto docs = kube::render_documents(t, o, s);
  for (const auto& slice : *docs.value().slices) {
    ++e.slices;
    e.devices += static_cast<int>(slice["spec"].value("devices", nlohmann::json::array()).size());
  }
  return e;
}

kube::DesiredState desired_of(std::shared_ptr<const Topology> t, const std::string& node) {
  kube::RenderOptions o;
  o.node_name = node;
  o.labels = false;
  o.nrt = false;
  return {node, [t, o](const kube::ServerInfo& s) { return kube::render_documents(*t, o, s); }};
}

// Nodes whose pool on the server differs from the expectation.
int not_converged(const test::FakeApiServer& fake, const std::vector<std::string>& nodes,
                  const std::vector<Expect>& expect) {
  const auto summary = fake.control("GET", "summary");
  int bad = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!summary.contains(nodes[i])) {
      ++bad;
      continue;
    }
    const auto& n = summary[nodes[i]];
    const auto gens = n["generations"].get<std::vector<int>>();
    const auto counts = n["counts"].get<std::vector<int>>();
    const bool one_gen =
        std::adjacent_find(gens.begin(), gens.end(), std::not_equal_to<>()) == gens.end();
    const bool counts_ok =
        std::all_of(counts.begin(), counts.end(), [&](int c) { return c == expect[i].slices; });
    if (n["slices"] != expect[i].slices || n["devices"] != expect[i].devices || !one_gen ||
        !counts_ok) {
      ++bad;
    }
  }
  return bad;
}

struct Phase {
  std::string name;
  double start_s = 0;  ///< seconds since the server's stats start
  double end_s = 0;
  double converge_s = -1;
};

double server_seconds(const test::FakeApiServer& fake) {
  const auto s = fake.control("GET", "stats");
  return (s["now"].get<double>() - s["started"].get<double>()) / 1000.0;
}

// Waits until every node converged (or `limit`); returns seconds taken, -1 on timeout.
double converge(const test::FakeApiServer& fake, const std::vector<std::string>& nodes,
                const std::vector<Expect>& expect, std::chrono::seconds limit) {
  const auto start = Clock::now();
  while (Clock::now() - start < limit) {
    if (not_converged(fake, nodes, expect) == 0) {
      return std::chrono::duration<double>(Clock::now() - start).count();
    }
    std::this_thread::sleep_for(Ms(250));
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 100;
  int outage_s = 30;
  int steady_s = 20;
  int jitter_s = 5;
  std::string out_file;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--nodes") {
      count = std::stoi(next());
    } else if (a == "--outage") {
      outage_s = std::stoi(next());
    } else if (a == "--steady") {
      steady_s = std::stoi(next());
    } else if (a == "--jitter") {
      jitter_s = std::stoi(next());
    } else if (a == "--out") {
      out_file = next();
    } else {
      std::cerr << "usage: kube_fleet [--nodes N] [--outage S] [--steady S] [--jitter S] "
                   "[--out FILE]\n";
      return 2;
    }
  }
  spdlog::set_level(spdlog::level::err);
  std::vector<std::string> nodes;
  for (int i = 0; i < count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "gpu-node-%04d", i);
    nodes.emplace_back(name);
  }
  test::FakeOptions fo;
  fo.nodes = nodes;
  fo.bookmark_ms = 60'000;
  fo.control_timeout_s = 300;  // the polls below wait behind a thousand clients' requests
  test::FakeApiServer fake(fo);

  std::vector<std::shared_ptr<const Topology>> topo;
  std::vector<Expect> expect;
  for (int i = 0; i < count; ++i) {
    test::DgxOptions d;
    d.identity = i;
    topo.push_back(std::make_shared<const Topology>(test::make_dgx(d)));
    expect.push_back(expect_of(*topo.back(), nodes[static_cast<std::size_t>(i)]));
  }
  kube::PublisherConfig pc;
  pc.client = fake.client_config();
  pc.label_mode = kube::LabelMode::kNone;
  pc.publish_nrt = false;
  pc.startup_jitter = std::chrono::seconds(jitter_s);
  pc.sync_backoff_max = std::chrono::seconds(30);

  std::vector<Phase> phases;
  fake.reset_stats();
  // 1. Everyone starts at once.
  Phase start{"start (all at once, " + std::to_string(jitter_s) + " s jitter)", 0, 0, -1};
  std::vector<std::unique_ptr<kube::Publisher>> fleet;
  const auto t0 = Clock::now();
  for (int i = 0; i < count; ++i) {
    fleet.push_back(std::make_unique<kube::Publisher>(pc));
    fleet.back()->update(
        desired_of(topo[static_cast<std::size_t>(i)], nodes[static_cast<std::size_t>(i)]));
  }
  const double spawn = std::chrono::duration<double>(Clock::now() - t0).count();
  start.converge_s = converge(fake, nodes, expect, std::chrono::seconds(300));
  if (start.converge_s >= 0) start.converge_s += spawn;
  // Until every watch is open: the end of the start-up traffic.
  while (fake.control("GET", "stats")["watchers"].get<int>() < count &&
         Clock::now() - t0 < std::chrono::seconds(300)) {
    std::this_thread::sleep_for(Ms(250));
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  start.end_s = server_seconds(fake);
  phases.push_back(start);

  // 2. Steady state.
  Phase steady{"steady state (" + std::to_string(steady_s) + " s)", server_seconds(fake), 0, -1};
  std::this_thread::sleep_for(std::chrono::seconds(steady_s));
  steady.end_s = server_seconds(fake);
  phases.push_back(steady);

  // 3. Outage: every request refused, every watch cut, for outage_s.
  Phase outage{"API outage " + std::to_string(outage_s) + " s, then recovery", server_seconds(fake),
               0, -1};
  fake.fault({{"status", 503}, {"count", -1}, {"forMs", outage_s * 1000}});
  fake.control("POST", "cut-watches");
  std::this_thread::sleep_for(std::chrono::seconds(outage_s));
  fake.clear_faults();
  // Recovery: every pool right and every publisher watching again.
  {
    const auto t = Clock::now();
    outage.converge_s = converge(fake, nodes, expect, std::chrono::seconds(300));
    while (fake.control("GET", "stats")["watchers"].get<int>() < count &&
           Clock::now() - t < std::chrono::seconds(300)) {
      std::this_thread::sleep_for(Ms(250));
    }
    if (outage.converge_s >= 0)
      outage.converge_s = std::chrono::duration<double>(Clock::now() - t).count();
  }
  std::this_thread::sleep_for(std::chrono::seconds(5));
  outage.end_s = server_seconds(fake);
  phases.push_back(outage);

  // 4. Kubelet wipes on 10 %.
  Phase wipe{"kubelet wipe on 10 % (" + std::to_string(std::max(1, count / 10)) + " nodes)",
             server_seconds(fake), 0, -1};
  for (int i = 0; i < count; i += 10)
    fake.control("POST", "wipe", {{"node", nodes[static_cast<std::size_t>(i)]}});
  wipe.converge_s = converge(fake, nodes, expect, std::chrono::seconds(300));
  std::this_thread::sleep_for(std::chrono::seconds(3));
  wipe.end_s = server_seconds(fake);
  phases.push_back(wipe);

  // 5. Hardware change on 1 % (half of the GPUs gone).
  Phase change{"hardware change on 1 % (" + std::to_string(std::max(1, count / 100)) + " nodes)",
               server_seconds(fake), 0, -1};
  for (int i = 0; i < count; i += 100) {
    test::DgxOptions d;
    d.identity = i;
    d.gpus = 4;
    auto t = std::make_shared<const Topology>(test::make_dgx(d));
    expect[static_cast<std::size_t>(i)] = expect_of(*t, nodes[static_cast<std::size_t>(i)]);
    fleet[static_cast<std::size_t>(i)]->update(desired_of(t, nodes[static_cast<std::size_t>(i)]));
  }
  change.converge_s = converge(fake, nodes, expect, std::chrono::seconds(300));
  std::this_thread::sleep_for(std::chrono::seconds(3));
  change.end_s = server_seconds(fake);
  phases.push_back(change);

  const auto stats = fake.control("GET", "stats");
  const auto stop_start = Clock::now();
  fleet.clear();
  const double stop_s = std::chrono::duration<double>(Clock::now() - stop_start).count();

  // Per-second counts from the server.
  std::map<int, int> per_second;
  for (const auto& [k, v] : stats["perSecond"].items())
    per_second[std::stoi(k)] = v.get<int>();
  std::ostringstream md;
  md << "| phase | requests | peak req/s | mean req/s | time to converge |\n";
  md << "|---|---|---|---|---|\n";
  double steady_rate = 0;
  for (const Phase& p : phases) {
    int total = 0;
    int peak = 0;
    for (const auto& [sec, n] : per_second) {
      if (sec >= static_cast<int>(p.start_s) && sec < static_cast<int>(p.end_s)) {
        total += n;
        peak = std::max(peak, n);
      }
    }
    const double dur = std::max(1.0, p.end_s - p.start_s);
    if (p.name.rfind("steady", 0) == 0) steady_rate = total / dur;
    char conv[32];
    if (p.converge_s < 0) {
      std::snprintf(conv, sizeof conv, "%s",
                    p.name.rfind("steady", 0) == 0 ? "-" : "not converged");
    } else {
      std::snprintf(conv, sizeof conv, "%.1f s", p.converge_s);
    }
    char mean[32];
    std::snprintf(mean, sizeof mean, "%.1f", total / dur);
    md << "| " << p.name << " | " << total << " | " << peak << " | " << mean << " | " << conv
       << " |\n";
  }
  char line[160];
  std::snprintf(line, sizeof line,
                "\n%d publishers; steady state: %.2f requests/s at the server = %.1f requests per "
                "node per hour; stopping all publishers took %.2f s.\n",
                count, steady_rate, steady_rate * 3600.0 / count, stop_s);
  md << line;
  md << "\nRequests by verb, resource and code:\n\n";
  for (const auto& [k, v] : stats["counts"].items())
    md << "- `" << k << "`: " << v.get<int>() << "\n";
  std::cout << md.str();
  if (!out_file.empty()) std::ofstream(out_file) << md.str();
  for (const Phase& p : phases) {
    if (p.converge_s < 0 && p.name.rfind("steady", 0) != 0) return 1;
  }
  return 0;
}
