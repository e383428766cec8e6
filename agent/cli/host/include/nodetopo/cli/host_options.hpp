// The --root and --mock options of every command that reads a host.
#pragma once

#include <nodetopo/core/host_source.hpp>

namespace CLI {
class App;
}

namespace nodetopo::cli {

/// Registers --root DIR and --mock PROFILE (mutually exclusive) on `cmd`, bound to `spec`.
void add_host_options(CLI::App& cmd, core::HostSpec& spec);

}  // namespace nodetopo::cli
