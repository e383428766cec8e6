// `topo kubelet-plugin`: registered by topo-kubelet-plugin (agent/kubelet_plugin_main.cpp), the
// only executable that links gRPC and protobuf.
#pragma once

#include <nodetopo/cli/app.hpp>

namespace nodetopo::cli {

/// Gives `cmd`, the `kubelet-plugin` subcommand (kKubeletPluginCommand) the frame created, its
/// options; sets `runner` when it is chosen.
void register_kubelet_plugin_command(CLI::App& cmd, CommandRunner& runner);

}  // namespace nodetopo::cli
