// `topo export autoscaler-template`: a node-group template for an autoscaler, from a real or mock
// node: Cluster API annotations, AWS ASG tags, plain ResourceSlices or a slice template with
// attribute bindings (docs/autoscaler.md).
//
// The slices are the publisher's (core::build_slices) for a placeholder node; the template and
// its renderings are the pure exporters' (exporters/autoscaler_*.hpp). With --claims, each claim
// runs through the fit library against what the autoscaler would see and against the whole
// template, and a report says which can scale the group from zero.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <nodetopo/cli/command_output.hpp>
#include <nodetopo/cli/commands.hpp>
#include <nodetopo/cli/host_options.hpp>
#include <nodetopo/core/render.hpp>
#include <nodetopo/exporters/autoscaler_render.hpp>
#include <nodetopo/exporters/node_labels.hpp>

#include "autoscaler_view.hpp"

namespace nodetopo::cli {

namespace {

namespace as = exporters::autoscaler;
constexpr std::string_view kCommand = "export autoscaler-template";

struct TemplateCommand {
  core::HostSource source;
  std::string format = "capi";
  core::RenderOptions render;
  std::vector<std::string> taints;
  as::GroupOptions group;
  std::vector<std::string> claims;
  std::vector<std::string> classes;
  std::string report;
  std::string output;
};

Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot read the file", path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Result<as::Template> build(TemplateCommand& opts) {
  auto host = opts.source.open();
  if (!host) return host.error();
  // Still the only thread: the one place the environment is written (probes/probe.hpp).
  core::write_process_environment(*host);
  auto snapshot = core::take_snapshot(
      *host, {.node_name = std::string(as::kBuildNodeName), .with_digest = false});
  if (!snapshot) return snapshot.error();
  // The publisher's slices, for a node whose name is the constant placeholder.
  snapshot->node_name = std::string(as::kBuildNodeName);
  auto slices = core::build_slices(*snapshot, opts.render);
  if (!slices) return slices.error();
  exporters::LabelMap labels = exporters::compute_labels(snapshot->topology());
  return as::build_template(snapshot->topology(), std::move(slices.value()), std::move(labels));
}

std::string render(const as::Template& t, const TemplateCommand& opts) {
  if (opts.format == "aws-asg-tags") return as::render_aws_tags(t, opts.group);
  if (opts.format == "resourceslices") return as::render_template_slices(t);
  if (opts.format == "karpenter") return as::render_karpenter(t, opts.group);
  return as::render_capi(t, opts.group);
}

// --claims: every claim against the autoscaler's view of `doc` and against the whole template.
Result<std::string> report(const as::Template& t, const TemplateCommand& opts,
                           const std::string& doc) {
  ReportInputs in;
  in.k8s_version = opts.render.k8s_version;
  const auto load = [&](const std::vector<std::string>& files,
                        fit::DocumentRole role) -> Result<void> {
    for (const std::string& f : files) {
      auto text = read_text(f);
      if (!text) return text.error();
      if (auto r = fit::load_documents(*text, f, role, in.claims); !r) return r;
    }
    return {};
  };
  if (auto r = load(opts.claims, fit::DocumentRole::kClaims); !r) return r.error();
  if (auto r = load(opts.classes, fit::DocumentRole::kClasses); !r) return r.error();
  if (auto r = fit::finish_loading(in.claims); !r) return r.error();
  if (in.claims.claims.empty()) {
    return make_error(ErrorCode::kInvalid,
                      "--claims: no ResourceClaim, ResourceClaimTemplate or Pod with claims");
  }
  const std::string node(kTemplateNodeName);
  auto full = load_template_view(as::render_template_slices(t), "the template", node);
  if (!full) return full.error();
  auto view = load_template_view(doc, "the " + opts.format + " template", node);
  if (!view) return view.error();
  in.full = std::move(full.value());
  in.view = std::move(view.value());
  for (const as::OmittedAttribute& o : t.omitted)
    in.unique_attributes.push_back(o.key);
  for (const as::AttributeRule& rule : as::attribute_rules()) {
    if (rule.cls == as::AttributeClass::kBinding) in.binding_attributes.emplace_back(rule.key);
  }
  const std::vector<ClaimVerdict> verdicts = classify_claims(in);
  std::string text;
  for (const std::string& n : in.view.notes)
    text += "note: " + n + "\n";
  text += render_report_text(verdicts, opts.format);
  std::cerr << text;
  return render_report_json(verdicts, opts.format).dump(2) + "\n";
}

int run(TemplateCommand& opts) {
  for (const std::string& s : opts.taints) {
    auto taint = as::parse_taint(s);
    if (!taint) {
      std::cerr << "topo " << kCommand << ": --taint: " << taint.error().message << "\n";
      return kExitUsage;
    }
    opts.group.taints.push_back(std::move(taint.value()));
  }
  if (!opts.report.empty() && opts.claims.empty()) {
    std::cerr << "topo " << kCommand << ": --report needs --claims\n";
    return kExitUsage;
  }
  auto t = build(opts);
  if (!t) return fail(kCommand, t.error().describe());
  for (const std::string& w : t->warnings())
    std::cerr << "topo " << kCommand << ": warning: " << w << "\n";
  if (opts.format == "aws-asg-tags") {
    std::cerr << "topo " << kCommand
              << ": note: AWS ASG tags carry no ResourceSlices; Cluster Autoscaler's AWS "
                 "provider builds its template node without any, so DRA claims cannot scale "
                 "an ASG from zero (docs/autoscaler.md)\n";
  }
  const std::string doc = render(*t, opts);
  if (!opts.claims.empty()) {
    auto json = report(*t, opts, doc);
    if (!json) {  // bad claims are bad input, as for `topo fit`
      std::cerr << "topo " << kCommand << ": " << json.error().describe() << "\n";
      return kExitUsage;
    }
    if (!opts.report.empty()) {
      if (int rc = emit(kCommand, opts.report, *json); rc != kExitOk) return rc;
    }
  }
  return emit(kCommand, opts.output, doc);
}

}  // namespace

void register_autoscaler_template(CLI::App& parent, CommandRunner& runner) {
  auto opts = std::make_shared<TemplateCommand>();
  CLI::App* cmd = parent.add_subcommand(
      "autoscaler-template",
      "A node-group template for an autoscaler from this node's shape: Cluster API annotations, "
      "AWS ASG tags, ResourceSlices for custom providers, or a slice template with attribute "
      "bindings (karpenter). Node-unique attributes are left out with a warning. Exit 0 written, "
      "1 the host or its slices failed, 2 usage or unreadable --claims");
  add_host_options(*cmd, opts->source.spec());
  cmd->add_option("--format", opts->format,
                  "capi: MachineDeployment/MachineSet capacity annotations; aws-asg-tags: ASG "
                  "node-template tags (JSON for aws autoscaling create-or-update-tags); "
                  "resourceslices: the node-local slices with ${NODE_NAME}/${POOL_NAME} "
                  "placeholders; karpenter: a NodeShapeTemplate with the slices and the "
                  "attribute bindings")
      ->check(CLI::IsMember({"capi", "aws-asg-tags", "resourceslices", "karpenter"}))
      ->capture_default_str();
  cmd->add_option("--driver", opts->render.driver,
                  "DRA driver name (default: the settings file, else nodetopo.dev)");
  cmd->add_option("--k8s-version", opts->render.k8s_version,
                  "Kubernetes release the slices (and the --claims report) are for")
      ->check(CLI::IsMember({"1.34", "1.35", "1.36"}))
      ->capture_default_str();
  cmd->add_option("--sharing", opts->render.sharing,
                  "Publish GPUs for sharing, as `topo export resourceslices --sharing`")
      ->check(CLI::IsMember({"none", "consumable", "partitionable"}));
  cmd->add_option("--max-pods", opts->group.max_pods, "Pods per node the autoscaler assumes")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--taint", opts->taints,
                  "A taint the node group's nodes get: KEY[=VALUE]:EFFECT (repeatable)")
      ->type_name("TAINT");
  cmd->add_option("--kind", opts->group.kind, "capi: the node group's object kind")
      ->check(CLI::IsMember({"MachineDeployment", "MachineSet"}))
      ->capture_default_str();
  cmd->add_option("--name", opts->group.name,
                  "capi, karpenter: metadata.name (default: nodetopo-<fingerprint>)");
  cmd->add_option("--namespace", opts->group.name_space, "capi, karpenter: metadata.namespace");
  cmd->add_option("--asg", opts->group.asg_name,
                  "aws-asg-tags: the Auto Scaling group's name (default: ${ASG_NAME})");
  cmd->add_option("--claims", opts->claims,
                  "Files with ResourceClaims, ResourceClaimTemplates or Pods (and DeviceClasses): "
                  "report on stderr which can scale this node group from zero, and why not")
      ->type_name("FILE");
  cmd->add_option("--class", opts->classes, "Files with DeviceClasses for --claims")
      ->type_name("FILE");
  cmd->add_option("--report", opts->report, "Also write the --claims report as JSON to FILE")
      ->type_name("FILE");
  cmd->add_option("--output,-o", opts->output, "Write to FILE atomically instead of stdout")
      ->type_name("FILE");
  cmd->callback([&runner, opts] { runner = [opts] { return run(*opts); }; });
}

}  // namespace nodetopo::cli
