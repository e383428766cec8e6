#include <array>

#include <nodetopo/cli/commands.hpp>
#include <nodetopo/daemon/agent_command.hpp>

int main(int argc, char** argv) {
  // `topo agent` lives in agent/daemon: registered here so that nodetopo_cli does not link it.
  const std::array<nodetopo::cli::CommandRegistrar, 1> extra = {
      &nodetopo::daemon::register_agent_command};
  return nodetopo::cli::run_cli(argc, argv, extra);
}
