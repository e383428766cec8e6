// `topo capture`: registered by topo-capture (agent/capture_main.cpp), the only executable that
// links libarchive.
#pragma once

#include <nodetopo/cli/app.hpp>

namespace nodetopo::cli {

/// Adds `capture` (kCaptureCommand) to `app`; sets `runner` when it is chosen.
void register_capture_command(CLI::App& app, CommandRunner& runner);

}  // namespace nodetopo::cli
