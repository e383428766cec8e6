// `topo cleanup`: registered by topo-cleanup (agent/cleanup_main.cpp), which links the
// Kubernetes client and no probe.
#pragma once

#include <nodetopo/cli/app.hpp>

namespace nodetopo::cli {

/// Gives `cmd`, the `cleanup` subcommand (kCleanupCommand) the frame created, its options; sets
/// `runner` when it is chosen.
void register_cleanup_command(CLI::App& cmd, CommandRunner& runner);

}  // namespace nodetopo::cli
