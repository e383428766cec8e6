// The Kubernetes objects the allocator works on (resource.k8s.io/v1): ResourceSlices with their
// devices, DeviceClasses, ResourceClaims with requests and constraints, and devices already
// allocated on the node. Only the fields the structured allocator reads are kept; load.hpp
// builds them from YAML or JSON documents.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/fit/quantity.hpp>

namespace nodetopo::fit {

/// Kubernetes releases whose allocator behaviour fit reproduces.
enum class K8sVersion : std::uint8_t { k1_34 = 34, k1_35 = 35, k1_36 = 36 };

/// The allocator's feature gates. Defaults per release (kube-scheduler defaults):
/// 1.34 and 1.35: admin access and prioritized lists (firstAvailable) on (beta); device taints,
/// partitionable devices and consumable capacity off (alpha). 1.36: all on (beta).
struct Features {
  bool admin_access = true;
  bool prioritized_list = true;
  bool device_taints = false;
  bool partitionable_devices = false;
  bool consumable_capacity = false;  ///< also gates distinctAttribute constraints
  bool binding_conditions = false;   ///< devices with bindingConditions are allocatable
  /// 1.36 pool rules: slices of mixed generations make a pool incomplete (instead of the older
  /// slices being ignored), and no device of an incomplete pool is allocated.
  bool strict_pools = false;
  static Features for_version(K8sVersion version);
};

struct AttributeValue {
  enum class Type : std::uint8_t { kInt, kBool, kString, kVersion };
  Type type = Type::kString;
  std::int64_t int_value = 0;
  bool bool_value = false;
  std::string text;  ///< string or version
  bool operator==(const AttributeValue& o) const = default;
  [[nodiscard]] std::string to_string() const;
};

struct RequestPolicy {
  std::optional<Quantity> default_value;
  std::vector<Quantity> valid_values;  ///< sorted ascending
  std::optional<Quantity> min;
  std::optional<Quantity> max;
  std::optional<Quantity> step;
};

struct DeviceCapacity {
  Quantity value;
  std::optional<RequestPolicy> request_policy;
};

struct DeviceTaint {
  std::string key;
  std::string value;
  std::string effect;  ///< NoSchedule, NoExecute, None
};

/// One requirement of a NodeSelectorTerm (core/v1 NodeSelectorRequirement): In, NotIn, Exists,
/// DoesNotExist, Gt, Lt on a label (matchExpressions) or In/NotIn on a field (matchFields).
struct NodeSelectorRequirement {
  std::string key;
  std::string op;
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement& o) const = default;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
  bool operator==(const NodeSelectorTerm& o) const = default;
};

/// core/v1 NodeSelector: the terms are ORed, the requirements of one term ANDed.
struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
  bool operator==(const NodeSelector& o) const = default;
};

/// The Node the claims are fitted on, when known (`topo fit --node FILE`): node selectors of
/// slices and devices are evaluated against its name and labels.
struct Node {
  std::string name;
  std::map<std::string, std::string> labels;
};

/// Where a slice (or, with perDeviceNodeSelection, a device) is available: exactly one of a
/// node name, all nodes, or a node selector is set in valid objects.
struct NodeSelection {
  std::string node_name;
  bool all_nodes = false;
  std::optional<NodeSelector> node_selector;
};

struct Device {
  std::string name;
  /// Qualified ("resource.kubernetes.io/pcieRoot") or short names (the driver's domain).
  std::map<std::string, AttributeValue> attributes;
  std::map<std::string, DeviceCapacity> capacity;
  bool allow_multiple_allocations = false;
  /// counter set -> counter -> amount
  std::map<std::string, std::map<std::string, Quantity>> consumes_counters;
  std::vector<DeviceTaint> taints;
  bool has_binding_conditions = false;
  /// perDeviceNodeSelection slices: where this device is available.
  NodeSelection node_selection;
};

struct ResourceSlice {
  std::string name;    ///< metadata.name, else a generated "<source>#<n>"
  std::string source;  ///< the file it came from, for messages
  std::string driver;
  std::string pool;
  std::int64_t generation = 0;
  std::int64_t slice_count = 1;
  std::string node_name;
  bool all_nodes = false;
  std::optional<NodeSelector> node_selector;
  /// perDeviceNodeSelection was set (true or false): the field of DRAPartitionableDevices.
  bool per_device_node_selection_set = false;
  bool per_device_node_selection = false;
  std::vector<Device> devices;
  /// counter set -> counter -> amount
  std::map<std::string, std::map<std::string, Quantity>> shared_counters;
};

/// One entry of a DeviceClass's spec.config or a claim's spec.devices.config: the opaque,
/// driver-specific configuration, passed through to the allocation result unchanged.
struct DeviceConfig {
  std::vector<std::string> requests;     ///< claim config: the requests it applies to (empty: all)
  nlohmann::ordered_json configuration;  ///< the DeviceConfiguration ({"opaque": {...}})
};

struct DeviceClass {
  std::string name;
  std::vector<std::string> selectors;  ///< CEL expressions
  std::vector<DeviceConfig> config;
};

struct Toleration {
  std::string key;
  std::string op = "Equal";  ///< Equal or Exists
  std::string value;
  std::string effect;  ///< empty: all effects
};

/// ExactDeviceRequest, or one DeviceSubRequest of firstAvailable.
struct ExactRequest {
  std::string name;  ///< the request's name, or the subrequest's
  std::string device_class;
  std::vector<std::string> selectors;
  bool all = false;  ///< allocationMode All (else ExactCount)
  std::int64_t count = 1;
  std::optional<bool> admin_access;
  std::vector<Toleration> tolerations;
  std::map<std::string, Quantity> capacity_requests;  ///< capacity.requests
};

struct DeviceRequest {
  std::string name;
  std::optional<ExactRequest> exactly;
  std::vector<ExactRequest> first_available;
};

struct DeviceConstraint {
  std::vector<std::string> requests;  ///< empty: every request of the claim
  std::string match_attribute;        ///< fully qualified, or empty
  std::string distinct_attribute;     ///< fully qualified, or empty
};

struct ResourceClaim {
  std::string name;  ///< "<namespace>/<name>" when namespaced
  std::string source;
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<DeviceConfig> config;  ///< spec.devices.config
};

/// One device already allocated on the node (from a claim's status.allocation).
struct AllocatedDevice {
  std::string driver;
  std::string pool;
  std::string device;
  bool admin_access = false;
  std::map<std::string, Quantity> consumed_capacity;
  std::string claim;  ///< the claim holding it, for the explanation
};

}  // namespace nodetopo::fit
