// nodetopo_refresh_bench: what one refresh of the agent costs on a host root, against a full
// `lstopo-no-graphics --of xml` of the same root — interleaved run by run, medians.
//
//   nodetopo_refresh_bench [--runs 21] [--json out.json] name=ROOT ...
//
// Per root, in one process, as the agent does it (agent/daemon/src/snapshot_source.cpp: one
// core::Refresher per host, which keeps a probes::DiscoveryCache and renders the served
// documents only when what they are made of changed): the host opened once, the process
// environment written once, then each round
//   full      a refresh by a new Refresher: every probe, the digest, every document the agent
//             serves rendered (what the agent's start costs);
//   pci       the agent's Refresher after a PCI uevent naming one function (the last
//             accelerator, else the last function) that changed nothing: what a hot-plug event
//             costs when the topology is the same — the figure of merit, pci / lstopo (target
//             0.4 in docs/performance.md; checked by nodetopo_bench_compare --check-report);
//   noop      the same after an event that touches nothing cached, and whether its digest equals
//             the previous one (the agent then writes nothing);
//   changed   the same after a PCI uevent whose content did change: that function's driver
//             unbound (its `driver` link and the DRIVER= line of its `uevent` removed), or bound
//             again in the next round, so every document is rendered again — reported, not a
//             target;
//   lstopo    lstopo-no-graphics --of xml with HWLOC_FSROOT=ROOT, a fresh process.
// The bench fails (exit 1) when a cached refresh differs from a fresh one, when the unchanged
// PCI event rendered documents, or when the changed one did not. The root is modified (the
// driver link) during the run and restored at the end.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/core/host_source.hpp>
#include <nodetopo/core/refresh.hpp>
#include <nodetopo/core/snapshot.hpp>
#include <nodetopo/probes/discovery_cache.hpp>

#include "spawn.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One refresh as the agent makes it. Returns its result; `ms` is the time it took.
nodetopo::core::Refreshed refresh(const nodetopo::core::OpenedHost& host,
                                  nodetopo::core::Refresher& refresher,
                                  const nodetopo::probes::Changes& changes, double* ms) {
  const auto started = Clock::now();
  auto r = refresher.refresh(host, {.node_name = "bench-node", .reopen_root = true}, changes);
  *ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  if (!r) {
    std::cerr << "refresh bench: " << r.error().describe() << "\n";
    std::exit(1);
  }
  if (r.value().documents->documents.empty()) {
    std::cerr << "refresh bench: no document rendered\n";
  }
  return std::move(r.value());
}

// The driver binding of one function, as the kernel shows it: the `driver` link and the
// DRIVER= line of `uevent` (which the PCI probe reads first).
struct Binding {
  fs::path dir;
  fs::path driver;     // the link's text
  std::string uevent;  // the file while bound
  bool bound = false;

  static std::optional<Binding> of(const fs::path& dir) {
    std::error_code ec;
    Binding b;
    b.dir = dir;
    b.driver = fs::read_symlink(dir / "driver", ec);
    if (ec) return std::nullopt;
    std::ifstream in(dir / "uevent");
    b.uevent.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    b.bound = true;
    return b;
  }

  // Unbinds the driver, or binds it again: what `echo ADDR > .../unbind` and `.../bind` change.
  void toggle() {
    bound = !bound;
    std::error_code ec;
    if (bound) {
      fs::create_symlink(driver, dir / "driver", ec);
    } else {
      fs::remove(dir / "driver", ec);
    }
    std::string text;
    std::istringstream lines(uevent);
    for (std::string line; std::getline(lines, line);) {
      if (bound || !line.starts_with("DRIVER=")) text += line + "\n";
    }
    std::ofstream out(dir / "uevent", std::ios::trunc);
    out << text;
    if (ec || !out.flush()) {
      std::cerr << "refresh bench: cannot change the driver binding of " << dir.string() << "\n";
      std::exit(1);
    }
  }
};

// The device path ("sys/devices/...") a PCI uevent would name: the last 3D/display controller,
// else the last function.
std::string event_path(const fs::path& root) {
  std::vector<fs::path> all;
  std::vector<fs::path> accelerators;
  std::error_code ec;
  for (auto it = fs::directory_iterator(root / "sys/bus/pci/devices", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    all.push_back(it->path());
    std::ifstream in(it->path() / "class");
    std::string cls;
    in >> cls;
    if (cls.starts_with("0x03")) accelerators.push_back(it->path());
  }
  std::sort(all.begin(), all.end());
  std::sort(accelerators.begin(), accelerators.end());
  const std::vector<fs::path>& pick = accelerators.empty() ? all : accelerators;
  if (pick.empty()) return {};
  return fs::relative(fs::canonical(pick.back(), ec), fs::canonical(root, ec), ec).string();
}

constexpr const char* kUsage =
    "usage: nodetopo_refresh_bench [--runs N] [--json FILE] name=ROOT...\n"
    "  Measures the agent's refresh of each ROOT (a host root: topo mock build ...) against\n"
    "  lstopo-no-graphics --of xml of the same root, interleaved, medians of N rounds (21):\n"
    "  full (a new refresher: every probe, every served document), after a PCI uevent that\n"
    "  changed nothing (the figure of merit, pci/lstopo), after a no-op event, and after a PCI\n"
    "  uevent that changed content (a driver unbound or bound again: documents rendered).\n"
    "  Prints a Markdown table; --json FILE writes the figures. Exit 0, 1 when a refresh\n"
    "  fails or a cached refresh differs from a fresh one, 2 for a usage error.\n";

}  // namespace

int main(int argc, char** argv) {
  int runs = 21;
  std::string json_path;
  std::vector<std::pair<std::string, std::string>> roots;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if ((arg == "--runs" || arg == "--json") && i + 1 < argc) {
      (arg == "--runs" ? void(runs = std::max(1, std::atoi(argv[++i])))
                       : void(json_path = argv[++i]));
    } else if (arg.find('=') != std::string::npos && !arg.starts_with("-")) {
      roots.emplace_back(arg.substr(0, arg.find('=')),
                         fs::absolute(arg.substr(arg.find('=') + 1)).string());
    } else {
      std::cerr << kUsage;
      return 2;
    }
  }
  if (roots.empty()) {
    std::cerr << "refresh bench: at least one name=ROOT is required\n" << kUsage;
    return 2;
  }
  using nodetopo::core::Refresher;
  using nodetopo::probes::Changes;
  nlohmann::ordered_json report = nlohmann::ordered_json::array();
  std::printf(
      "| root | full refresh ms | after a PCI uevent ms | no-op ms | after a changing PCI uevent "
      "ms | lstopo ms | pci/lstopo | changed/lstopo | full/lstopo | PCI functions read / reused "
      "| no-op digest unchanged |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
  int status = 0;
  for (const auto& [name, root] : roots) {
    nodetopo::core::HostSource source(nodetopo::core::HostSpec{.root = root, .mock = ""});
    auto host = source.open();
    if (!host) {
      std::cerr << "refresh bench: " << name << ": " << host.error().describe() << "\n";
      status = 1;
      continue;
    }
    // Between discoveries no other thread runs: the rule of environment.hpp holds.
    nodetopo::core::write_process_environment(host.value());
    const std::string path = event_path(root);
    std::optional<Binding> binding;
    if (!path.empty()) binding = Binding::of(fs::path(root) / path);
    Changes event = Changes::none();
    event.pci = true;
    if (!path.empty()) event.pci_paths.push_back(path);

    Refresher agent(nodetopo::core::agent_documents());
    double ms = 0;
    std::string digest = refresh(host.value(), agent, Changes{}, &ms).digest;  // warm-up
    std::vector<double> full, pci, noop, changed, lstopo;
    bool noop_unchanged = true;
    bool pci_equal = true;
    bool pci_rendered = false;
    bool changed_rendered = true;
    std::size_t read = 0;
    std::size_t reused = 0;
    nodetopo::spawn::ChildOptions lstopo_options;
    lstopo_options.env = {"HWLOC_FSROOT=" + root, "HWLOC_COMPONENTS=linux,stop"};
    lstopo_options.out = nodetopo::spawn::Stream::kDiscard;
    lstopo_options.err = nodetopo::spawn::Stream::kDiscard;
    (void)nodetopo::spawn::run({"lstopo-no-graphics", "--of", "xml", "-"}, lstopo_options);
    for (int r = 0; r < runs; ++r) {
      // The host as the last changing event left it, discovered afresh: what every cached
      // refresh of this round must equal.
      Refresher fresh(nodetopo::core::agent_documents());
      const std::string fresh_digest = refresh(host.value(), fresh, Changes{}, &ms).digest;
      full.push_back(ms);
      pci_equal = pci_equal && fresh_digest == digest;

      const auto after_pci = refresh(host.value(), agent, event, &ms);
      pci.push_back(ms);
      pci_equal = pci_equal && after_pci.digest == fresh_digest;
      pci_rendered = pci_rendered || after_pci.rendered;
      read = agent.cache().stats().pci_functions_read;
      reused = agent.cache().stats().pci_functions_reused;

      const auto after_noop = refresh(host.value(), agent, Changes::none(), &ms);
      noop.push_back(ms);
      noop_unchanged =
          noop_unchanged && after_noop.digest == after_pci.digest && !after_noop.rendered;

      if (binding) {
        binding->toggle();
        const auto after_change = refresh(host.value(), agent, event, &ms);
        changed.push_back(ms);
        changed_rendered =
            changed_rendered && after_change.rendered && after_change.digest != after_noop.digest;
        digest = after_change.digest;
      } else {
        digest = after_noop.digest;
      }

      const auto child =
          nodetopo::spawn::run({"lstopo-no-graphics", "--of", "xml", "-"}, lstopo_options);
      if (child.exit_code != 0) {
        std::cerr << "refresh bench: lstopo failed on " << name << "\n";
        status = 1;
      }
      lstopo.push_back(child.seconds * 1000);
    }
    {
      // The last changing event against a fresh discovery, then the root as it was.
      Refresher fresh(nodetopo::core::agent_documents());
      pci_equal = pci_equal && refresh(host.value(), fresh, Changes{}, &ms).digest == digest;
      if (binding && !binding->bound) binding->toggle();
    }
    if (!pci_equal) {
      std::cerr << "refresh bench: " << name << ": a cached refresh differs from a fresh one\n";
      status = 1;
    }
    if (pci_rendered || !changed_rendered) {
      std::cerr << "refresh bench: " << name << ": "
                << (pci_rendered ? "a refresh that changed nothing rendered the documents"
                                 : "a refresh that changed the topology did not render")
                << "\n";
      status = 1;
    }
    const double lstopo_ms = median(lstopo);
    auto ratio = [&](double v) { return lstopo_ms > 0 ? v / lstopo_ms : 0; };
    nlohmann::ordered_json e;
    e["root"] = name;
    e["full_ms"] = median(full);
    e["pci_refresh_ms"] = median(pci);
    e["noop_refresh_ms"] = median(noop);
    e["changed_refresh_ms"] = median(changed);
    e["lstopo_ms"] = lstopo_ms;
    e["ratio_pci_refresh_lstopo"] = ratio(median(pci));
    e["ratio_changed_refresh_lstopo"] = ratio(median(changed));
    e["ratio_full_lstopo"] = ratio(median(full));
    e["pci_functions_read"] = read;
    e["pci_functions_reused"] = reused;
    e["noop_digest_unchanged"] = noop_unchanged;
    e["cached_equals_fresh"] = pci_equal;
    e["unchanged_pci_event_rendered"] = pci_rendered;
    e["changed_pci_event_rendered"] = binding && changed_rendered;
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %zu / %zu | %s |\n",
                name.c_str(), median(full), median(pci), median(noop), median(changed), lstopo_ms,
                ratio(median(pci)), ratio(median(changed)), ratio(median(full)), read, reused,
                noop_unchanged ? "yes" : "NO");
    std::fflush(stdout);
    report.push_back(std::move(e));
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << report.dump(2) << "\n";
  }
  return status;
}
