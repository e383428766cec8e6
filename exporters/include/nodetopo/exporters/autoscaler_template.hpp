// Node-group templates for autoscalers: what a node of this shape will publish, for a node that
// does not exist yet (docs/autoscaler.md).
//
// A template starts from the node-local ResourceSlices exactly as the publisher builds them
// (core::build_slices, i.e. dra::build_resource_slices) for a placeholder node, and keeps only
// what every machine of the same shape publishes identically: each attribute is classified once,
// in one table (attribute_rules()), as shape-stable (kept verbatim), a binding (a per-node id
// whose only meaning is which devices share it: kept, renamed to a template-local id) or
// node-unique (left out, with a warning that selectors on it cannot work from zero). The
// template's fingerprint hashes the node's shape description (topology/shape.hpp) and every kept
// attribute, so two nodes share a fingerprint exactly when their templates are identical.
//
// The renderers (autoscaler_render.hpp) turn a template into Cluster API annotations, AWS ASG
// tags, plain ResourceSlices for custom providers, and a slice template with attribute bindings
// (`karpenter`). Pure: no I/O.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/exporters/dra_types.hpp>
#include <nodetopo/exporters/node_labels.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::exporters::autoscaler {

/// What stands in a template for the name of the node (spec.nodeName, generateName) and of its
/// pool (spec.pool.name; the publisher uses the node name): shell-style, so `envsubst` or the
/// provider fills them in. `topo fit --template` substitutes a synthetic node name.
inline constexpr std::string_view kNodePlaceholder = "${NODE_NAME}";
inline constexpr std::string_view kPoolPlaceholder = "${POOL_NAME}";
/// The node name the slices are built with before the placeholders replace it: a valid DNS
/// label, so that the builder and its limit validator run unchanged, and a constant, so that
/// everything the builder seeds with the node name is the same on every machine.
inline constexpr std::string_view kBuildNodeName = "nodetopo-template-node";
/// The label (and annotation) carrying the template fingerprint.
inline constexpr std::string_view kTemplateShapeLabel = "nodetopo.dev/template-shape";
/// Version of the fingerprint's input format; part of the hashed text.
inline constexpr std::string_view kTemplateFormat = "nodetopo-template/1";

enum class AttributeClass : std::uint8_t {
  kShapeStable,  ///< the same on every machine of this shape: kept verbatim
  kBinding,      ///< a per-node id; only equality between one node's devices means anything
  kNodeUnique,   ///< differs between machines of one shape: left out of the template
};
std::string_view to_string(AttributeClass c);

/// One row of the classification table.
struct AttributeRule {
  std::string_view key;  ///< as in Device::attributes ("uuid", "resource.kubernetes.io/numaNode")
  AttributeClass cls;
  std::string_view why;
};

/// The classification of every attribute the slice builder writes (docs/autoscaler.md prints
/// the same table). Capacities (memory, cores) are all shape-stable.
std::span<const AttributeRule> attribute_rules();

/// The rule for `key`, or nullptr. An attribute missing from the table is treated as
/// node-unique: a new attribute stays out of templates until someone decides about it.
const AttributeRule* find_rule(std::string_view key);
AttributeClass classify_attribute(std::string_view key);

/// An attribute left out of the template, with the devices that had it.
struct OmittedAttribute {
  std::string key;
  std::string why;
  std::vector<std::string> devices;
};

/// Which devices share one value of an attribute ("which GPUs and NICs sit under one PCIe
/// root"): the relation Karpenter-style providers must reproduce for matchAttribute to hold.
struct BindingGroup {
  std::string value;                 ///< as published in the template
  std::vector<std::string> devices;  ///< device names, in slice order
};
struct Binding {
  std::string relation;   ///< "pcieRoot", "pcieSwitch", "numaNode", "nvlinkDomain", "xgmiDomain"
  std::string attribute;  ///< the attribute key carrying it
  std::vector<BindingGroup> groups;
};

/// CPU, memory and architecture of the node, for the capacity an autoscaler assumes.
struct NodeCapacity {
  std::uint32_t cpus = 0;  ///< logical CPUs
  /// DRAM of all NUMA nodes, each rounded up to the installed 8 GiB step, less 1/32 for what
  /// firmware and the kernel keep: the same on every machine of the shape.
  std::uint64_t memory_bytes = 0;
  std::string architecture;  ///< "x86_64", ...
};

struct Template {
  /// The publisher's slices with placeholders for node and pool, node-unique attributes left
  /// out, bindings renamed.
  std::vector<dra::ResourceSlice> slices;
  std::vector<OmittedAttribute> omitted;
  std::vector<Binding> bindings;
  /// The node's labels (node_labels.hpp) plus kTemplateShapeLabel.
  LabelMap labels;
  std::string fingerprint;  ///< 12 hex digits: the label value
  std::string fingerprint_sha256;
  NodeCapacity capacity;
  std::string driver;  ///< the slices' driver
  /// Whole GPUs (devices of type gpu that are not partitions): Cluster API's gpu-count.
  std::uint32_t gpu_count = 0;

  /// One line per omitted attribute, for stderr: what was left out and why selectors on it
  /// cannot work from zero.
  [[nodiscard]] std::vector<std::string> warnings() const;
};

/// Builds the template from the slices the publisher builds for this node with node name
/// kBuildNodeName, the node's labels and its topology (capacity, shape description).
Template build_template(const Topology& topology, std::vector<dra::ResourceSlice> slices,
                        LabelMap labels);

}  // namespace nodetopo::exporters::autoscaler
