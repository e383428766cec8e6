// `topo agent`: registered on the CLI by main, so that the CLI library does not link the daemon.
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace nodetopo::daemon {

/// Adds the `agent` subcommand to `app`; when it is chosen, sets `runner` to the function that
/// runs the agent (returns the exit code: 0 after SIGTERM, 1 when setup failed, 2 for usage).
void register_agent_command(CLI::App& app, std::function<int()>& runner);

/// The whole command line of `topo-agent`, the lean executable that `topo agent` replaces
/// itself with (agent/agent_main.cpp): argv is `topo agent [options]` as `topo` got it, parsed
/// with the same options, help text and exit codes (0, 1 when the agent cannot start, 2 usage).
int agent_main(int argc, char** argv);

}  // namespace nodetopo::daemon
