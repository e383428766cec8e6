// DRA ResourceSlices (`resource.k8s.io/v1`, Kubernetes 1.34+) describing this node's
// accelerators and physical NICs, and GPUs published for fractional sharing.
//
// The objects are built as plain structs (ResourceSlice below), checked by the project's own
// limit validator (slice_validator.hpp) and only then serialised, so that nothing the API server
// would refuse is ever printed. Attribute and sharing catalogue: docs/dra.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/base/error.hpp>
#include <nodetopo/exporters/export_config.hpp>
#include <nodetopo/topology/topology.hpp>

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

/// The devices of a topology as DRA devices (no slicing yet), plus the counter sets of
/// partitionable GPUs. Errors: sharing not possible for the version (partitionable before 1.35).
struct DeviceSet {
  std::vector<Device> devices;
  std::vector<CounterSet> counter_sets;
};
Result<DeviceSet> build_devices(const Topology& topology, const SliceOptions& options);

/// Packs devices and counter sets into the slices of one pool: counter sets in slices of their
/// own (at most 8 each; from 1.35 a slice holds sharedCounters or devices, not both), devices at
/// most 128 per slice, 64 when a slice holds a device with taints or counter consumption.
/// resourceSliceCount is the number of slices produced.
std::vector<ResourceSlice> pack_slices(DeviceSet set, const SliceOptions& options);

/// build_devices() + pack_slices() + validation: the slices, or an error listing every rule
/// broken (object and field named).
Result<std::vector<ResourceSlice>> build_resource_slices(const Topology& topology,
                                                         const SliceOptions& options);

/// One slice as the API object (apiVersion, kind, metadata, spec), field names as in
/// k8s.io/api resource/v1.
nlohmann::ordered_json slice_to_json(const ResourceSlice& slice);

/// Every slice as a YAML multi-document stream.
std::string render_slices_yaml(std::span<const ResourceSlice> slices);
/// Every slice in a `v1` List, two-space indented JSON.
std::string render_slices_json(std::span<const ResourceSlice> slices);

}  // namespace nodetopo::exporters::dra
