// The commands `topo` runs in its own process (dump, matrix, export, mock, fit), one function
// each to build it on the CLI11 app, the stand-ins of the commands it execs into
// (helper_commands.hpp), and the table of all of them that `topo` parses its argv against.
#pragma once

#include <array>
#include <string_view>

#include <nodetopo/cli/app.hpp>
#include <nodetopo/cli/helper_commands.hpp>

namespace nodetopo::cli {

inline constexpr std::string_view kDumpDescription =
    "Discover the host once and print its topology: tree (text), model (json) or picture (dot)";
inline constexpr std::string_view kMatrixDescription =
    "Print the accelerator/NIC connection matrix (like nvidia-smi topo -m)";
inline constexpr std::string_view kExportDescription =
    "Render the node for Kubernetes: resourceslices, labels, nrt, shape, autoscaler-template";
inline constexpr std::string_view kMockDescription =
    "Mock hosts: fake host roots built from profiles, for machines without the hardware";
inline constexpr std::string_view kFitDescription =
    "Would these claims fit on this node? Runs the kube-scheduler's DRA allocation offline and "
    "explains every step. Exit 0 fits, 1 does not fit, 2 bad input or a selector error";

// Each gives `cmd` (created by the frame with the name and description) its options and
// subcommands; its callback sets `runner` when the command is chosen (CommandRegistrar).
void register_dump_command(CLI::App& cmd, CommandRunner& runner);
void register_matrix_command(CLI::App& cmd, CommandRunner& runner);
void register_export_command(CLI::App& cmd, CommandRunner& runner);
void register_mock_command(CLI::App& cmd, CommandRunner& runner);
void register_fit_command(CLI::App& cmd, CommandRunner& runner);

/// Makes `cmd` the stand-in of `helper` (one of kHelperCommands), taking all its arguments as
/// they are (its own --help included): when it is chosen, the runner replaces this process with
/// the helper, passing `argv` unchanged (exec_helper).
void register_helper_command(CLI::App& cmd, CommandRunner& runner, const HelperCommand& helper,
                             char** argv);

/// Every command of `topo`, in the order `topo --help` lists them: its own, then the helpers.
/// `argv` is what a helper's stand-in passes on when it execs.
inline constexpr std::size_t kTopoCommandCount = 5 + kHelperCommands.size();
std::array<Command, kTopoCommandCount> topo_commands(char** argv);

/// Runs `helper` in place of this process: execv() of its executable with `argv` (the same pid,
/// arguments and environment), looked up next to this executable (a build tree), then in the
/// installed <libexecdir>/nodetopo. Returns only when none can be executed: it has then printed
/// which paths it tried and why each failed, and returns kExitFailure.
int exec_helper(const HelperCommand& helper, char** argv);

}  // namespace nodetopo::cli
