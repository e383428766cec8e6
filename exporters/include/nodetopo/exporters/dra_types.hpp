// The DRA value types (resource.k8s.io/v1): devices, their attributes and capacities, counter
// sets and slices, plus the options a node's slices are built with. Separate from the builder
// (resource_slices.hpp) so that the validator (slice_validator.hpp) and the builder both depend
// on the types and not on each other.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/exporters/export_config.hpp>

namespace nodetopo::exporters::dra {

/// The Kubernetes minor release the slices are meant for: it decides which standard attributes
/// and which sharing forms may be used.
enum class K8sVersion : std::uint8_t { k1_34 = 34, k1_35 = 35, k1_36 = 36 };

/// "1.34" -> k1_34; an error naming the accepted values otherwise.
Result<K8sVersion> parse_k8s_version(std::string_view text);
std::string to_string(K8sVersion version);

/// The value of a device attribute: exactly one of int, bool, string, version.
struct AttributeValue {
  enum class Type : std::uint8_t { kInt, kBool, kString, kVersion };
  Type type = Type::kString;
  std::int64_t int_value = 0;
  bool bool_value = false;
  std::string text;  ///< string or version

  static AttributeValue of_int(std::int64_t v);
  static AttributeValue of_bool(bool v);
  static AttributeValue of_string(std::string v);
  static AttributeValue of_version(std::string v);
};

/// CapacityRequestPolicy: how shared allocations consume a capacity.
struct RequestPolicy {
  std::string default_value;
  std::string min;  ///< validRange.min (empty: no validRange)
  std::string max;  ///< validRange.max (optional)
  std::string step;
  std::vector<std::string> valid_values;  ///< alternative to validRange
};

struct Capacity {
  std::string value;  ///< a quantity, e.g. "80Gi"
  std::optional<RequestPolicy> request_policy;
};

struct CounterConsumption {
  std::string counter_set;
  std::map<std::string, std::string> counters;  ///< counter name -> quantity
};

struct DeviceTaint {
  std::string key;
  std::string value;
  std::string effect;  ///< None, NoSchedule, NoExecute
};

struct Device {
  std::string name;
  /// Keys are qualified names: "resource.kubernetes.io/pcieRoot", or unqualified ("productName")
  /// for the driver's own domain. std::map: serialised in key order, like the API server.
  std::map<std::string, AttributeValue> attributes;
  std::map<std::string, Capacity> capacity;
  bool allow_multiple_allocations = false;
  std::vector<CounterConsumption> consumes_counters;
  std::vector<DeviceTaint> taints;  ///< never set by the builder today; validated
};

struct CounterSet {
  std::string name;
  std::map<std::string, std::string> counters;  ///< counter name -> quantity
};

struct ResourceSlice {
  std::string generate_name;  ///< "<node>-<driver>-"
  std::string node_uid;       ///< when set: ownerReference to the Node (v1, controller)
  std::string driver;
  std::string pool_name;
  std::int64_t pool_generation = 1;
  std::int64_t resource_slice_count = 1;
  std::string node_name;
  std::vector<Device> devices;
  std::vector<CounterSet> shared_counters;
};

struct SliceOptions {
  std::string node_name;  ///< required: spec.nodeName, pool name, generateName
  std::string node_uid;   ///< optional: adds the ownerReference to the Node
  std::string driver = "nodetopo.dev";
  K8sVersion version = K8sVersion::k1_34;
  SharingConfig sharing;
  std::int64_t generation = 1;  ///< pool.generation; the publisher bumps it on change
};

}  // namespace nodetopo::exporters::dra
