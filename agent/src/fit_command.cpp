// `topo fit`: runs the kube-scheduler's DRA allocation for this node offline and explains it.
//
// The node's slices are either read from files (any driver's) or rendered from the host the
// way `topo export resourceslices` renders them: the same discovery (HostSource), the same
// settings file (etc/nodetopo/export.yaml under the root) and the same exporter functions
// (build_resource_slices, slice_to_json). Exit codes follow the scheduler's split: 0 the claims
// fit, 1 they do not (unschedulable), 2 bad input or a selector error.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <nodetopo/agent/command_output.hpp>
#include <nodetopo/agent/commands.hpp>
#include <nodetopo/agent/host_source.hpp>
#include <nodetopo/exporters/export_config.hpp>
#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/fit/explain.hpp>
#include <nodetopo/fit/load.hpp>

namespace nodetopo::agent {

namespace {

constexpr int kExitFits = 0;
constexpr int kExitNoFit = 1;
constexpr int kExitBadInput = 2;

struct FitCommand {
  HostSource source;
  std::vector<std::string> claims;
  std::vector<std::string> classes;
  std::vector<std::string> slices;
  std::vector<std::string> allocated;
  std::string node;
  std::string k8s = "1.34";
  std::string sharing;
  std::vector<std::string> feature_gates;
  std::string format = "text";
};

int bad_input(const std::string& message) {
  std::cerr << "topo fit: " << message << "\n";
  return kExitBadInput;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot read the file", path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return std::isspace(c) == 0; };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// The node's slices as `topo export resourceslices` renders them.
Result<std::vector<fit::ResourceSlice>> render_host_slices(const FitCommand& opts,
                                                           exporters::dra::K8sVersion version,
                                                           std::string& node) {
  auto discovery = opts.source.discover();
  if (!discovery) return discovery.error();
  auto root = opts.source.open();
  if (!root) return root.error();
  exporters::ExportConfig config;
  const std::string config_path(exporters::kExportConfigPath);
  if (root->exists(config_path)) {
    auto text = root->read_file(config_path);
    if (!text) return text.error();
    auto parsed = exporters::parse_export_config(text.value(), root->host_path(config_path));
    if (!parsed) return parsed.error();
    config = std::move(parsed.value());
  }
  if (node.empty()) {
    if (const char* env = std::getenv("NODE_NAME"); env != nullptr && *env != '\0')
      node = env;  // NOLINT
  }
  for (const char* file : {"proc/sys/kernel/hostname", "etc/hostname"}) {
    if (!node.empty()) break;
    if (auto text = root->read_file(file, 4096)) {
      node = trim(text.value());
      std::transform(node.begin(), node.end(), node.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    }
  }
  if (node.empty()) node = "node";
  exporters::dra::SliceOptions o;
  o.node_name = node;
  o.driver = config.driver.value_or("nodetopo.dev");
  o.version = version;
  if (config.sharing) o.sharing = *config.sharing;
  if (!opts.sharing.empty()) {
    auto mode = exporters::parse_sharing_mode(opts.sharing);
    if (!mode) return mode.error();
    o.sharing.mode = mode.value();
  }
  auto slices = exporters::dra::build_resource_slices(discovery->topology, o);
  if (!slices) return slices.error();
  std::vector<fit::ResourceSlice> out;
  for (std::size_t i = 0; i < slices->size(); ++i) {
    auto s = fit::parse_resource_slice(exporters::dra::slice_to_json((*slices)[i]).dump(),
                                       "rendered slice " + std::to_string(i + 1));
    if (!s) return s.error();
    s->name = (*slices)[i].generate_name + std::to_string(i + 1);  // what the API server adds
    out.push_back(std::move(s.value()));
  }
  return out;
}

Result<void> apply_feature_gates(const std::vector<std::string>& gates, fit::Features& f) {
  for (const std::string& g : gates) {
    const auto eq = g.find('=');
    const std::string name = g.substr(0, eq);
    const std::string value = eq == std::string::npos ? "true" : g.substr(eq + 1);
    if (value != "true" && value != "false") {
      return make_error(ErrorCode::kInvalid,
                        "--feature-gates " + g + ": value must be true or false");
    }
    const bool on = value == "true";
    if (name == "DRAAdminAccess") {
      f.admin_access = on;
    } else if (name == "DRAPrioritizedList") {
      f.prioritized_list = on;
    } else if (name == "DRADeviceTaints") {
      f.device_taints = on;
    } else if (name == "DRAPartitionableDevices") {
      f.partitionable_devices = on;
    } else if (name == "DRAConsumableCapacity") {
      f.consumable_capacity = on;
    } else if (name == "DRADeviceBindingConditions") {
      f.binding_conditions = on;
    } else {
      return make_error(
          ErrorCode::kInvalid,
          "--feature-gates: unknown gate " + name +
              " (known: DRAAdminAccess, DRAPrioritizedList, DRADeviceTaints, "
              "DRAPartitionableDevices, DRAConsumableCapacity, DRADeviceBindingConditions)");
    }
  }
  return {};
}

int run_fit(FitCommand& opts) {
  const int minor = std::stoi(opts.k8s.substr(2));
  const auto version = static_cast<fit::K8sVersion>(minor);
  fit::AllocateOptions alloc;
  alloc.features = fit::Features::for_version(version);
  if (auto r = apply_feature_gates(opts.feature_gates, alloc.features); !r)
    return bad_input(r.error().describe());

  fit::Inputs inputs;
  const auto load = [&](const std::vector<std::string>& files,
                        fit::DocumentRole role) -> Result<void> {
    for (const std::string& f : files) {
      auto text = read_file(f);
      if (!text) return text.error();
      if (auto r = fit::load_documents(text.value(), f, role, inputs); !r) return r;
    }
    return {};
  };
  if (auto r = load(opts.claims, fit::DocumentRole::kClaims); !r)
    return bad_input(r.error().describe());
  if (auto r = load(opts.classes, fit::DocumentRole::kClasses); !r)
    return bad_input(r.error().describe());
  if (auto r = load(opts.allocated, fit::DocumentRole::kAllocated); !r)
    return bad_input(r.error().describe());
  if (auto r = fit::finish_loading(inputs); !r) return bad_input(r.error().describe());
  if (inputs.claims.empty())
    return bad_input("no ResourceClaim, ResourceClaimTemplate or Pod with claims in the inputs");

  std::string node = opts.node;
  if (!opts.slices.empty()) {
    fit::Inputs slice_inputs;
    for (const std::string& f : opts.slices) {
      auto text = read_file(f);
      if (!text) return bad_input(text.error().describe());
      if (auto r = fit::load_documents(text.value(), f, fit::DocumentRole::kSlices, slice_inputs);
          !r) {
        return bad_input(r.error().describe());
      }
    }
    inputs.slices = std::move(slice_inputs.slices);
    inputs.classes.insert(inputs.classes.end(), slice_inputs.classes.begin(),
                          slice_inputs.classes.end());
    if (node.empty()) {
      std::set<std::string> nodes;
      for (const fit::ResourceSlice& s : inputs.slices)
        if (!s.node_name.empty()) nodes.insert(s.node_name);
      if (nodes.size() > 1) {
        return bad_input("the slices belong to " + std::to_string(nodes.size()) + " nodes (" +
                         *nodes.begin() + ", ...): choose one with --node");
      }
      node = nodes.empty() ? "node" : *nodes.begin();
    }
  } else {
    auto exporter_version = exporters::dra::parse_k8s_version(opts.k8s);
    if (!exporter_version) return bad_input(exporter_version.error().describe());
    auto rendered = render_host_slices(opts, exporter_version.value(), node);
    if (!rendered) return bad_input("rendering the node's slices: " + rendered.error().describe());
    inputs.slices = std::move(rendered.value());
  }
  alloc.node = node;

  const fit::Explanation e = fit::explain(inputs, alloc, opts.k8s);
  const std::string doc =
      opts.format == "json" ? fit::render_json(e).dump(2) + "\n" : fit::render_text(e);
  if (int rc = emit("fit", "", doc); rc != kExitOk) return kExitBadInput;
  switch (e.outcome.status) {
    case fit::AllocateOutcome::Status::kFits:
      return kExitFits;
    case fit::AllocateOutcome::Status::kUnschedulable:
      return kExitNoFit;
    case fit::AllocateOutcome::Status::kError:
      return kExitBadInput;
  }
  return kExitBadInput;
}

}  // namespace

void register_fit_command(CLI::App& app, CommandRunner& runner) {
  auto opts = std::make_shared<FitCommand>();
  CLI::App* cmd = app.add_subcommand(
      "fit",
      "Would these claims fit on this node? Runs the kube-scheduler's DRA allocation offline and "
      "explains every step. Exit 0 fits, 1 does not fit, 2 bad input or a selector error");
  cmd->add_option("claims", opts->claims,
                  "Files with ResourceClaims, ResourceClaimTemplates, or a Pod and the claims and "
                  "templates it names (YAML or JSON, several documents per file; DeviceClasses "
                  "may be included)")
      ->required()
      ->type_name("CLAIM");
  cmd->add_option("--class", opts->classes, "Files with DeviceClasses")->type_name("FILE");
  CLI::Option* slices = cmd->add_option("--slices", opts->slices,
                                        "Read the node's ResourceSlices (any driver's) from FILE "
                                        "instead of rendering them from "
                                        "the host")
                            ->type_name("FILE");
  opts->source.add_options(*cmd);
  cmd->add_option("--allocated", opts->allocated,
                  "Files with ResourceClaims already allocated on the node (status.allocation): "
                  "their devices are in use")
      ->type_name("FILE");
  cmd->add_option("--node", opts->node,
                  "Node name (default: the slices' nodeName, else $NODE_NAME or the host's "
                  "hostname)");
  cmd->add_option("--k8s", opts->k8s,
                  "Kubernetes release whose allocator and feature defaults apply")
      ->check(CLI::IsMember({"1.34", "1.35", "1.36"}))
      ->capture_default_str();
  cmd->add_option("--feature-gates", opts->feature_gates,
                  "Override a DRA feature gate: NAME=true|false (DRAConsumableCapacity, "
                  "DRAPartitionableDevices, DRADeviceTaints, DRAAdminAccess, DRAPrioritizedList, "
                  "DRADeviceBindingConditions)")
      ->delimiter(',')
      ->type_name("GATE=BOOL");
  cmd->add_option("--sharing", opts->sharing,
                  "When rendering from the host: publish GPUs for sharing (as `topo export "
                  "resourceslices --sharing`)")
      ->check(CLI::IsMember({"none", "consumable", "partitionable"}));
  cmd->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  for (CLI::Option* o : {cmd->get_option("--root"), cmd->get_option("--mock")}) {
    slices->excludes(o);
    o->excludes(slices);
  }
  cmd->callback([&runner, opts] { runner = [opts] { return run_fit(*opts); }; });
}

}  // namespace nodetopo::agent
