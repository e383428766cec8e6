// nodetopo_refresh_bench: what one refresh of the agent costs on a host root, against a full
// `lstopo-no-graphics --of xml` of the same root — interleaved run by run, medians.
//
//   nodetopo_refresh_bench [--runs 21] [--json out.json] name=ROOT ...
//
// Per root, in one process, as the agent does it (agent/daemon/src/snapshot_source.cpp): the host
// opened once, the process environment written once, then each round
//   full      core::take_snapshot without a cache (a fresh SysRoot, every probe, the digest)
//             and every document the agent serves rendered (core::render);
//   pci       the same through a probes::DiscoveryCache after a PCI uevent naming one function
//             (the last accelerator, else the last function): what a hot-plug refresh costs;
//   noop      the same after an event that touches nothing cached (a net event), and whether
//             its digest equals the previous one (the agent then writes nothing);
//   lstopo    lstopo-no-graphics --of xml with HWLOC_FSROOT=ROOT, a fresh process.
// The figure of merit is pci / lstopo (target 0.4 in docs/performance.md; checked by
// nodetopo_bench_compare --check-report).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/core/host_source.hpp>
#include <nodetopo/core/render.hpp>
#include <nodetopo/core/snapshot.hpp>
#include <nodetopo/probes/discovery_cache.hpp>

#include "spawn.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nodetopo::core::DocumentKind;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// What the agent renders on each refresh (snapshot_source.cpp's list).
const std::vector<std::pair<DocumentKind, const char*>>& served() {
  using K = DocumentKind;
  static const std::vector<std::pair<DocumentKind, const char*>> docs = {
      {K::kDump, "text"},
      {K::kDump, "json"},
      {K::kDump, "dot"},
      {K::kMatrix, "text"},
      {K::kMatrix, "json"},
      {K::kResourceSlices, "yaml"},
      {K::kResourceSlices, "json"},
      {K::kLabels, "plain"},
      {K::kLabels, "nfd"},
      {K::kLabels, "patch"},
      {K::kLabels, "nodefeature"},
      {K::kNrt, "yaml"},
      {K::kNrt, "json"},
      {K::kShape, "text"},
      {K::kShape, "json"},
  };
  return docs;
}

// One refresh: a snapshot and every served document. Returns the digest.
std::string refresh(const nodetopo::core::OpenedHost& host, nodetopo::probes::DiscoveryCache* cache,
                    double* ms) {
  const auto started = Clock::now();
  auto snap = nodetopo::core::take_snapshot(
      host, {.node_name = "bench-node", .with_digest = true, .reopen_root = true, .cache = cache});
  if (!snap) {
    std::cerr << "refresh bench: " << snap.error().describe() << "\n";
    std::exit(1);
  }
  std::size_t bytes = 0;
  for (const auto& [kind, format] : served()) {
    auto doc = nodetopo::core::render(snap.value(), kind, format);
    if (doc) bytes += doc.value().size();
  }
  *ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  if (bytes == 0) std::cerr << "refresh bench: no document rendered\n";
  return snap.value().digest;
}

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

}  // namespace

int main(int argc, char** argv) {
  int runs = 21;
  std::string json_path;
  std::vector<std::pair<std::string, std::string>> roots;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--runs" || arg == "--json") && i + 1 < argc) {
      (arg == "--runs" ? void(runs = std::max(1, std::atoi(argv[++i])))
                       : void(json_path = argv[++i]));
    } else if (arg.find('=') != std::string::npos && !arg.starts_with("-")) {
      roots.emplace_back(arg.substr(0, arg.find('=')),
                         fs::absolute(arg.substr(arg.find('=') + 1)).string());
    } else {
      std::cerr << "usage: nodetopo_refresh_bench [--runs N] [--json FILE] name=ROOT...\n";
      return 2;
    }
  }
  if (roots.empty()) {
    std::cerr << "refresh bench: at least one name=ROOT is required\n";
    return 2;
  }
  nlohmann::ordered_json report = nlohmann::ordered_json::array();
  std::printf(
      "| root | full refresh ms | after a PCI uevent ms | no-op ms | lstopo ms | pci/lstopo | "
      "full/lstopo | PCI functions read / reused | no-op digest unchanged |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---|---|\n");
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
    nodetopo::probes::DiscoveryCache cache;
    double ms = 0;
    std::string digest = refresh(host.value(), &cache, &ms);  // warm-up, fills the cache
    std::vector<double> full, pci, noop, lstopo;
    bool noop_unchanged = true;
    bool pci_equal = true;
    std::size_t read = 0;
    std::size_t reused = 0;
    nodetopo::spawn::ChildOptions lstopo_options;
    lstopo_options.env = {"HWLOC_FSROOT=" + root, "HWLOC_COMPONENTS=linux,stop"};
    lstopo_options.out = nodetopo::spawn::Stream::kDiscard;
    lstopo_options.err = nodetopo::spawn::Stream::kDiscard;
    (void)nodetopo::spawn::run({"lstopo-no-graphics", "--of", "xml", "-"}, lstopo_options);
    for (int r = 0; r < runs; ++r) {
      const std::string fresh = refresh(host.value(), nullptr, &ms);
      full.push_back(ms);

      nodetopo::probes::Changes event = nodetopo::probes::Changes::none();
      event.pci = true;
      if (!path.empty()) event.pci_paths.push_back(path);
      cache.invalidate(event);
      const std::string after_pci = refresh(host.value(), &cache, &ms);
      pci.push_back(ms);
      pci_equal = pci_equal && after_pci == fresh;
      read = cache.stats().pci_functions_read;
      reused = cache.stats().pci_functions_reused;

      cache.invalidate(nodetopo::probes::Changes::none());
      const std::string after_noop = refresh(host.value(), &cache, &ms);
      noop.push_back(ms);
      noop_unchanged = noop_unchanged && after_noop == after_pci && after_noop == digest;
      digest = after_noop;

      const auto child =
          nodetopo::spawn::run({"lstopo-no-graphics", "--of", "xml", "-"}, lstopo_options);
      if (child.exit_code != 0) {
        std::cerr << "refresh bench: lstopo failed on " << name << "\n";
        status = 1;
      }
      lstopo.push_back(child.seconds * 1000);
    }
    if (!pci_equal) {
      std::cerr << "refresh bench: " << name << ": a cached refresh differs from a fresh one\n";
      status = 1;
    }
    nlohmann::ordered_json e;
    e["root"] = name;
    e["full_ms"] = median(full);
    e["pci_refresh_ms"] = median(pci);
    e["noop_refresh_ms"] = median(noop);
    e["lstopo_ms"] = median(lstopo);
    e["ratio_pci_refresh_lstopo"] = median(lstopo) > 0 ? median(pci) / median(lstopo) : 0;
    e["ratio_full_lstopo"] = median(lstopo) > 0 ? median(full) / median(lstopo) : 0;
    e["pci_functions_read"] = read;
    e["pci_functions_reused"] = reused;
    e["noop_digest_unchanged"] = noop_unchanged;
    e["cached_equals_fresh"] = pci_equal;
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %zu / %zu | %s |\n", name.c_str(),
                median(full), median(pci), median(noop), median(lstopo),
                e["ratio_pci_refresh_lstopo"].get<double>(), e["ratio_full_lstopo"].get<double>(),
                read, reused, noop_unchanged ? "yes" : "NO");
    std::fflush(stdout);
    report.push_back(std::move(e));
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << report.dump(2) << "\n";
  }
  return status;
}
