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
#include <optional>
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

/// The node's pools and what deciding which slices belong to the node found on the way.
struct PoolGathering {
  std::vector<Pool> pools;
  /// An invalid node selector (the scheduler refuses the allocation), else "".
  std::string error;
  /// Slices whose node selector (or, per device, some device's) was taken as matching because
  /// no Node object was given (--node FILE).
  std::vector<std::string> assumed;
  /// Slices left out although they name no other node: "<slice>: <why>" (a node selector
  /// that does not match, perDeviceNodeSelection without DRAPartitionableDevices).
  std::vector<std::string> excluded;
};

/// The pools of the slices that belong to the node, as upstream's GatherPools decides it: a
/// slice's nodeName (`node`, or the Node's name), allNodes, or its nodeSelector evaluated
/// against `node_object`; with perDeviceNodeSelection (only with DRAPartitionableDevices)
/// the slice counts when one of its devices is available on the node. Without a Node object
/// node selectors count as matching (listed in `assumed`). Slices with only shared counters
/// always belong. Sorted by driver then pool name: upstream iterates pools in Go map order,
/// which is unspecified, so where devices of several pools could serve a request, the
/// scheduler may pick from another pool first. Without `strict_pools` (1.34, 1.35) only a
/// pool's newest generation counts; with it (1.36) mixed generations make the pool
/// incomplete.
PoolGathering gather_pools(const std::vector<ResourceSlice>& slices, const std::string& node,
                           const Node* node_object, const Features& features);

struct DeviceResult {
  std::string request;  ///< "req" or "req/subrequest"
  DeviceId id;
  bool admin_access = false;
  std::map<std::string, Quantity> consumed_capacity;
};

/// One entry of the allocation's devices.config, as upstream builds it.
struct AllocationConfig {
  std::string source;  ///< FromClass or FromClaim
  std::vector<std::string> requests;
  nlohmann::ordered_json configuration;  ///< the DeviceConfiguration ({"opaque": {...}})
};

struct ClaimResult {
  std::string claim;
  std::vector<DeviceResult> devices;
  /// The class configs of the allocated requests (each class once, naming its requests), then
  /// the claim's configs that apply (one copy per request they name, as upstream).
  std::vector<AllocationConfig> config;
  /// Where the allocation can be used: `metadata.name In [node]` when a device is local to one
  /// node, else the merged node selectors of the devices' slices; none when available on
  /// every node.
  std::optional<NodeSelector> node_selector;
};

struct AllocateOptions {
  std::string node;
  /// The Node object (name and labels), when known: node selectors are evaluated against it.
  /// Without it they count as matching.
  std::optional<Node> node_object;
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
