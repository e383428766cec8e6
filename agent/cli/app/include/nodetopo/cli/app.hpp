// The command-line frame every nodetopo executable shares: `topo` and the helpers it execs into
// (topo-capture, topo-cleanup, topo-kubelet-plugin, topo-agent; docs/cli.md). Each executable
// passes the table of the commands it links; the frame adds the global options (--log-level,
// --log-format, --version, --help), the exit codes and the error handling, so that they behave
// the same whichever executable runs the command.
//
// Building a command's options is most of what `topo` does before discovery starts (CLI11
// allocates and parses every option name and validator), and one invocation runs one command.
// So the frame builds only the command that argv names, alone; when argv names none
// (`topo --help`, `topo --version`), every command is a bare subcommand with its name and
// description, which is all that the top level's help and errors print (docs/cli.md,
// "Start-up"). A command with a PlainReader (dump) has its common lines read without CLI11 at
// all (read_plain_line()); any other line still goes through CLI11 as above.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

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

/// Gives `cmd`, the subcommand the frame created with the command's name and description, its
/// options, subcommands and callback; the callback sets `runner` when the command is chosen.
using CommandRegistrar = std::function<void(CLI::App& cmd, CommandRunner& runner)>;

/// Reads a command's words (those after its name) without CLI11 when each of them is in a form
/// the reader knows CLI11 reads the same way (read_plain_options()): sets `runner` to what the
/// registrar's callback would have set and returns true. Returns false for anything else,
/// leaving the whole line to CLI11, which then prints the help, the error or runs it.
using PlainReader = bool (*)(std::span<const char* const> words, CommandRunner& runner);

/// One command of an executable. Name and description are what the parent's help lists, and
/// all that a command is built with for `topo --help`.
struct Command {
  std::string_view name;         ///< the subcommand: `topo <name> ...`
  std::string_view description;  ///< the paragraph `topo --help` lists it with
  CommandRegistrar add;          ///< builds the rest of it (options, subcommands, callback)
  PlainReader plain = nullptr;   ///< its common command lines without CLI11 (read_plain_line())
};

/// An option a plain reader knows: one value, given at most once.
struct PlainOption {
  std::string_view name;                           ///< "--root"
  std::string_view short_name;                     ///< "-o", or empty
  std::string* value;                              ///< receives the value
  std::span<const std::string_view> allowed = {};  ///< CLI11's IsMember set; empty: any value
};

/// Reads `words` as `options` in the forms CLI11 reads one way only: `--name VALUE`,
/// `--name=VALUE` and `-x VALUE`, each option at most once, its value neither empty nor starting
/// with '-' and, when the option has `allowed` values, one of them. Stops at the first word that
/// does not start with '-' and returns its index (words.size() when there is none). Anything
/// else (an unknown option, a flag, a repeated option, a bad or missing value, "--", `-xVALUE`)
/// returns nullopt: it is CLI11's to read, print and exit on.
std::optional<std::size_t> read_plain_options(std::span<const char* const> words,
                                              std::span<const PlainOption> options);

/// What `topo --version` prints (without the newline); a capture stores it too.
std::string version_line();

/// Which commands parse_command_line() builds.
enum class Registration {
  kNamed,  ///< only the one argv names (choose_command()); when argv names none, each by name
           ///< and description only for --help, else none; all of them when argv's first word
           ///< is not understood
  kAll,    ///< every one: what kNamed must not differ from in any output (the tests compare)
};

/// What argv came to: a command to run, or an exit code (help, version or a usage error, all
/// printed already).
struct CommandLine {
  CommandRunner runner;  ///< the chosen command, set when its arguments parsed
  int exit_code = kExitOk;
  std::string log_level = "error";  ///< --log-level as given, or its default
  std::string log_format = "text";  ///< --log-format as given, or its default
};

/// Which command argv names, seen as CLI11 will see it: its first word after the global options
/// (--log-level X, --log-level=X, --log-format X, --log-format=X, --version, -h, --help).
struct CommandChoice {
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t index = kNone;  ///< into the table; kNone: no word at all (`topo --version`)
  bool all = false;           ///< a word or option the frame does not know: build every command
  bool help = false;          ///< -h or --help before the word (or without one)
};
CommandChoice choose_command(int argc, const char* const* argv, std::span<const Command> commands);

/// Parses argv (`topo [global options] COMMAND ...`) against `commands`, printing help, the
/// version or the usage error itself. Never runs a command.
CommandLine parse_command_line(int argc, const char* const* argv, std::span<const Command> commands,
                               Registration registration = Registration::kNamed);

/// `topo [--log-level X] [--log-format X] COMMAND WORDS...` read without CLI11: the global
/// options by read_plain_options(), then the command's PlainReader. nullopt when any part is not
/// in plain form, or the command has no reader; the line is then parse_command_line()'s. Spares
/// `topo dump` the building of CLI11's options, an eighth of its instructions (docs/cli.md,
/// "Start-up").
std::optional<CommandLine> read_plain_line(int argc, const char* const* argv,
                                           std::span<const Command> commands);

/// Parses argv, configures logging from the global options and runs the chosen command; returns
/// the process exit code. Never throws.
int run_cli(int argc, char** argv, std::span<const Command> commands);

}  // namespace nodetopo::cli
