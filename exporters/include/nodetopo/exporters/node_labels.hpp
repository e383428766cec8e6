// Node labels under `nodetopo.dev/` summarising the node's shape (catalogue: docs/labels.md), and
// the forms they are delivered in: plain key=value lines, an NFD feature file (features.d), an
// NFD NodeFeature object, and a Node JSON merge patch.
//
// Every key and value is checked against the Kubernetes label rules before rendering; values are
// derived only from facts that do not change while the machine is unchanged (no link states,
// no clocks), so two runs give byte-identical output (no label churn).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/base/error.hpp>
#include <nodetopo/exporters/instance_labels.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::exporters {

inline constexpr std::string_view kLabelDomain = "nodetopo.dev";

/// Full label key -> value, sorted by key.
using LabelMap = std::map<std::string, std::string>;

/// The labels of a topology (keys "nodetopo.dev/<name>"). Values that cannot be made valid are
/// left out rather than written invalid; validate_labels() holds on every result.
LabelMap compute_labels(const Topology& topology);

/// The same plus the reservation and instance labels chosen by choose_instance_labels()
/// (instance_labels.hpp): the inputs are gathered by the callers, never here.
LabelMap compute_labels(const Topology& topology, const InstanceLabels& instance);

/// One message per invalid key or value (label key rules, value rules, reserved prefixes).
std::vector<std::string> validate_labels(const LabelMap& labels);

/// "key=value" lines in key order.
std::string render_labels_plain(const LabelMap& labels);

/// An NFD feature file (features.d): optional "# +expiry-time=<RFC3339>" first, then
/// "key=value" lines. `expiry` empty: no expiry line. The caller validates `expiry`.
std::string render_labels_nfd(const LabelMap& labels, std::string_view expiry);

/// The NFD NodeFeature object (nfd.k8s-sigs.io/v1alpha1) named "<node>-nodetopo", labelled
/// nfd.node.kubernetes.io/node-name=<node>, in `name_space` when not empty. Error when the node
/// name cannot be a label value (more than 63 characters).
Result<nlohmann::ordered_json> labels_to_nodefeature(const LabelMap& labels,
                                                     std::string_view node_name,
                                                     std::string_view name_space);

/// A JSON merge patch for the Node: {"metadata":{"labels":{...}}}, one line.
std::string render_labels_patch(const LabelMap& labels);

}  // namespace nodetopo::exporters
