// topo-kubelet-plugin: the process of `topo kubelet-plugin` (cli/helper_commands.hpp), the
// DaemonSet's long-running DRA plugin: the only executable that links gRPC and protobuf, and
// without libarchive or the agent's libraries. Installed in libexec/nodetopo; the interface (and
// the container's command) stays `topo kubelet-plugin`.
#include <array>

#include <nodetopo/cli/kubelet_plugin_command.hpp>

int main(int argc, char** argv) {
  const std::array<nodetopo::cli::CommandRegistrar, 1> commands = {
      nodetopo::cli::register_kubelet_plugin_command};
  return nodetopo::cli::run_cli(argc, argv, commands);
}
