// `topo export`: the node as Kubernetes sees it — DRA ResourceSlices, node labels (plain, NFD
// feature file, NodeFeature, Node patch), NodeResourceTopology, and the shape fingerprint.
//
// The command does the I/O the pure exporters must not do: it discovers the host, reads the
// node's export settings (etc/nodetopo/export.yaml under the root, through SysRoot), resolves the
// node name, and writes to stdout or atomically to a file.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/agent/command_output.hpp>
#include <nodetopo/agent/commands.hpp>
#include <nodetopo/agent/from_agent.hpp>
#include <nodetopo/agent/host_source.hpp>
#include <nodetopo/daemon/agent_client.hpp>
#include <nodetopo/exporters/export_config.hpp>
#include <nodetopo/exporters/k8s_names.hpp>
#include <nodetopo/exporters/node_labels.hpp>
#include <nodetopo/exporters/nrt.hpp>
#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/exporters/sinks.hpp>
#include <nodetopo/exporters/yaml_emit.hpp>
#include <nodetopo/topology/shape.hpp>

namespace nodetopo::agent {

namespace {

using Json = nlohmann::ordered_json;

struct Host {
  probes::Discovery discovery;
  exporters::ExportConfig config;
  std::string node_name;  ///< empty when it could not be resolved (see node_error)
  std::string node_error;
};

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return std::isspace(c) == 0; };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// The node name as the kubelet derives it when not told otherwise: --node, then NODE_NAME (the
// DaemonSet sets it from the downward API), then the host's hostname, lower-cased.
void resolve_node_name(const std::string& flag, const probes::SysRoot& root, Host& host) {
  std::string name = flag;
  if (name.empty()) {
    if (const char* env = std::getenv("NODE_NAME"); env != nullptr && *env != '\0') {  // NOLINT
      name = env;
    }
  }
  if (name.empty()) {
    for (const char* file : {"proc/sys/kernel/hostname", "etc/hostname"}) {
      if (auto text = root.read_file(file, 4096)) {
        name = trim(text.value());
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (!name.empty()) break;
      }
    }
  }
  if (name.empty()) {
    host.node_error =
        "cannot tell the node name: pass --node NAME or set NODE_NAME (the root has no "
        "proc/sys/kernel/hostname or etc/hostname)";
    return;
  }
  if (std::string why = exporters::k8s::check_dns_subdomain(name, 253); !why.empty()) {
    host.node_error = "node name: " + why;
    return;
  }
  host.node_name = name;
}

// --from-agent: the document the agent renders for `kind`/`format` (its node, its settings).
int from_agent(const FromAgent& agent, const std::string& command, const std::string& kind,
               const std::string& format, const std::string& output) {
  auto doc = daemon::fetch_agent_document(agent.bus, kind, format);
  if (!doc) return fail(command, doc.error().describe());
  return emit(command, output, doc.value());
}

Result<Host> load_host(const HostSource& source, const std::string& node_flag) {
  // Discovery goes through the source as in every reading command (so --mock and the like apply
  // the same way); the root is opened again only to read the hostname and the settings file.
  auto discovery = source.discover();
  if (!discovery) return discovery.error();
  auto root = source.open();
  if (!root) return root.error();
  Host host{std::move(discovery.value()), {}, {}, {}};
  for (const ProbeReport& r : host.discovery.reports) {
    if (r.status == ProbeStatus::kFailed) {
      std::cerr << "topo export: warning: probe " << r.probe << " failed: " << r.error << "\n";
    }
  }
  const std::string config_path(exporters::kExportConfigPath);
  if (root.value().exists(config_path)) {
    auto text = root.value().read_file(config_path);
    if (!text) return text.error();
    auto config = exporters::parse_export_config(text.value(), root.value().host_path(config_path));
    if (!config) return config.error();
    host.config = std::move(config.value());
  }
  resolve_node_name(node_flag, root.value(), host);
  return host;
}

// --- resourceslices ----------------------------------------------------------------------------

struct SliceCommand {
  HostSource source;
  FromAgent agent;
  std::string node;
  std::string node_uid;
  std::string driver;
  std::string k8s_version = "1.34";
  std::string sharing;
  std::int64_t generation = 1;
  std::string format = "yaml";
  std::string output;
};

int run_slices(const SliceCommand& opts) {
  if (opts.agent.enabled) {
    return from_agent(opts.agent, "export resourceslices", "resourceslices", opts.format,
                      opts.output);
  }
  auto host = load_host(opts.source, opts.node);
  if (!host) return fail("export resourceslices", host.error().describe());
  if (host->node_name.empty()) return fail("export resourceslices", host->node_error);
  exporters::dra::SliceOptions o;
  o.node_name = host->node_name;
  o.node_uid = opts.node_uid;
  o.driver = !opts.driver.empty() ? opts.driver : host->config.driver.value_or("nodetopo.dev");
  o.generation = opts.generation;
  auto version = exporters::dra::parse_k8s_version(opts.k8s_version);
  if (!version) return fail("export resourceslices", version.error().describe());
  o.version = version.value();
  if (host->config.sharing) o.sharing = *host->config.sharing;
  if (!opts.sharing.empty()) {
    auto mode = exporters::parse_sharing_mode(opts.sharing);
    if (!mode) return fail("export resourceslices", mode.error().describe());
    o.sharing.mode = mode.value();
  }
  auto slices = exporters::dra::build_resource_slices(host->discovery.topology, o);
  if (!slices) return fail("export resourceslices", slices.error().describe());
  const std::string doc = opts.format == "json" ? exporters::dra::render_slices_json(*slices)
                                                : exporters::dra::render_slices_yaml(*slices);
  return emit("export resourceslices", opts.output, doc);
}

void register_slices(CLI::App& parent, CommandRunner& runner) {
  auto opts = std::make_shared<SliceCommand>();
  CLI::App* cmd = parent.add_subcommand(
      "resourceslices",
      "DRA ResourceSlices (resource.k8s.io/v1) for the node's accelerators and NICs");
  opts->source.add_options(*cmd);
  cmd->add_option("--node", opts->node,
                  "Node name (default: $NODE_NAME, else the host's hostname)");
  cmd->add_option("--node-uid", opts->node_uid,
                  "UID of the Node object: adds the ownerReference the API server needs to "
                  "garbage-collect the slices with the Node");
  cmd->add_option("--driver", opts->driver,
                  "DRA driver name and attribute domain (default: the settings file, else "
                  "nodetopo.dev)");
  cmd->add_option("--k8s-version", opts->k8s_version, "Kubernetes release the slices are for")
      ->check(CLI::IsMember({"1.34", "1.35", "1.36"}))
      ->capture_default_str();
  cmd->add_option("--sharing", opts->sharing,
                  "Publish GPUs for fractional sharing (default: the settings file "
                  "etc/nodetopo/export.yaml under the root, else none)")
      ->check(CLI::IsMember({"none", "consumable", "partitionable"}));
  cmd->add_option("--generation", opts->generation, "pool.generation of the slices")
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
  HostSource source;
  FromAgent agent;
  std::string node;
  std::string format = "plain";
  std::string expiry;
  std::string name_space;
  std::string output;
};

int run_labels(const LabelCommand& opts) {
  if (opts.agent.enabled) {
    return from_agent(opts.agent, "export labels", "labels", opts.format, opts.output);
  }
  if (!opts.expiry.empty()) {
    if (opts.format != "nfd") return fail("export labels", "--expiry applies to --format nfd only");
    if (std::string why = exporters::k8s::check_rfc3339(opts.expiry); !why.empty()) {
      return fail("export labels", "--expiry: " + why);
    }
  }
  auto host = load_host(opts.source, opts.node);
  if (!host) return fail("export labels", host.error().describe());
  const exporters::LabelMap labels = exporters::compute_labels(host->discovery.topology);
  if (const auto problems = exporters::validate_labels(labels); !problems.empty()) {
    std::string message = "invalid labels:";
    for (const auto& p : problems)
      message += "\n  " + p;
    return fail("export labels", message);
  }
  std::string doc;
  if (opts.format == "nfd") {
    doc = exporters::render_labels_nfd(labels, opts.expiry);
  } else if (opts.format == "patch") {
    doc = exporters::render_labels_patch(labels);
  } else if (opts.format == "nodefeature") {
    if (host->node_name.empty()) return fail("export labels", host->node_error);
    auto object = exporters::labels_to_nodefeature(labels, host->node_name, opts.name_space);
    if (!object) return fail("export labels", object.error().describe());
    doc = exporters::to_yaml(object.value());
  } else {
    doc = exporters::render_labels_plain(labels);
  }
  return emit("export labels", opts.output, doc);
}

void register_labels(CLI::App& parent, CommandRunner& runner) {
  auto opts = std::make_shared<LabelCommand>();
  CLI::App* cmd = parent.add_subcommand("labels", "Node labels under nodetopo.dev/");
  opts->source.add_options(*cmd);
  cmd->add_option("--node", opts->node,
                  "Node name for --format nodefeature (default: $NODE_NAME, else the hostname)");
  cmd->add_option("--format", opts->format,
                  "plain: key=value lines; nfd: NFD feature file (features.d); nodefeature: NFD "
                  "NodeFeature object (YAML); patch: Node JSON merge patch")
      ->check(CLI::IsMember({"plain", "nfd", "nodefeature", "patch"}))
      ->capture_default_str();
  cmd->add_option("--expiry", opts->expiry,
                  "RFC 3339 time after which NFD drops the labels (--format nfd)")
      ->type_name("TIME");
  cmd->add_option("--namespace", opts->name_space,
                  "Namespace of the NodeFeature object (--format nodefeature)");
  cmd->add_option("--output,-o", opts->output,
                  "Write to FILE atomically (a dot-file renamed into place, as NFD expects)")
      ->type_name("FILE");
  opts->agent.add_options(*cmd, {"--node", "--expiry", "--namespace"});
  cmd->callback([&runner, opts] { runner = [opts] { return run_labels(*opts); }; });
}

// --- nrt ---------------------------------------------------------------------------------------

struct NrtCommand {
  HostSource source;
  FromAgent agent;
  std::string node;
  std::string format = "yaml";
  std::string output;
};

int run_nrt(const NrtCommand& opts) {
  if (opts.agent.enabled) {
    return from_agent(opts.agent, "export nrt", "nrt", opts.format, opts.output);
  }
  auto host = load_host(opts.source, opts.node);
  if (!host) return fail("export nrt", host.error().describe());
  if (host->node_name.empty()) return fail("export nrt", host->node_error);
  auto object = exporters::render_nrt(host->discovery.topology, host->node_name);
  if (!object) return fail("export nrt", object.error().describe());
  const std::string doc = opts.format == "json"
                              ? object->dump(2, ' ', false, Json::error_handler_t::replace) + "\n"
                              : exporters::to_yaml(object.value());
  return emit("export nrt", opts.output, doc);
}

void register_nrt(CLI::App& parent, CommandRunner& runner) {
  auto opts = std::make_shared<NrtCommand>();
  CLI::App* cmd = parent.add_subcommand(
      "nrt", "NodeResourceTopology (topology.node.k8s.io/v1alpha2): NUMA zones and resources");
  opts->source.add_options(*cmd);
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
  HostSource source;
  FromAgent agent;
  std::string format = "text";
};

int run_shape(const ShapeCommand& opts) {
  if (opts.agent.enabled) {
    return from_agent(opts.agent, "export shape", "shape", opts.format, "");
  }
  auto discovery = opts.source.discover();
  if (!discovery) return fail("export shape", discovery.error().describe());
  const ShapeFingerprint shape = compute_shape(discovery->topology);
  std::string doc;
  if (opts.format == "json") {
    Json j;
    j["shape"] = shape.hash;
    j["sha256"] = shape.sha256;
    j["description"] = shape.description;
    doc = j.dump(2) + "\n";
  } else {
    doc = "shape: " + shape.hash + "\nsha256: " + shape.sha256 +
          "\n\ndescription (the sha256 covers these lines exactly):\n" + shape.description;
  }
  return emit("export shape", "", doc);
}

void register_shape(CLI::App& parent, CommandRunner& runner) {
  auto opts = std::make_shared<ShapeCommand>();
  CLI::App* cmd = parent.add_subcommand(
      "shape", "The node's shape fingerprint and the normalised description it hashes");
  opts->source.add_options(*cmd);
  cmd->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  opts->agent.add_options(*cmd, {});
  cmd->callback([&runner, opts] { runner = [opts] { return run_shape(*opts); }; });
}

}  // namespace

void register_export_command(CLI::App& app, CommandRunner& runner) {
  CLI::App* cmd = app.add_subcommand(
      "export", "Render the node for Kubernetes: resourceslices, labels, nrt, shape");
  cmd->require_subcommand(1);
  register_slices(*cmd, runner);
  register_labels(*cmd, runner);
  register_nrt(*cmd, runner);
  register_shape(*cmd, runner);
}

}  // namespace nodetopo::agent
