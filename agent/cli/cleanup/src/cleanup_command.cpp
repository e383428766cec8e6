// `topo cleanup`: removes what the Kubernetes publisher wrote for this node, for uninstalling:
// the node's ResourceSlices of our driver, our NodeFeature, the Node labels our ownership
// annotation lists (and the annotation), our NodeResourceTopology. Nothing else is touched; the
// publisher itself never removes anything (a restart or a failed discovery must not wipe labels).
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/cli/cleanup_command.hpp>
#include <nodetopo/cli/command_output.hpp>
#include <nodetopo/cli/helper_commands.hpp>
#include <nodetopo/exporters/k8s_names.hpp>
#include <nodetopo/kube/publisher.hpp>

namespace nodetopo::cli {

namespace {

struct CleanupCommand {
  std::string kubeconfig;
  std::string context;
  std::string node;
  std::string driver = "nodetopo.dev";
  std::string name_space;
};

int run_cleanup(const CleanupCommand& opts) {
  std::string node = opts.node;
  if (node.empty()) {
    if (const char* env = std::getenv("NODE_NAME"); env != nullptr) node = env;  // NOLINT
  }
  if (node.empty()) return fail("cleanup", "pass --node NAME or set NODE_NAME");
  if (std::string why = exporters::k8s::check_dns_subdomain(node, 253); !why.empty()) {
    return fail("cleanup", "--node: " + why);
  }
  auto client = kube::load_client_config(opts.kubeconfig, opts.context);
  if (!client) return fail("cleanup", client.error().describe());
  kube::CleanupOptions what;
  what.node_name = node;
  what.driver = opts.driver;
  what.nodefeature_namespace = opts.name_space;
  // Someone is waiting at a terminal: fewer and shorter retries than the agent's.
  kube::ClientOptions options;
  options.max_retries = 2;
  options.backoff_initial = std::chrono::milliseconds(200);
  const kube::CleanupReport report = kube::cleanup(client.value(), options, what);
  std::cout << "node " << node << " on " << client->server << ": " << report.slices_deleted
            << " ResourceSlice(s) of " << opts.driver << " deleted, NodeFeature "
            << (report.nodefeature_deleted ? "deleted" : "absent") << ", " << report.labels_removed
            << " owned label(s) removed, NodeResourceTopology "
            << (report.nrt_deleted ? "deleted" : "absent") << "\n";
  for (const std::string& e : report.errors)
    std::cerr << "topo cleanup: " << e << "\n";
  return report.errors.empty() ? kExitOk : kExitFailure;
}

}  // namespace

void register_cleanup_command(CLI::App& cmd, CommandRunner& runner) {
  auto opts = std::make_shared<CleanupCommand>();
  cmd.add_option("--kubeconfig", opts->kubeconfig,
                 "kubeconfig file (default: $KUBECONFIG, else in-cluster credentials)")
      ->type_name("FILE");
  cmd.add_option("--context", opts->context, "kubeconfig context (default: current-context)");
  cmd.add_option("--node", opts->node, "Node name (default: $NODE_NAME)");
  cmd.add_option("--driver", opts->driver, "DRA driver of the slices to delete")
      ->capture_default_str();
  cmd.add_option("--namespace", opts->name_space,
                 "Namespace of the NodeFeature (default: the credentials' namespace, else "
                 "node-feature-discovery)");
  cmd.callback([&runner, opts] { runner = [opts] { return run_cleanup(*opts); }; });
}

}  // namespace nodetopo::cli
