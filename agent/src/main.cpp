#include <array>

#include <nodetopo/agent/commands.hpp>
#include <nodetopo/daemon/agent_command.hpp>

int main(int argc, char** argv) {
  const std::array<nodetopo::agent::CommandRegistrar, 1> extra = {
      &nodetopo::daemon::register_agent_command};
  return nodetopo::agent::run_cli(argc, argv, extra);
}
