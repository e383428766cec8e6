// `topo capture`: registered by topo-capture (agent/capture_main.cpp), the only executable that
// links libarchive.
#pragma once

#include <nodetopo/cli/app.hpp>

namespace nodetopo::cli {

/// Gives `cmd`, the `capture` subcommand (kCaptureCommand) the frame created, its options; sets
/// `runner` when it is chosen.
void register_capture_command(CLI::App& cmd, CommandRunner& runner);

}  // namespace nodetopo::cli
