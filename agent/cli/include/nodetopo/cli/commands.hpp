// The `topo` command line: one function per subcommand to register it on the CLI11 app.
#pragma once

#include <functional>
#include <memory>
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

void register_dump_command(CLI::App& app, CommandRunner& runner);
void register_matrix_command(CLI::App& app, CommandRunner& runner);
void register_export_command(CLI::App& app, CommandRunner& runner);
void register_mock_command(CLI::App& app, CommandRunner& runner);
void register_fit_command(CLI::App& app, CommandRunner& runner);
void register_capture_command(CLI::App& app, CommandRunner& runner);
void register_cleanup_command(CLI::App& app, CommandRunner& runner);
void register_kubelet_plugin_command(CLI::App& app, CommandRunner& runner);

/// Registers a subcommand that lives outside this library (`topo agent`, in agent/daemon): main
/// passes it, so that the CLI does not link the daemon.
using CommandRegistrar = void (*)(CLI::App& app, CommandRunner& runner);

/// What `topo --version` prints (without the newline); a capture stores it too.
std::string version_line();

/// Parses argv and runs the chosen command; returns the process exit code. Never throws.
int run_cli(int argc, char** argv, std::span<const CommandRegistrar> extra = {});

}  // namespace nodetopo::cli
