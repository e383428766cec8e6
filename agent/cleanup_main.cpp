// topo-cleanup: the process of `topo cleanup` (cli/helper_commands.hpp): the Kubernetes client
// (libcurl) without the probes. Installed in libexec/nodetopo; the interface stays
// `topo cleanup`.
#include <array>

#include <nodetopo/cli/cleanup_command.hpp>
#include <nodetopo/cli/helper_commands.hpp>

int main(int argc, char** argv) {
  namespace cli = nodetopo::cli;
  // Name and description shared with `topo`, which lists the command and execs this.
  const std::array<cli::Command, 1> commands = {
      cli::Command{cli::kCleanupCommand.name, cli::kCleanupCommand.description,
                   nodetopo::cli::register_cleanup_command}};
  return cli::run_cli(argc, argv, commands);
}
