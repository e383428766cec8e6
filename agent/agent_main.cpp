// topo-agent: the process of `topo agent` (docs/agent.md), which `topo` execs into
// (cli/helper_commands.hpp). A process that runs for months on every node maps only the
// daemon's libraries. Installed outside PATH (libexec/nodetopo): the interface stays
// `topo agent`, parsed by the same frame as every command (global options, exit codes).
#include <array>

#include <nodetopo/cli/app.hpp>
#include <nodetopo/daemon/agent_command.hpp>

int main(int argc, char** argv) {
  const std::array<nodetopo::cli::CommandRegistrar, 1> commands = {
      nodetopo::daemon::register_agent_command};
  return nodetopo::cli::run_cli(argc, argv, commands);
}
