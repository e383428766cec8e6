// `topo agent`: registered on the command line by topo-agent (agent/agent_main.cpp), the
// executable `topo agent` execs into, so that `topo` does not link the daemon.
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace nodetopo::daemon {

/// Gives `cmd`, the `agent` subcommand (cli::kAgentCommand) the frame created, its options; when
/// it is chosen, sets `runner` to the function that runs the agent (returns the exit code: 0
/// after SIGTERM, 1 when setup failed, 2 for usage).
void register_agent_command(CLI::App& cmd, std::function<int()>& runner);

}  // namespace nodetopo::daemon
