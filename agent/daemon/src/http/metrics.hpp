// The agent's counters and their Prometheus text exposition (format 0.0.4).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nodetopo/topology/diagnostics.hpp>

namespace nodetopo::daemon {

/// Why a discovery ran (the `trigger` label).
enum class Trigger { kStart, kUevent, kResync, kDbus, kReload, kOverflow, kRetry };
std::string_view to_string(Trigger trigger);
inline constexpr std::array<Trigger, 7> kAllTriggers = {
    Trigger::kStart,  Trigger::kUevent,   Trigger::kResync, Trigger::kDbus,
    Trigger::kReload, Trigger::kOverflow, Trigger::kRetry};

/// What became of a discovery (the `result` label).
enum class Outcome { kPublished, kUnchanged, kDegraded, kFailed };
std::string_view to_string(Outcome outcome);

struct Metrics {
  /// Upper bounds of the discovery duration histogram, in seconds.
  static constexpr std::array<double, 11> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                      0.5,   1.0,  2.5,   5.0,  10.0};
  std::array<std::uint64_t, kBuckets.size()> duration_buckets{};  // non-cumulative counts
  std::uint64_t duration_count = 0;
  double duration_sum = 0;
  std::map<std::pair<Trigger, Outcome>, std::uint64_t> discoveries;
  std::uint64_t uevents_received = 0;
  std::uint64_t uevents_relevant = 0;
  std::uint64_t uevent_overflows = 0;
  std::uint64_t config_reloads = 0;
  std::uint64_t config_reload_failures = 0;

  void observe_duration(std::chrono::nanoseconds d);
};

/// Everything else /metrics shows, taken from the Manager at scrape time.
struct MetricsView {
  std::string version;
  std::uint64_t generation = 0;
  bool ready = false;
  bool degraded = false;
  double last_refresh_seconds = 0;             ///< Unix time, 0 before the first discovery
  std::vector<ProbeReport> probes;             ///< of the latest discovery
  std::map<std::string, std::size_t> devices;  ///< of the published snapshot
  struct SinkRow {
    std::string name;
    bool ok = true;
    std::uint64_t writes = 0;
    std::uint64_t errors = 0;
  };
  std::vector<SinkRow> sinks;
  /// The sinks' own metric families (Sink::metrics()), appended as they are.
  std::string sink_metrics;
};

std::string render_metrics(const Metrics& metrics, const MetricsView& view);

}  // namespace nodetopo::daemon
