// The explanation of an allocation for a person and for scripts: per claim, request and
// subrequest, a funnel with the number of candidate devices left after each of the allocator's
// checks (on the node, class selectors, request selectors, capacity, not in use, counters,
// taints) with example names; for each constraint, the candidates grouped by the attribute's
// value against what is needed; for a selector error, where and a has() rewrite; the outcome
// and, on success, the allocation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/fit/allocator.hpp>
#include <nodetopo/fit/load.hpp>

namespace nodetopo::fit {

struct FunnelStep {
  std::string step;  ///< "on the node", "class nodetopo-gpu", ...
  std::size_t count = 0;
  std::vector<std::string> examples;  ///< up to a few device names
  std::vector<std::string> dropped;   ///< up to a few names removed here, with why
};

struct ConstraintGroup {
  std::string value;
  std::vector<std::string> devices;  ///< "<request>: <device>"
  bool enough = false;               ///< every request it covers has enough devices here
  int covered = 0;                   ///< how many of the requests it has enough devices for
  std::string counts;                ///< "gpu 2, nic 0": candidates per request
};

struct ConstraintReport {
  std::string kind;  ///< matchAttribute or distinctAttribute
  std::string attribute;
  std::vector<std::string> requests;
  std::vector<ConstraintGroup> groups;  ///< largest first
  std::vector<std::string> missing;     ///< candidates without the attribute
  std::string verdict;
  /// A failing matchAttribute: other attributes whose values would group enough candidates.
  std::vector<std::string> alternatives;
};

struct RequestReport {
  std::string name;  ///< "gpu" or "gpu/small"
  std::string device_class;
  std::string needed;  ///< "2", "all"
  std::vector<FunnelStep> funnel;
  std::string note;                   ///< why this request alone cannot be satisfied, or ""
  std::vector<std::string> warnings;  ///< inputs the chosen release ignores
  bool chosen = false;                ///< firstAvailable: the subrequest that was allocated
};

struct ClaimReport {
  std::string name;
  std::vector<RequestReport> requests;
  std::vector<ConstraintReport> constraints;
  std::vector<DeviceResult> allocation;
  std::vector<AllocationConfig> config;       ///< on success: the allocation's devices.config
  std::optional<NodeSelector> node_selector;  ///< on success: the allocation's nodeSelector
};

struct Explanation {
  std::string node;
  std::string version;
  AllocateOutcome outcome;
  std::vector<ClaimReport> claims;
  /// What fit assumed or left out deciding the node's slices (node selectors without a Node
  /// object, slices for other nodes by selector).
  std::vector<std::string> notes;
  std::string error_hint;  ///< selector error: the has() rewrite
  std::string summary;     ///< one line: fits / does not fit because ...
};

Explanation explain(const Inputs& inputs, const AllocateOptions& options,
                    const std::string& version);

std::string render_text(const Explanation& e);
nlohmann::ordered_json render_json(const Explanation& e);

}  // namespace nodetopo::fit
