// The forms an autoscaler template (autoscaler_template.hpp) is delivered in, and the synthetic
// ResourceSlice Cluster Autoscaler's Cluster API provider builds from its annotations.
//
// Annotation and tag names are those Cluster Autoscaler reads (cloudprovider/clusterapi and
// cloudprovider/aws of kubernetes/autoscaler; docs/autoscaler.md cites them). Pure: no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/base/error.hpp>
#include <nodetopo/exporters/autoscaler_template.hpp>

namespace nodetopo::exporters::autoscaler {

/// Cluster API capacity annotations (scale from zero).
inline constexpr std::string_view kCapiPrefix = "capacity.cluster-autoscaler.kubernetes.io/";
inline constexpr std::string_view kCapiCpu = "capacity.cluster-autoscaler.kubernetes.io/cpu";
inline constexpr std::string_view kCapiMemory = "capacity.cluster-autoscaler.kubernetes.io/memory";
inline constexpr std::string_view kCapiMaxPods =
    "capacity.cluster-autoscaler.kubernetes.io/maxPods";
inline constexpr std::string_view kCapiLabels = "capacity.cluster-autoscaler.kubernetes.io/labels";
inline constexpr std::string_view kCapiTaints = "capacity.cluster-autoscaler.kubernetes.io/taints";
inline constexpr std::string_view kCapiDraDriver =
    "capacity.cluster-autoscaler.kubernetes.io/dra-driver";
inline constexpr std::string_view kCapiGpuCount =
    "capacity.cluster-autoscaler.kubernetes.io/gpu-count";
/// AWS ASG tag prefixes.
inline constexpr std::string_view kAwsLabelTag = "k8s.io/cluster-autoscaler/node-template/label/";
inline constexpr std::string_view kAwsTaintTag = "k8s.io/cluster-autoscaler/node-template/taint/";
inline constexpr std::string_view kAwsResourceTag =
    "k8s.io/cluster-autoscaler/node-template/resources/";

/// A node taint "key[=value]:Effect".
struct Taint {
  std::string key;
  std::string value;
  std::string effect;  ///< NoSchedule, PreferNoSchedule, NoExecute
};
/// Parses "key[=value]:Effect"; the error says what is wrong.
Result<Taint> parse_taint(std::string_view text);

/// What the node group adds that the hardware does not say.
struct GroupOptions {
  std::int64_t max_pods = 110;  ///< Cluster Autoscaler's own default when the annotation is absent
  std::vector<Taint> taints;
  std::string kind = "MachineDeployment";  ///< or MachineSet (capi)
  std::string name;                        ///< object name; empty: "nodetopo-<fingerprint>"
  std::string name_space;
  std::string asg_name;  ///< aws-asg-tags ResourceId; empty: "${ASG_NAME}"
};

/// The capacity annotations Cluster Autoscaler's Cluster API provider reads, plus the template
/// fingerprint. dra-driver and gpu-count only when the template has GPUs.
std::map<std::string, std::string> capi_annotations(const Template& t, const GroupOptions& o);

/// `capi`: a cluster.x-k8s.io/v1beta1 MachineDeployment (or MachineSet) holding only the
/// annotations, as YAML: a merge patch for the node group's object.
std::string render_capi(const Template& t, const GroupOptions& o);

/// `aws-asg-tags`: the node-template label, taint and resource tags, as the JSON input of
/// `aws autoscaling create-or-update-tags --cli-input-json`.
std::string render_aws_tags(const Template& t, const GroupOptions& o);

/// `resourceslices`: the template's slices, a YAML stream with the placeholders.
std::string render_template_slices(const Template& t);

/// `karpenter`: a nodetopo.dev/v1alpha1 NodeShapeTemplate: labels, capacity, the slices, the
/// attribute bindings and what was left out. YAML.
std::string render_karpenter(const Template& t, const GroupOptions& o);

/// The ResourceSlice Cluster Autoscaler's Cluster API provider builds for a template node of a
/// group annotated with dra-driver and gpu-count: one slice, devices gpu-0..gpu-<n-1> with the
/// single attribute type=gpu, pool = node name, resourceSliceCount 1 (kubernetes/autoscaler
/// #10200; before it 0, which made the pool incomplete). nullopt without dra-driver or with a
/// zero gpu-count (the provider then returns no slices); an error for a gpu-count that is not a
/// non-negative integer.
Result<std::optional<dra::ResourceSlice>> capi_view_slice(
    const std::map<std::string, std::string>& annotations, const std::string& node_name);

}  // namespace nodetopo::exporters::autoscaler
