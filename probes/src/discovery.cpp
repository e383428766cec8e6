#include <algorithm>
#include <chrono>
#include <exception>
#include <numeric>

#include <spdlog/spdlog.h>

#include <nodetopo/base/log.hpp>
#include <nodetopo/probes/accelerator_probe.hpp>
#include <nodetopo/probes/cpu_numa_probe.hpp>
#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/kfd_probe.hpp>
#include <nodetopo/probes/net_probe.hpp>
#include <nodetopo/probes/nvml_probe.hpp>
#include <nodetopo/probes/pci_probe.hpp>
#include <nodetopo/probes/rdma_probe.hpp>

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

Discovery run_probes(const SysRoot& root, const std::vector<std::unique_ptr<Probe>>& probes,
                     const ProbeOptions& options) {
  auto log = component_logger("discovery");
  std::vector<std::size_t> order(probes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return probes[a]->phase() < probes[b]->phase();
  });

  TopologyBuilder builder;
  Discovery out;
  for (std::size_t i : order) {
    Probe& probe = *probes[i];
    ProbeReport report;
    report.probe = std::string(probe.name());
    ProbeContext ctx(root, options, report.probe);
    Result<void> result;
    const auto started = std::chrono::steady_clock::now();
    try {
      result = probe.discover(ctx, builder);
    } catch (const std::exception& e) {
      result = make_error(ErrorCode::kIo, std::string("internal error: ") + e.what());
    } catch (...) {
      result = make_error(ErrorCode::kIo, "internal error: unknown exception");
    }
    log->debug("probe {} took {:.2f} ms", report.probe,
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                   .count());
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
  out.topology = std::move(builder).freeze();
  return out;
}

Discovery discover(const SysRoot& root, const ProbeOptions& options) {
  return run_probes(root, default_probes(), options);
}

}  // namespace nodetopo::probes
