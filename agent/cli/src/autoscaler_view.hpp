// What an autoscaler's template node holds, read from a template file (`topo export
// autoscaler-template` output, any format), and the report of which claims can scale a node
// group from zero. Shared by `topo export autoscaler-template --claims` and `topo fit
// --template`, so both reason about the same slices.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/base/error.hpp>
#include <nodetopo/fit/load.hpp>

namespace nodetopo::cli {

/// The node name `topo fit --template` gives the template node when none is asked for.
inline constexpr std::string_view kTemplateNodeName = "template-node";

struct TemplateView {
  /// "resourceslices", "karpenter", "capi", "aws-asg-tags": what the file was.
  std::string format;
  std::vector<fit::ResourceSlice> slices;
  /// Facts about the view a user should know ("an AWS template carries no ResourceSlices").
  std::vector<std::string> notes;
};

/// Reads a template: ResourceSlices (a YAML stream or a List), a NodeShapeTemplate
/// (its spec.resourceSlices), a Cluster API MachineDeployment/MachineSet (the slice Cluster
/// Autoscaler synthesises from its capacity annotations) or AWS ASG tags (no slices). The
/// placeholders ${NODE_NAME} and ${POOL_NAME} become `node`. Errors name `source` and the
/// document.
Result<TemplateView> load_template_view(std::string_view text, const std::string& source,
                                        const std::string& node);

/// load_template_view() on the contents of the file `path`.
Result<TemplateView> read_template_view(const std::string& path, const std::string& node);

/// One claim's verdict.
struct ClaimVerdict {
  std::string claim;
  /// "scales-from-zero": the autoscaler's view and a real node both fit it;
  /// "node-unique": it names an attribute no template carries: never from zero;
  /// "not-in-view": a node of this shape fits it, the autoscaler's view does not: never;
  /// "no-fit": no node of this shape fits it (scaling this group cannot help);
  /// "view-only": the view fits it but a real node would not: the autoscaler would add a node
  /// the pod cannot use.
  std::string verdict;
  std::string reason;
};

struct ReportInputs {
  fit::Inputs claims;                           ///< claims and classes (finish_loading done)
  TemplateView full;                            ///< the whole template (what a real node publishes)
  TemplateView view;                            ///< what the autoscaler sees
  std::vector<std::string> unique_attributes;   ///< left out of the template
  std::vector<std::string> binding_attributes;  ///< per-node ids: equality only
  std::string k8s_version = "1.34";
};

/// Runs every claim through the fit library against the view and against the full template.
std::vector<ClaimVerdict> classify_claims(const ReportInputs& in);

std::string render_report_text(const std::vector<ClaimVerdict>& verdicts, std::string_view view);
nlohmann::ordered_json render_report_json(const std::vector<ClaimVerdict>& verdicts,
                                          std::string_view view);

}  // namespace nodetopo::cli
