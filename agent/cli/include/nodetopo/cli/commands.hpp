// The commands `topo` runs in its own process (dump, matrix, export, mock, fit), one function
// each to register it on the CLI11 app, and the stand-ins of the commands it execs into
// (helper_commands.hpp).
#pragma once

#include <nodetopo/cli/app.hpp>
#include <nodetopo/cli/helper_commands.hpp>

namespace nodetopo::cli {

void register_dump_command(CLI::App& app, CommandRunner& runner);
void register_matrix_command(CLI::App& app, CommandRunner& runner);
void register_export_command(CLI::App& app, CommandRunner& runner);
void register_mock_command(CLI::App& app, CommandRunner& runner);
void register_fit_command(CLI::App& app, CommandRunner& runner);

/// Registers every command of kHelperCommands with its name and description, taking all its
/// arguments as they are (its own --help included): when one is chosen, the runner replaces
/// this process with the helper, passing `argv` unchanged (exec_helper).
void register_helper_commands(CLI::App& app, CommandRunner& runner, char** argv);

/// Runs `helper` in place of this process: execv() of its executable with `argv` (the same pid,
/// arguments and environment), looked up next to this executable (a build tree), then in the
/// installed <libexecdir>/nodetopo. Returns only when none can be executed: it has then printed
/// which paths it tried and why each failed, and returns kExitFailure.
int exec_helper(const HelperCommand& helper, char** argv);

}  // namespace nodetopo::cli
