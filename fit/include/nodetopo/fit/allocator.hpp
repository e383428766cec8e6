// The kube-scheduler's structured DRA allocator for one node
// (k8s.io/dynamic-resource-allocation/structured), reimplemented: it gathers the node's pools,
// then allocates claim after claim, request after request, device after device, trying the
// candidates in pool/slice/device order and backtracking (depth-first) until the first
// complete solution — so the devices it picks are the devices the scheduler picks.
//
// Outcomes follow the scheduler's split: kFits, kUnschedulable (no solution on this node), or
// kError (invalid input the scheduler would refuse: a selector error, an incomplete pool for an
// "All" request, too many devices for one claim).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nodetopo/fit/load.hpp>
#include <nodetopo/fit/model.hpp>

namespace nodetopo::fit {

/// The claim's device limit (resourceapi.AllocationResultsMaxSize).
inline constexpr int kMaxDevicesPerClaim = 32;

struct DeviceId {
  std::string driver;
  std::string pool;
  std::string device;
  auto operator<=>(const DeviceId&) const = default;
  [[nodiscard]] std::string to_string() const { return driver + "/" + pool + "/" + device; }
};

/// One pool on the node: the slices of its newest generation.
struct Pool {
  std::string driver;
  std::string name;
  std::vector<const ResourceSlice*> slices;  ///< sorted by slice name
  bool incomplete = false;                   ///< fewer slices than resourceSliceCount
  bool invalid = false;
  std::string invalid_reason;
};

/// The pools of the slices that belong to `node` (nodeName, allNodes, or a node selector —
/// which fit cannot evaluate without the Node's labels and counts as matching; slices with
/// only shared counters always belong), sorted by driver then pool name. Upstream iterates
/// pools in Go map order, which is unspecified: where devices of several pools could serve a
/// request, the scheduler may pick from another pool first. Without `strict_pools` (1.34,
/// 1.35) only a pool's newest generation counts; with it (1.36) mixed generations make the
/// pool incomplete.
std::vector<Pool> gather_pools(const std::vector<ResourceSlice>& slices, const std::string& node,
                               bool strict_pools = false);

struct DeviceResult {
  std::string request;  ///< "req" or "req/subrequest"
  DeviceId id;
  bool admin_access = false;
  std::map<std::string, Quantity> consumed_capacity;
};

struct ClaimResult {
  std::string claim;
  std::vector<DeviceResult> devices;
};

struct AllocateOptions {
  std::string node;
  Features features;
  /// Bound on search steps (allocateOne calls), as the scheduler's timeout bounds its search.
  std::uint64_t max_steps = 5'000'000;
};

struct AllocateOutcome {
  enum class Status : std::uint8_t { kFits, kUnschedulable, kError };
  Status status = Status::kUnschedulable;
  std::string error;                ///< kError: what and where
  std::string error_expression;     ///< kError from a selector: the expression
  std::vector<ClaimResult> claims;  ///< kFits: one per claim, in input order
  std::uint64_t steps = 0;
};

AllocateOutcome allocate(const Inputs& inputs, const AllocateOptions& options);

}  // namespace nodetopo::fit
