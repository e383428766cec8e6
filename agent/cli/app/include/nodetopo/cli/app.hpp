// The command-line frame every nodetopo executable shares: `topo` and the helpers it execs into
// (topo-capture, topo-cleanup, topo-kubelet-plugin, topo-agent; docs/cli.md). Each executable
// registers the commands it links; the frame adds the global options (--log-level,
// --log-format, --version, --help), the exit codes and the error handling, so that they behave
// the same whichever executable runs the command.
#pragma once

#include <functional>
#include <span>
#include <string>

namespace CLI {
class App;
}

namespace nodetopo::cli {

/// Exit codes of `topo`: 0 success, 1 failure (message names the path or object at fault),
/// 2 usage error (unknown option, bad value).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

/// A registered subcommand sets this to the function that runs it once parsing succeeded.
using CommandRunner = std::function<int()>;

/// Adds one subcommand (or several) to the app; sets the runner when it is chosen.
using CommandRegistrar = std::function<void(CLI::App& app, CommandRunner& runner)>;

/// What `topo --version` prints (without the newline); a capture stores it too.
std::string version_line();

/// Parses argv (`topo [global options] COMMAND ...`) against `commands`, configures logging from
/// the global options and runs the chosen command; returns the process exit code. Never throws.
int run_cli(int argc, char** argv, std::span<const CommandRegistrar> commands);

}  // namespace nodetopo::cli
