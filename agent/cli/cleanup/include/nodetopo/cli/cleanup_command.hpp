// `topo cleanup`: registered by topo-cleanup (agent/cleanup_main.cpp), which links the
// Kubernetes client and no probe.
#pragma once

#include <nodetopo/cli/app.hpp>

namespace nodetopo::cli {

/// Adds `cleanup` (kCleanupCommand) to `app`; sets `runner` when it is chosen.
void register_cleanup_command(CLI::App& app, CommandRunner& runner);

}  // namespace nodetopo::cli
