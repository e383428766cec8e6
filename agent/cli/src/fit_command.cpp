// `topo fit`: runs the kube-scheduler's DRA allocation for this node offline and explains it.
//
// The node's slices are either read from files (any driver's), asked from a running `topo
// agent` (--from-agent: its Export of the resourceslices, refused when the agent's topology is
// degraded or stale), or rendered from the host the way `topo export resourceslices` renders
// them: the same snapshot of the host (agent/core), the same settings file
// (etc/nodetopo/export.yaml under the root) and core::build_slices. Exit codes follow the
// scheduler's split: 0 the claims fit, 1 they do not (unschedulable), 2 bad input or a selector
// error.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <nodetopo/cli/command_output.hpp>
#include <nodetopo/cli/commands.hpp>
#include <nodetopo/cli/from_agent.hpp>
#include <nodetopo/cli/host_options.hpp>
#include <nodetopo/core/render.hpp>
#include <nodetopo/daemon/agent_client.hpp>
#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/fit/explain.hpp>
#include <nodetopo/fit/load.hpp>

#include "autoscaler_view.hpp"

namespace nodetopo::cli {

namespace {

constexpr int kExitFits = 0;
constexpr int kExitNoFit = 1;
constexpr int kExitBadInput = 2;

struct FitCommand {
  core::HostSource source;
  std::vector<std::string> claims;
  std::vector<std::string> classes;
  std::vector<std::string> slices;
  std::string template_file;  ///< --template: an autoscaler template instead of a node
  std::vector<std::string> allocated;
  std::string node;
  std::string k8s = "1.34";
  std::string sharing;
  std::vector<std::string> feature_gates;
  std::string format = "text";
  FromAgent agent;
  double max_age_s = 0;  ///< --from-agent: refuse a topology older than this (0: any age)
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

// The node's slices as `topo export resourceslices` renders them: one snapshot of the host
// (agent/core), the same settings file and node name, core::build_slices.
Result<std::vector<fit::ResourceSlice>> render_host_slices(FitCommand& opts,
                                                           const std::string& k8s_version,
                                                           std::string& node) {
  auto host = opts.source.open();
  if (!host) return host.error();
  // Still the only thread: the one place the environment is written (probes/probe.hpp).
  core::write_process_environment(*host);
  auto snapshot = core::take_snapshot(*host, {.node_name = node, .with_digest = false});
  if (!snapshot) return snapshot.error();
  // A host whose name cannot be told still has a shape to fit against.
  if (snapshot->node_name.empty()) snapshot->node_name = "node";
  node = snapshot->node_name;
  core::RenderOptions render;
  render.k8s_version = k8s_version;
  render.sharing = opts.sharing;
  auto slices = core::build_slices(*snapshot, render);
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

// --from-agent: whether the agent's Health lets its slices stand for the node. Reasons about a
// sink or a refused reload do not touch the topology; a probe failing in the published snapshot
// makes it degraded; a kept generation (the last discovery was degraded) makes it stale.
Result<void> check_agent_health(const daemon::AgentStatus& st, double max_age_s) {
  const std::string& h = st.health;
  if (h.rfind("starting", 0) == 0) {
    return make_error(ErrorCode::kUnavailable,
                      "the agent has not published a topology yet (health: " + h + ")");
  }
  if (h.rfind("degraded: ", 0) == 0) {
    std::string degraded;
    std::string stale;
    std::size_t at = 10;
    while (at <= h.size()) {
      const std::size_t end = std::min(h.find("; ", at), h.size());
      const std::string reason = h.substr(at, end - at);
      at = end + 2;
      if (reason.empty() || reason.rfind("sink ", 0) == 0 ||
          reason.rfind("config reload refused", 0) == 0) {
        continue;  // the published topology is unaffected
      }
      std::string& to = reason.find(" kept)") != std::string::npos ? stale : degraded;
      to += (to.empty() ? "" : "; ") + reason;
    }
    if (!stale.empty()) {
      return make_error(ErrorCode::kUnavailable,
                        "the agent's topology is stale: its last discovery was degraded and it "
                        "still publishes the generation before (" +
                            stale + "); fit would answer for a node that may have changed");
    }
    if (!degraded.empty()) {
      return make_error(ErrorCode::kUnavailable, "the agent's topology is degraded (" + degraded +
                                                     "): devices of that probe may be missing");
    }
  }
  if (max_age_s > 0 && st.last_refresh_usec > 0) {
    const auto now = std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    const double age_s =
        static_cast<double>(now - static_cast<std::int64_t>(st.last_refresh_usec)) / 1e6;
    if (age_s > max_age_s) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%.1f s ago, more than --max-age %g s", age_s, max_age_s);
      return make_error(
          ErrorCode::kUnavailable,
          std::string("the agent's topology is stale: its last discovery finished ") + buf);
    }
  }
  return {};
}

// The node's slices as the running agent renders them (its Export of resourceslices, JSON),
// with its health checked on the same connection before and after; a publish in between is
// retried so that slices and health belong together.
Result<std::vector<fit::ResourceSlice>> agent_slices(const FitCommand& opts) {
  for (int attempt = 0;; ++attempt) {
    auto doc = daemon::fetch_agent_document_with_status(opts.agent.bus, "resourceslices", "json");
    if (!doc) {
      // The agent refuses to render a snapshot in which a probe failed: say what that means.
      const std::string why = doc.error().describe();
      if (why.find("Error.ExportFailed") != std::string::npos &&
          why.find("degraded") != std::string::npos) {
        return make_error(
            ErrorCode::kUnavailable,
            "the agent's topology is degraded, it renders no slices from it (" + why + ")");
      }
      return doc.error();
    }
    if (doc->before.generation != doc->after.generation && attempt < 2) continue;
    if (auto ok = check_agent_health(doc->after, opts.max_age_s); !ok) return ok.error();
    fit::Inputs in;
    if (auto r = fit::load_documents(doc->document, "topo agent (Export resourceslices)",
                                     fit::DocumentRole::kSlices, in);
        !r) {
      return r.error();
    }
    return std::move(in.slices);
  }
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
  // --node FILE: the Node object, whose labels node selectors are evaluated against.
  std::error_code ec;
  if (!node.empty() && std::filesystem::is_regular_file(node, ec)) {
    auto text = read_file(node);
    if (!text) return bad_input(text.error().describe());
    auto n = fit::load_node(text.value(), node);
    if (!n) return bad_input("--node: " + n.error().describe());
    node = n->name;
    alloc.node_object = std::move(n.value());
  }
  if (!opts.template_file.empty()) {
    if (node.empty()) node = std::string(kTemplateNodeName);
    auto view = read_template_view(opts.template_file, node);
    if (!view) return bad_input(view.error().describe());
    for (const std::string& n : view->notes)
      std::cerr << "topo fit: note: " << n << "\n";
    inputs.slices = std::move(view->slices);
  } else if (!opts.slices.empty() || opts.agent.enabled) {
    fit::Inputs slice_inputs;
    for (const std::string& f : opts.slices) {
      auto text = read_file(f);
      if (!text) return bad_input(text.error().describe());
      if (auto r = fit::load_documents(text.value(), f, fit::DocumentRole::kSlices, slice_inputs);
          !r) {
        return bad_input(r.error().describe());
      }
    }
    if (opts.agent.enabled) {
      auto from_agent = agent_slices(opts);
      if (!from_agent) return bad_input("--from-agent: " + from_agent.error().describe());
      slice_inputs.slices = std::move(from_agent.value());
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
    auto rendered = render_host_slices(opts, opts.k8s, node);
    if (!rendered) return bad_input("rendering the node's slices: " + rendered.error().describe());
    inputs.slices = std::move(rendered.value());
  }
  alloc.node = node;

  fit::Explanation e = fit::explain(inputs, alloc, opts.k8s);
  if (opts.agent.enabled && opts.k8s != "1.34") {
    e.notes.push_back(
        "the slices are the agent's, rendered for Kubernetes 1.34 (its Export); "
        "topo export resourceslices --k8s-version " +
        opts.k8s + " may differ (e.g. resource.kubernetes.io/pciBusID from 1.36)");
  }
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

void register_fit_command(CLI::App& cmd, CommandRunner& runner) {
  auto opts = std::make_shared<FitCommand>();
  cmd.add_option("claims", opts->claims,
                 "Files with ResourceClaims, ResourceClaimTemplates, or a Pod and the claims and "
                 "templates it names (YAML or JSON, several documents per file; DeviceClasses "
                 "may be included)")
      ->required()
      ->type_name("CLAIM");
  cmd.add_option("--class", opts->classes, "Files with DeviceClasses")->type_name("FILE");
  CLI::Option* slices = cmd.add_option("--slices", opts->slices,
                                       "Read the node's ResourceSlices (any driver's) from FILE "
                                       "instead of rendering them from "
                                       "the host")
                            ->type_name("FILE");
  CLI::Option* templ =
      cmd.add_option("--template", opts->template_file,
                     "Fit against a node-group template (`topo export autoscaler-template` "
                     "output, any format) instead of a node: what the autoscaler's template "
                     "node holds, ${NODE_NAME} and ${POOL_NAME} replaced by --node (default "
                     "template-node)")
          ->type_name("FILE");
  add_host_options(cmd, opts->source.spec());
  cmd.add_option("--allocated", opts->allocated,
                 "Files with ResourceClaims already allocated on the node (status.allocation): "
                 "their devices are in use")
      ->type_name("FILE");
  cmd.add_option("--node", opts->node,
                 "Node name (default: the slices' nodeName, else $NODE_NAME or the host's "
                 "hostname), or a file with the Node object (YAML or JSON, e.g. kubectl get "
                 "node -o yaml): node selectors of slices and devices are then evaluated "
                 "against its name and labels instead of being assumed to match")
      ->type_name("NAME|FILE");
  cmd.add_option("--k8s", opts->k8s,
                 "Kubernetes release whose allocator and feature defaults apply")
      ->check(CLI::IsMember({"1.34", "1.35", "1.36"}))
      ->capture_default_str();
  cmd.add_option("--feature-gates", opts->feature_gates,
                 "Override a DRA feature gate: NAME=true|false (DRAConsumableCapacity, "
                 "DRAPartitionableDevices, DRADeviceTaints, DRAAdminAccess, DRAPrioritizedList, "
                 "DRADeviceBindingConditions)")
      ->delimiter(',')
      ->type_name("GATE=BOOL");
  cmd.add_option("--sharing", opts->sharing,
                 "When rendering from the host: publish GPUs for sharing (as `topo export "
                 "resourceslices --sharing`)")
      ->check(CLI::IsMember({"none", "consumable", "partitionable"}));
  cmd.add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  for (CLI::Option* o : {cmd.get_option("--root"), cmd.get_option("--mock")}) {
    slices->excludes(o);
    o->excludes(slices);
    templ->excludes(o);
    o->excludes(templ);
  }
  templ->excludes(slices);
  slices->excludes(templ);
  opts->agent.add_options(cmd, {"--slices", "--sharing", "--template"});
  cmd.add_option("--max-age", opts->max_age_s,
                 "With --from-agent: refuse the agent's topology when its last discovery "
                 "finished more than SECONDS ago")
      ->check(CLI::PositiveNumber)
      ->needs(cmd.get_option("--from-agent"))
      ->type_name("SECONDS");
  cmd.callback([&runner, opts] { runner = [opts] { return run_fit(*opts); }; });
}

}  // namespace nodetopo::cli
