#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <numeric>
#include <optional>
#include <system_error>
#include <thread>

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <nodetopo/base/log.hpp>
#include <nodetopo/probes/accelerator_probe.hpp>
#include <nodetopo/probes/cpu_numa_probe.hpp>
#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/kfd_probe.hpp>
#include <nodetopo/probes/net_probe.hpp>
#include <nodetopo/probes/nvml_probe.hpp>
#include <nodetopo/probes/pci_probe.hpp>
#include <nodetopo/probes/rdma_probe.hpp>
#include <nodetopo/probes/sys_dir.hpp>

#include "kfd/kfd_topology.hpp"
#include "parallel.hpp"
#include "shared_reads.hpp"
#include "usable_cpus.hpp"

namespace nodetopo::probes {

std::vector<std::unique_ptr<Probe>> default_probes() {
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<CpuNumaProbe>());
  probes.push_back(std::make_unique<PciProbe>());
  probes.push_back(std::make_unique<NetProbe>());
  probes.push_back(std::make_unique<RdmaProbe>());  // after net: matches ports to interfaces
  probes.push_back(std::make_unique<AcceleratorProbe>());
  probes.push_back(std::make_unique<KfdProbe>());
  probes.push_back(std::make_unique<NvmlProbe>());
  return probes;
}

namespace {

double ms_since(std::chrono::steady_clock::time_point started) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
      .count();
}

// Runs one probe step, turning exceptions into errors.
template <class F>
Result<void> guarded(F&& step) {
  try {
    return step();
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kIo, std::string("internal error: ") + e.what());
  } catch (...) {
    return make_error(ErrorCode::kIo, "internal error: unknown exception");
  }
}

}  // namespace

unsigned discovery_thread_limit() {
  return 2 * std::min(usable_cpus(), detail::kMaxPoolThreads);
}

namespace {

// overlap_pays(), keeping in `keep` (when given) the directories it opened for their readers.
bool overlap_pays(const SysRoot& root, SharedReads* keep) {
  auto dir = root.open_dir("sys/bus/pci/devices");
  const bool pci_pays = dir && dir.value().entries().size() >= kOverlapMinPciFunctions;
  if (dir && keep != nullptr) keep->pci_devices_dir.emplace(std::move(dir.value()));
  if (pci_pays) return true;
  auto kfd = root.open_dir(kKfdNodesDir);
  const bool kfd_pays = kfd && kfd.value().entries().size() >= kOverlapMinKfdNodes;
  if (kfd && keep != nullptr) keep->kfd_nodes_dir.emplace(std::move(kfd.value()));
  return kfd_pays;
}

}  // namespace

bool overlap_pays(const SysRoot& root) {
  return overlap_pays(root, nullptr);
}

Discovery run_probes(const SysRoot& root, const std::vector<std::unique_ptr<Probe>>& probes,
                     const ProbeOptions& options, DiscoveryCache* cache) {
  auto log = component_logger("discovery");
  std::vector<std::size_t> order(probes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return probes[a]->phase() < probes[b]->phase();
  });

  if (cache != nullptr) {
    struct stat st {};
    if (::stat(root.path().c_str(), &st) == 0) {
      cache->begin(st.st_dev, st.st_ino);
    } else {
      cache->begin(0, 0);
    }
  }
  const bool reuse_platform = cache != nullptr && cache->platform().has_value();

  // One context per probe, made before anything runs: a prefetch and its discover() share it.
  std::vector<std::unique_ptr<ProbeContext>> contexts(probes.size());
  const auto shared = std::make_shared<SharedReads>();
  for (std::size_t i = 0; i < probes.size(); ++i) {
    contexts[i] = std::make_unique<ProbeContext>(root, options, std::string(probes[i]->name()),
                                                 cache, shared);
  }

  // Prefetches, in run order, on a second thread beside the platform phase when it runs and
  // there is a CPU for it; the runner's thread, once the platform is loaded, takes the ones not
  // yet started while it waits for the one it needs (the net and RDMA reads beside the PCI
  // walk). Without a second thread each runs right before its probe. Their errors (an exception)
  // are kept per probe.
  std::vector<std::optional<Error>> prefetch_errors(probes.size());
  std::vector<double> prefetch_ms(probes.size(), 0);
  std::vector<char> prefetched(probes.size(), 0);  // written under `done_mutex` when shared
  auto prefetch = [&](std::size_t i) {
    const auto started = std::chrono::steady_clock::now();
    Result<void> r = guarded([&]() -> Result<void> {
      probes[i]->prefetch(*contexts[i]);
      return {};
    });
    if (!r.ok()) prefetch_errors[i] = r.error();
    prefetch_ms[i] = ms_since(started);
  };
  std::vector<std::size_t> early;  // prefetches shared between the two threads, in run order
  for (std::size_t i : order) {
    if (probes[i]->prefetches()) early.push_back(i);
  }
  std::atomic<std::size_t> next_early{0};
  std::mutex done_mutex;
  std::condition_variable done_cv;
  // Runs the next prefetch nobody has started; false when none is left.
  auto run_next = [&]() -> bool {
    const std::size_t k = next_early++;
    if (k >= early.size()) return false;
    prefetch(early[k]);
    {
      const std::lock_guard<std::mutex> lock(done_mutex);
      prefetched[early[k]] = 1;
    }
    done_cv.notify_all();
    return true;
  };
  std::thread beside;
  // Asked last: overlap_pays() lists a directory.
  auto overlap_allowed = [&] {
    return options.overlap == ProbeOptions::Overlap::kAlways ||
           (options.overlap == ProbeOptions::Overlap::kAuto && overlap_pays(root, shared.get()));
  };
  if (!early.empty() && !reuse_platform && usable_cpus() > 1 && overlap_allowed()) {
    for (std::size_t i : early)
      contexts[i]->hold_log();
    try {
      beside = std::thread([&] {
        while (run_next()) {
        }
      });
    } catch (const std::system_error& e) {
      log->debug("no second thread for the prefetches ({}): one after the other", e.what());
      for (std::size_t i : early)
        contexts[i]->release_log();
    }
  }
  // Joins the second thread however this function is left.
  struct Joiner {
    std::thread& t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } joiner{beside};
  // Until prefetch `i` is done: runs the prefetches not yet started, then waits.
  auto await_prefetch = [&](std::size_t i) {
    if (!beside.joinable()) {
      if (prefetched[i] == 0) {
        prefetch(i);
        prefetched[i] = 1;
      }
      return;
    }
    for (;;) {
      {
        const std::lock_guard<std::mutex> lock(done_mutex);
        if (prefetched[i] != 0) return;
      }
      if (!run_next()) break;
    }
    std::unique_lock<std::mutex> lock(done_mutex);
    done_cv.wait(lock, [&] { return prefetched[i] != 0; });
  };

  TopologyBuilder builder;
  Discovery out;
  bool platform_done = false;
  auto finish_platform = [&] {
    if (platform_done) return;
    platform_done = true;
    if (cache == nullptr) return;
    if (reuse_platform) {
      cache->mutable_stats().platform_reused = true;
    } else {
      cache->platform() = DiscoveryCache::Platform{builder, out.reports};
    }
  };
  if (reuse_platform) {
    builder = cache->platform()->builder;
    out.reports = cache->platform()->reports;
  }
  for (std::size_t i : order) {
    Probe& probe = *probes[i];
    const bool platform = probe.phase() == ProbePhase::kPlatform;
    if (platform && reuse_platform) continue;
    if (!platform) finish_platform();
    ProbeContext& ctx = *contexts[i];
    ProbeReport report;
    report.probe = std::string(probe.name());
    if (probe.prefetches()) {
      await_prefetch(i);
      ctx.release_log();
      log->debug("probe {} prefetch took {:.2f} ms", report.probe, prefetch_ms[i]);
    }
    const auto started = std::chrono::steady_clock::now();
    Result<void> result = prefetch_errors[i]
                              ? Result<void>(*prefetch_errors[i])
                              : guarded([&] { return probe.discover(ctx, builder); });
    log->debug("probe {} took {:.2f} ms", report.probe, ms_since(started));
    report.warnings = ctx.warnings();
    if (result.ok()) {
      report.status = report.warnings.empty() ? ProbeStatus::kOk : ProbeStatus::kWarnings;
    } else {
      const Error& err = result.error();
      report.status =
          err.code == ErrorCode::kUnavailable ? ProbeStatus::kUnavailable : ProbeStatus::kFailed;
      const std::string path = root.relative(err.path);
      report.error = path.empty() ? err.message : path + ": " + err.message;
      if (report.status == ProbeStatus::kUnavailable) {
        log->info("probe {} unavailable: {}", report.probe, err.describe());
      } else {
        log->error("probe {} failed: {}", report.probe, err.describe());
      }
    }
    out.reports.push_back(std::move(report));
  }
  finish_platform();
  out.topology = std::move(builder).freeze();
  return out;
}

Discovery discover(const SysRoot& root, const ProbeOptions& options, DiscoveryCache* cache) {
  return run_probes(root, default_probes(), options, cache);
}

std::string Discovery::degraded() const {
  std::string why;
  for (const ProbeReport& r : reports) {
    if (r.status != ProbeStatus::kFailed) continue;
    if (!why.empty()) why += "; ";
    why += "probe " + r.probe + " failed: " + r.error;
  }
  return why;
}

}  // namespace nodetopo::probes
