// topo-agent: the process of `topo agent` (docs/agent.md), which `topo` execs into
// (cli/helper_commands.hpp). A process that runs for months on every node maps only the
// daemon's libraries. Installed outside PATH (libexec/nodetopo): the interface stays
// `topo agent`, parsed by the same frame as every command (global options, exit codes).
#include <array>

#include <nodetopo/cli/app.hpp>
#include <nodetopo/cli/helper_commands.hpp>
#include <nodetopo/daemon/agent_command.hpp>

int main(int argc, char** argv) {
  namespace cli = nodetopo::cli;
  // Name and description shared with `topo`, which lists the command and execs this.
  const std::array<cli::Command, 1> commands = {
      cli::Command{cli::kAgentCommand.name, cli::kAgentCommand.description,
                   nodetopo::daemon::register_agent_command}};
  return cli::run_cli(argc, argv, commands);
}
