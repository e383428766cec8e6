// What a discovery says about itself: one report per probe. Part of the model so that exporters
// can render it next to the topology without depending on the probes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nodetopo {

enum class ProbeStatus { kOk, kWarnings, kUnavailable, kFailed };

/// "ok", "warnings", "unavailable", "failed".
std::string_view to_string(ProbeStatus status);

struct ProbeReport {
  std::string probe;
  ProbeStatus status = ProbeStatus::kOk;
  /// Messages name files relative to the host root, so that reports of the same capture are
  /// identical wherever it is unpacked.
  std::vector<std::string> warnings;
  std::string error;  ///< why the probe failed or is unavailable
};

}  // namespace nodetopo
