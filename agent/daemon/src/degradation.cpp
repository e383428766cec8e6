#include "degradation.hpp"

#include <algorithm>

namespace nodetopo::daemon {

namespace {

bool healthy(ProbeStatus s) {
  return s == ProbeStatus::kOk || s == ProbeStatus::kWarnings;
}

const ProbeReport* find(const Snapshot& s, const std::string& probe) {
  const auto it = std::find_if(s.reports.begin(), s.reports.end(),
                               [&](const ProbeReport& r) { return r.probe == probe; });
  return it == s.reports.end() ? nullptr : &*it;
}

void add(std::string& out, const std::string& reason) {
  out += (out.empty() ? "" : "; ") + reason;
}

}  // namespace

std::string degradation(const Snapshot& last_good, const Snapshot& now) {
  std::string why;
  bool new_warnings = false;
  for (const ProbeReport& before : last_good.reports) {
    const ProbeReport* after = find(now, before.probe);
    if (after == nullptr) {
      add(why, "probe " + before.probe + " did not run");
      continue;
    }
    if (healthy(before.status) && !healthy(after->status)) {
      add(why, "probe " + before.probe + " is " + std::string(to_string(after->status)) +
                   (after->error.empty() ? "" : " (" + after->error + ")") + ", was " +
                   std::string(to_string(before.status)));
    }
    if (before.status == ProbeStatus::kOk && after->status == ProbeStatus::kWarnings) {
      new_warnings = true;
    }
  }
  if (new_warnings) {
    std::string fewer;
    for (const auto& [kind, count] : last_good.devices) {
      const auto it = now.devices.find(kind);
      const std::size_t n = it == now.devices.end() ? 0 : it->second;
      if (n < count) {
        add(fewer, kind + " " + std::to_string(count) + " -> " + std::to_string(n));
      }
    }
    if (!fewer.empty()) add(why, "fewer devices while probes report new warnings (" + fewer + ")");
  }
  return why;
}

std::string failed_probes(const Snapshot& snapshot) {
  std::string out;
  for (const ProbeReport& r : snapshot.reports) {
    if (r.status == ProbeStatus::kFailed) add(out, "probe " + r.probe + " failed: " + r.error);
  }
  return out;
}

}  // namespace nodetopo::daemon
