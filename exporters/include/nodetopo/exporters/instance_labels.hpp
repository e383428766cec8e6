// The reservation and instance labels: nodetopo.dev/instance-type, nodetopo.dev/capacity-type and
// nodetopo.dev/reservation, each taken from the first source that has it, in this order:
//
//   1. the operator's explicit value: etc/nodetopo/export.yaml under the host root (`instance:`),
//      else the agent config (`instance.*`);
//   2. the Node's own well-known and provider labels (the agent's Kubernetes sink reads them from
//      the Node it already GETs): node.kubernetes.io/instance-type, karpenter.sh/capacity-type,
//      karpenter.k8s.aws/capacity-reservation-id, cloud.google.com/reservation-name, ...;
//   3. cloud-init's instance data on disk (run/cloud-init/instance-data.json under the root).
//
// Never the instance metadata service: the agent opens no connection to a link-local address.
// DMI names the platform only (it is shown, never used for a label: on EC2 Nitro the DMI product
// name happens to be the instance type, elsewhere it is a board name). The whole table with the
// provider documents behind each key: docs/labels.md.
//
// Pure: the callers read the files and the Node and pass the text and the labels in.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/base/error.hpp>

namespace nodetopo::exporters {

/// Root-relative path of cloud-init's instance data (world-readable, sensitive keys redacted).
inline constexpr std::string_view kCloudInitInstanceDataPath = "run/cloud-init/instance-data.json";
/// Larger instance data is refused (real files are a few tens of KiB).
inline constexpr std::size_t kCloudInitMaxBytes = std::size_t{1} << 20;

/// Label names (after "nodetopo.dev/").
inline constexpr std::string_view kInstanceTypeLabel = "instance-type";
inline constexpr std::string_view kCapacityTypeLabel = "capacity-type";
inline constexpr std::string_view kReservationLabel = "reservation";

/// A value and where it came from, in words a person can check ("node label
/// karpenter.sh/capacity-type", "cloud-init ds.meta_data.instance-type").
struct SourcedValue {
  std::string value;
  std::string source;
  bool operator==(const SourcedValue&) const = default;
};

/// Label name ("instance-type", ...) -> value.
using InstanceValues = std::map<std::string, SourcedValue>;

/// What cloud-init's instance data says.
struct CloudInitFacts {
  InstanceValues values;
  std::string cloud_name;  ///< v1.cloud_name ("aws", "gce", ...), for the platform line
};

/// Everything the choice needs except the Node's labels.
struct InstanceInputs {
  InstanceValues config;  ///< explicit values, already merged (export.yaml over agent config)
  CloudInitFacts cloud_init;
  /// Why the instance data could not be used (too big, not a regular file, bad JSON), naming the
  /// file; empty when it was read or is absent.
  std::string cloud_init_error;
  /// DMI sys_vendor / product_name, shown as the platform; never a label value.
  std::string platform;
};

/// The chosen labels: full key ("nodetopo.dev/instance-type") -> value and source.
using InstanceLabels = std::map<std::string, SourcedValue>;

/// Parses cloud-init's instance-data.json text. Keys read: v1.instance_type, else
/// ds.meta_data.instance-type (EC2) for the instance type; ds.meta_data.instance-life-cycle
/// ("spot", "on-demand") for the capacity type; v1.cloud_name. Values that are not valid label
/// values are ignored. Errors (naming `source`): not JSON, not an object at the top.
[[nodiscard]] Result<CloudInitFacts> parse_cloud_init(std::string_view text,
                                                      std::string_view source);

/// The Node label keys the choice reads (the agent keeps only these from the Node it reads, so a
/// change of any other label never renders anything again).
const std::vector<std::string>& instance_node_label_keys();

/// Checks an operator's value for `name` (a label value; capacity-type one of on-demand, spot,
/// reserved). Returns the reason it is refused, or an empty string.
[[nodiscard]] std::string check_instance_value(std::string_view name, std::string_view value);

/// The labels by precedence: config, then `node_labels`, then cloud-init, else none.
[[nodiscard]] InstanceLabels choose_instance_labels(
    const InstanceInputs& inputs, const std::map<std::string, std::string>& node_labels);

/// "nodetopo.dev/instance-type=g4dn.xlarge  (cloud-init ds.meta_data.instance-type)" lines, plus
/// the platform and any cloud-init problem: the debug view of the choice.
[[nodiscard]] std::string describe_instance_labels(const InstanceLabels& labels,
                                                   const InstanceInputs& inputs);

}  // namespace nodetopo::exporters
