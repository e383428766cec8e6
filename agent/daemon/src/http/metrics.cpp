#include "metrics.hpp"

#include <fmt/format.h>

namespace nodetopo::daemon {

std::string_view to_string(Trigger trigger) {
  switch (trigger) {
    case Trigger::kStart:
      return "start";
    case Trigger::kUevent:
      return "uevent";
    case Trigger::kResync:
      return "resync";
    case Trigger::kDbus:
      return "dbus";
    case Trigger::kReload:
      return "reload";
    case Trigger::kOverflow:
      return "overflow";
    case Trigger::kRetry:
      return "retry";
  }
  return "start";
}

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPublished:
      return "published";
    case Outcome::kUnchanged:
      return "unchanged";
    case Outcome::kDegraded:
      return "degraded";
    case Outcome::kFailed:
      return "failed";
  }
  return "failed";
}

void Metrics::observe_duration(std::chrono::nanoseconds d) {
  const double seconds = std::chrono::duration<double>(d).count();
  ++duration_count;
  duration_sum += seconds;
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) {
      ++duration_buckets[i];
      break;
    }
  }
}

namespace {

// Label values are escaped as the text format requires: backslash, quote, newline.
std::string label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

std::string render_metrics(const Metrics& m, const MetricsView& v) {
  std::string out;
  auto w = std::back_inserter(out);
  header(out, "nodetopo_build_info", "gauge", "Build of the running agent (always 1).");
  fmt::format_to(w, "nodetopo_build_info{{version=\"{}\"}} 1\n", label(v.version));

  header(out, "nodetopo_generation", "gauge",
         "Generation of the published topology; bumped only when it changed.");
  fmt::format_to(w, "nodetopo_generation {}\n", v.generation);
  header(out, "nodetopo_ready", "gauge",
         "1 once a topology is published and the last publish succeeded.");
  fmt::format_to(w, "nodetopo_ready {}\n", v.ready ? 1 : 0);
  header(out, "nodetopo_degraded", "gauge",
         "1 while the last discovery was degraded and the last good topology is kept.");
  fmt::format_to(w, "nodetopo_degraded {}\n", v.degraded ? 1 : 0);
  header(out, "nodetopo_last_refresh_timestamp_seconds", "gauge",
         "Unix time at which the last discovery finished.");
  fmt::format_to(w, "nodetopo_last_refresh_timestamp_seconds {:.3f}\n", v.last_refresh_seconds);

  header(out, "nodetopo_discovery_duration_seconds", "histogram", "Duration of discoveries.");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < Metrics::kBuckets.size(); ++i) {
    cumulative += m.duration_buckets[i];
    fmt::format_to(w, "nodetopo_discovery_duration_seconds_bucket{{le=\"{}\"}} {}\n",
                   Metrics::kBuckets[i], cumulative);
  }
  fmt::format_to(w, "nodetopo_discovery_duration_seconds_bucket{{le=\"+Inf\"}} {}\n",
                 m.duration_count);
  fmt::format_to(w, "nodetopo_discovery_duration_seconds_sum {}\n", m.duration_sum);
  fmt::format_to(w, "nodetopo_discovery_duration_seconds_count {}\n", m.duration_count);

  header(out, "nodetopo_discoveries_total", "counter",
         "Discoveries by what triggered them and what became of the result.");
  for (const Trigger t : kAllTriggers) {
    for (const Outcome o :
         {Outcome::kPublished, Outcome::kUnchanged, Outcome::kDegraded, Outcome::kFailed}) {
      const auto it = m.discoveries.find({t, o});
      fmt::format_to(w, "nodetopo_discoveries_total{{trigger=\"{}\",result=\"{}\"}} {}\n",
                     to_string(t), to_string(o), it == m.discoveries.end() ? 0 : it->second);
    }
  }

  header(out, "nodetopo_probe_status", "gauge",
         "Status of each probe in the latest discovery (1 for the current status).");
  for (const ProbeReport& r : v.probes) {
    for (const ProbeStatus s : {ProbeStatus::kOk, ProbeStatus::kWarnings, ProbeStatus::kUnavailable,
                                ProbeStatus::kFailed}) {
      fmt::format_to(w, "nodetopo_probe_status{{probe=\"{}\",status=\"{}\"}} {}\n", label(r.probe),
                     to_string(s), r.status == s ? 1 : 0);
    }
  }

  header(out, "nodetopo_devices", "gauge", "Nodes of the published topology by kind.");
  for (const auto& [kind, count] : v.devices) {
    fmt::format_to(w, "nodetopo_devices{{kind=\"{}\"}} {}\n", label(kind), count);
  }

  header(out, "nodetopo_uevents_received_total", "counter", "Kernel uevents received.");
  fmt::format_to(w, "nodetopo_uevents_received_total {}\n", m.uevents_received);
  header(out, "nodetopo_uevents_relevant_total", "counter",
         "Uevents of subsystems that can change the topology (they arm the debounce timer).");
  fmt::format_to(w, "nodetopo_uevents_relevant_total {}\n", m.uevents_relevant);
  header(out, "nodetopo_uevent_overflows_total", "counter",
         "Times the uevent socket overflowed (each forces a discovery).");
  fmt::format_to(w, "nodetopo_uevent_overflows_total {}\n", m.uevent_overflows);

  header(out, "nodetopo_sink_writes_total", "counter", "Successful writes by sink.");
  for (const auto& s : v.sinks) {
    fmt::format_to(w, "nodetopo_sink_writes_total{{sink=\"{}\"}} {}\n", label(s.name), s.writes);
  }
  header(out, "nodetopo_sink_errors_total", "counter", "Failed publishes by sink.");
  for (const auto& s : v.sinks) {
    fmt::format_to(w, "nodetopo_sink_errors_total{{sink=\"{}\"}} {}\n", label(s.name), s.errors);
  }
  header(out, "nodetopo_sink_up", "gauge", "1 when the sink's last publish succeeded.");
  for (const auto& s : v.sinks) {
    fmt::format_to(w, "nodetopo_sink_up{{sink=\"{}\"}} {}\n", label(s.name), s.ok ? 1 : 0);
  }

  header(out, "nodetopo_config_reloads_total", "counter", "SIGHUP reloads of the config.");
  fmt::format_to(w, "nodetopo_config_reloads_total {}\n", m.config_reloads);
  header(out, "nodetopo_config_reload_failures_total", "counter",
         "Reloads refused because the new config was invalid (the running one is kept).");
  fmt::format_to(w, "nodetopo_config_reload_failures_total {}\n", m.config_reload_failures);
  out += v.sink_metrics;
  return out;
}

}  // namespace nodetopo::daemon
