// topo-kubelet-plugin: the process of `topo kubelet-plugin` (cli/helper_commands.hpp), the
// DaemonSet's long-running DRA plugin: the only executable that links gRPC and protobuf, and
// without libarchive or the agent's libraries. Installed in libexec/nodetopo; the interface (and
// the container's command) stays `topo kubelet-plugin`.
#include <array>

#include <nodetopo/cli/helper_commands.hpp>
#include <nodetopo/cli/kubelet_plugin_command.hpp>

int main(int argc, char** argv) {
  namespace cli = nodetopo::cli;
  // Name and description shared with `topo`, which lists the command and execs this.
  const std::array<cli::Command, 1> commands = {
      cli::Command{cli::kKubeletPluginCommand.name, cli::kKubeletPluginCommand.description,
                   nodetopo::cli::register_kubelet_plugin_command}};
  return cli::run_cli(argc, argv, commands);
}
