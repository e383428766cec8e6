// The --root and --mock options of every command that reads a host.
#pragma once

#include <array>

#include <nodetopo/cli/app.hpp>
#include <nodetopo/core/host_source.hpp>

namespace CLI {
class App;
}

namespace nodetopo::cli {

/// Registers --root DIR and --mock PROFILE (mutually exclusive) on `cmd`, bound to `spec`.
void add_host_options(CLI::App& cmd, core::HostSpec& spec);

/// The same two options for a command's plain reading (read_plain_options()), bound to `spec`.
/// Giving both is CLI11's error to print: a plain reader that got both declines the line
/// (plain_host_choice()).
std::array<PlainOption, 2> plain_host_options(core::HostSpec& spec);

/// Whether `spec`, as a plain reading left it, is a choice CLI11 accepts too: not both set.
bool plain_host_choice(const core::HostSpec& spec);

}  // namespace nodetopo::cli
