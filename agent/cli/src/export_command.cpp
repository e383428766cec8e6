// `topo export`: the node as Kubernetes sees it — DRA ResourceSlices, node labels (plain, NFD
// feature file, NodeFeature, Node patch), NodeResourceTopology, and the shape fingerprint.
//
// Option parsing and output only: the host is opened once, one snapshot taken (discovery, the
// node's export settings, the node name; agent/core) and rendered (core::render).
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/base/log.hpp>
#include <nodetopo/cli/command_output.hpp>
#include <nodetopo/cli/commands.hpp>
#include <nodetopo/cli/from_agent.hpp>
#include <nodetopo/cli/host_options.hpp>
#include <nodetopo/core/render.hpp>
#include <nodetopo/daemon/agent_client.hpp>

namespace nodetopo::cli {

namespace {

// --from-agent: the document the agent renders for `kind`/`format` (its node, its settings).
int from_agent(const FromAgent& agent, std::string_view command, const std::string& kind,
               const std::string& format, const std::string& output) {
  auto doc = daemon::fetch_agent_document(agent.bus, kind, format);
  if (!doc) return fail(command, doc.error().describe());
  return emit(command, output, doc.value());
}

// Opens the host once, takes one snapshot and renders `kind`; what every export subcommand runs.
int run_export(std::string_view command, core::HostSource& source, const std::string& node,
               core::DocumentKind kind, const std::string& format,
               const core::RenderOptions& render_options, const std::string& output) {
  if (auto checked = core::check_render(kind, format, render_options); !checked) {
    return fail(command, checked.error().describe());
  }
  auto host = source.open();
  if (!host) return fail(command, host.error().describe());
  // Still the only thread: the one place the environment is written (probes/probe.hpp).
  core::write_process_environment(*host);
  auto snapshot = core::take_snapshot(*host, {.node_name = node, .with_digest = false});
  if (!snapshot) return fail(command, snapshot.error().describe());
  if (kind == core::DocumentKind::kLabels) {
    // The instance labels' sources: a cloud-init file that could not be used is worth a warning
    // (naming it); the choice itself is the debug view (docs/labels.md).
    const auto& in = snapshot->instance;
    if (!in.cloud_init_error.empty()) component_logger("export")->warn("{}", in.cloud_init_error);
    component_logger("export")->debug(
        "instance labels:\n{}",
        exporters::describe_instance_labels(exporters::choose_instance_labels(in, {}), in));
  }
  // A degraded snapshot (a probe failed) renders to an error naming the probe: nothing written.
  auto doc = core::render(*snapshot, kind, format, render_options);
  if (!doc) return fail(command, doc.error().describe());
  return emit(command, output, *doc);
}

// --- resourceslices ----------------------------------------------------------------------------

struct SliceCommand {
  core::HostSource source;
  FromAgent agent;
  std::string node;
  core::RenderOptions render;
  std::string format = "yaml";
  std::string output;
};

int run_slices(SliceCommand& opts) {
  if (opts.agent.enabled) {
    return from_agent(opts.agent, "export resourceslices", "resourceslices", opts.format,
                      opts.output);
  }
  return run_export("export resourceslices", opts.source, opts.node,
                    core::DocumentKind::kResourceSlices, opts.format, opts.render, opts.output);
}

void register_slices(CLI::App& parent, CommandRunner& runner) {
  auto opts = std::make_shared<SliceCommand>();
  CLI::App* cmd = parent.add_subcommand(
      "resourceslices",
      "DRA ResourceSlices (resource.k8s.io/v1) for the node's accelerators and NICs");
  add_host_options(*cmd, opts->source.spec());
  cmd->add_option("--node", opts->node,
                  "Node name (default: $NODE_NAME, else the host's hostname)");
  cmd->add_option("--node-uid", opts->render.node_uid,
                  "UID of the Node object: adds the ownerReference the API server needs to "
                  "garbage-collect the slices with the Node");
  cmd->add_option("--driver", opts->render.driver,
                  "DRA driver name and attribute domain (default: the settings file, else "
                  "nodetopo.dev)");
  cmd->add_option("--k8s-version", opts->render.k8s_version,
                  "Kubernetes release the slices are for")
      ->check(CLI::IsMember({"1.34", "1.35", "1.36"}))
      ->capture_default_str();
  cmd->add_option("--sharing", opts->render.sharing,
                  "Publish GPUs for fractional sharing (default: the settings file "
                  "etc/nodetopo/export.yaml under the root, else none)")
      ->check(CLI::IsMember({"none", "consumable", "partitionable"}));
  cmd->add_option("--generation", opts->render.generation, "pool.generation of the slices")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"yaml", "json"}))
      ->capture_default_str();
  cmd->add_option("--output,-o", opts->output, "Write to FILE atomically instead of stdout")
      ->type_name("FILE");
  opts->agent.add_options(
      *cmd, {"--node", "--node-uid", "--driver", "--k8s-version", "--sharing", "--generation"});
  cmd->callback([&runner, opts] { runner = [opts] { return run_slices(*opts); }; });
}

// --- labels ------------------------------------------------------------------------------------

struct LabelCommand {
  core::HostSource source;
  FromAgent agent;
  std::string node;
  std::string format = "plain";
  core::RenderOptions render;
  std::string output;
};

int run_labels(LabelCommand& opts) {
  if (opts.agent.enabled) {
    return from_agent(opts.agent, "export labels", "labels", opts.format, opts.output);
  }
  return run_export("export labels", opts.source, opts.node, core::DocumentKind::kLabels,
                    opts.format, opts.render, opts.output);
}

void register_labels(CLI::App& parent, CommandRunner& runner) {
  auto opts = std::make_shared<LabelCommand>();
  CLI::App* cmd = parent.add_subcommand("labels", "Node labels under nodetopo.dev/");
  add_host_options(*cmd, opts->source.spec());
  cmd->add_option("--node", opts->node,
                  "Node name for --format nodefeature (default: $NODE_NAME, else the hostname)");
  cmd->add_option("--format", opts->format,
                  "plain: key=value lines; nfd: NFD feature file (features.d); nodefeature: NFD "
                  "NodeFeature object (YAML); patch: Node JSON merge patch")
      ->check(CLI::IsMember({"plain", "nfd", "nodefeature", "patch"}))
      ->capture_default_str();
  cmd->add_option("--expiry", opts->render.expiry,
                  "RFC 3339 time after which NFD drops the labels (--format nfd)")
      ->type_name("TIME");
  cmd->add_option("--namespace", opts->render.name_space,
                  "Namespace of the NodeFeature object (--format nodefeature)");
  cmd->add_option("--output,-o", opts->output,
                  "Write to FILE atomically (a dot-file renamed into place, as NFD expects)")
      ->type_name("FILE");
  opts->agent.add_options(*cmd, {"--node", "--expiry", "--namespace"});
  cmd->callback([&runner, opts] { runner = [opts] { return run_labels(*opts); }; });
}

// --- nrt ---------------------------------------------------------------------------------------

struct NrtCommand {
  core::HostSource source;
  FromAgent agent;
  std::string node;
  std::string format = "yaml";
  std::string output;
};

int run_nrt(NrtCommand& opts) {
  if (opts.agent.enabled) {
    return from_agent(opts.agent, "export nrt", "nrt", opts.format, opts.output);
  }
  return run_export("export nrt", opts.source, opts.node, core::DocumentKind::kNrt, opts.format, {},
                    opts.output);
}

void register_nrt(CLI::App& parent, CommandRunner& runner) {
  auto opts = std::make_shared<NrtCommand>();
  CLI::App* cmd = parent.add_subcommand(
      "nrt", "NodeResourceTopology (topology.node.k8s.io/v1alpha2): NUMA zones and resources");
  add_host_options(*cmd, opts->source.spec());
  cmd->add_option("--node", opts->node, "Node name (default: $NODE_NAME, else the hostname)");
  cmd->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"yaml", "json"}))
      ->capture_default_str();
  cmd->add_option("--output,-o", opts->output, "Write to FILE atomically instead of stdout")
      ->type_name("FILE");
  opts->agent.add_options(*cmd, {"--node"});
  cmd->callback([&runner, opts] { runner = [opts] { return run_nrt(*opts); }; });
}

// --- shape -------------------------------------------------------------------------------------

struct ShapeCommand {
  core::HostSource source;
  FromAgent agent;
  std::string format = "text";
};

int run_shape(ShapeCommand& opts) {
  if (opts.agent.enabled) return from_agent(opts.agent, "export shape", "shape", opts.format, "");
  return run_export("export shape", opts.source, {}, core::DocumentKind::kShape, opts.format, {},
                    {});
}

void register_shape(CLI::App& parent, CommandRunner& runner) {
  auto opts = std::make_shared<ShapeCommand>();
  CLI::App* cmd = parent.add_subcommand(
      "shape", "The node's shape fingerprint and the normalised description it hashes");
  add_host_options(*cmd, opts->source.spec());
  cmd->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  opts->agent.add_options(*cmd, {});
  cmd->callback([&runner, opts] { runner = [opts] { return run_shape(*opts); }; });
}

}  // namespace

// autoscaler_command.cpp
void register_autoscaler_template(CLI::App& parent, CommandRunner& runner);

void register_export_command(CLI::App& cmd, CommandRunner& runner) {
  cmd.require_subcommand(1);
  register_slices(cmd, runner);
  register_labels(cmd, runner);
  register_nrt(cmd, runner);
  register_shape(cmd, runner);
  register_autoscaler_template(cmd, runner);
}

}  // namespace nodetopo::cli
