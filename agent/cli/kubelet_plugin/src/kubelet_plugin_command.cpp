// `topo kubelet-plugin`: the DRA kubelet plugin of nodetopo's driver, its own process (gRPC owns
// threads and the plugin needs the kubelet's plugin directories and the CDI directory, which the
// agent does not). docs/kubelet.md.
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <nodetopo/cli/command_output.hpp>
#include <nodetopo/cli/helper_commands.hpp>
#include <nodetopo/cli/host_options.hpp>
#include <nodetopo/cli/kubelet_plugin_command.hpp>
#include <nodetopo/core/host_source.hpp>
#include <nodetopo/exporters/k8s_names.hpp>
#include <nodetopo/kube/client_config.hpp>
#include <nodetopo/kubelet/runner.hpp>

#include "kubelet_devices.hpp"

namespace nodetopo::cli {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int /*signal*/) {
  g_stop.store(true);
}

struct KubeletPluginCommand {
  core::HostSpec host;
  std::string config_file;
  std::string kubeconfig;
  std::string context;
  std::string node;
  std::string driver;
  std::string registry_dir;
  std::string plugins_dir;
  std::string cdi_dir;
  std::string state_dir;
  std::string instance_uid;
  bool publish = false;
};

int run_kubelet_plugin(const KubeletPluginCommand& opts) {
  const char* what = "kubelet-plugin";
  kubelet::PluginConfig config;
  if (!opts.config_file.empty()) {
    auto loaded = kubelet::load_plugin_config(opts.config_file);
    if (!loaded) return fail(what, loaded.error().describe());
    config = std::move(*loaded);
  }
  // Flags over the file over the environment over the defaults.
  if (config.instance_uid.empty())
    if (const char* uid = std::getenv("POD_UID"); uid != nullptr)
      config.instance_uid = uid;  // NOLINT
  if (!opts.node.empty()) config.node_name = opts.node;
  if (config.node_name.empty())
    if (const char* env = std::getenv("NODE_NAME"); env != nullptr)
      config.node_name = env;  // NOLINT
  if (config.node_name.empty()) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) config.node_name = host;
  }
  if (std::string why = exporters::k8s::check_dns_subdomain(config.node_name, 253); !why.empty())
    return fail(what, "node name: " + why + " (pass --node or set NODE_NAME)");
  if (!opts.driver.empty()) config.driver = opts.driver;
  if (!opts.registry_dir.empty()) config.registry_dir = opts.registry_dir;
  if (!opts.plugins_dir.empty()) config.plugins_dir = opts.plugins_dir;
  if (!opts.cdi_dir.empty()) config.cdi_dir = opts.cdi_dir;
  if (!opts.state_dir.empty()) config.state_dir = opts.state_dir;
  if (!opts.instance_uid.empty()) config.instance_uid = opts.instance_uid;
  if (opts.publish) config.publish = true;
  auto client = kube::load_client_config(opts.kubeconfig, opts.context);
  if (!client) return fail(what, client.error().describe());

  // The host is opened once and the environment hwloc and NVML read is written now, on the only
  // thread: run_plugin starts gRPC's threads, and getenv/setenv must not race them.
  core::HostSource source(opts.host);
  auto host = source.open();
  if (!host) return fail(what, host.error().describe());
  core::write_process_environment(*host);

  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // NOLINT: a kubelet that hangs up must not kill us
  return kubelet::run_plugin(
      config, *client, make_kubelet_device_source(*host, config.node_name, config.driver), g_stop);
}

}  // namespace

void register_kubelet_plugin_command(CLI::App& cmd, CommandRunner& runner) {
  auto opts = std::make_shared<KubeletPluginCommand>();
  add_host_options(cmd, opts->host);
  cmd.add_option("--config", opts->config_file, "Plugin configuration (YAML, docs/kubelet.md)")
      ->type_name("FILE");
  cmd.add_option("--kubeconfig", opts->kubeconfig,
                 "kubeconfig file (default: $KUBECONFIG, else in-cluster credentials)")
      ->type_name("FILE");
  cmd.add_option("--context", opts->context, "kubeconfig context (default: current-context)");
  cmd.add_option("--node", opts->node, "Node name (default: the config, $NODE_NAME, hostname)");
  cmd.add_option("--driver", opts->driver, "DRA driver name (default: nodetopo.dev)");
  cmd.add_option("--registry-dir", opts->registry_dir,
                 "Kubelet plugin registry dir (default /var/lib/kubelet/plugins_registry)")
      ->type_name("DIR");
  cmd.add_option("--plugins-dir", opts->plugins_dir,
                 "Kubelet plugins dir; the DRA socket goes to DIR/<driver>/ (default "
                 "/var/lib/kubelet/plugins)")
      ->type_name("DIR");
  cmd.add_option("--cdi-dir", opts->cdi_dir, "CDI spec directory (default /var/run/cdi)")
      ->type_name("DIR");
  cmd.add_option("--state-dir", opts->state_dir,
                 "Checkpoint directory (default: the plugins dir of the driver)")
      ->type_name("DIR");
  cmd.add_option("--instance-uid", opts->instance_uid,
                 "Pod UID for rolling updates (default $POD_UID): per-instance socket names");
  cmd.add_flag("--publish", opts->publish,
               "Publish the node's ResourceSlices from this process, with the publish policy");
  cmd.callback([&runner, opts] { runner = [opts] { return run_kubelet_plugin(*opts); }; });
}

}  // namespace nodetopo::cli
