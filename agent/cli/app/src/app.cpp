// GCC 12 at -O2 reports a false -Wnull-dereference inside libstdc++'s std::vector<std::string>
// relocation, inlined here from CLI11's CLI::detail::split; the code is correct.
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include <exception>
#include <iostream>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include <nodetopo/base/log.hpp>
#include <nodetopo/cli/app.hpp>

namespace nodetopo::cli {

namespace {

constexpr std::string_view kLogLevel = "--log-level";
constexpr std::string_view kLogFormat = "--log-format";
constexpr CommandChoice kEveryCommand{CommandChoice::kNone, true, false};

spdlog::level::level_enum parse_level(const std::string& name) {
  return spdlog::level::from_str(name);
}

// `--log-level=X` (as one word) for `option`.
bool is_joined(std::string_view arg, std::string_view option) {
  return arg.size() > option.size() && arg.starts_with(option) && arg[option.size()] == '=';
}

}  // namespace

std::string version_line() {
  return std::string("topo (nodetopo) ") + NODETOPO_VERSION;
}

// Mirrors how CLI11 reads the top level: an option that takes a value consumes the next word
// whatever it is (`--log-level dump` is a bad level, not the dump command), a flag consumes
// none, and the first other word that names a subcommand is the one CLI11 descends into. Past
// it, CLI11 never comes back to the top level's other subcommands: `topo` takes exactly one
// (require_subcommand(1)). Anything else before the word ("--", an unknown option) is left to
// CLI11 with every command built, so that no output can depend on this guess.
CommandChoice choose_command(int argc, const char* const* argv, std::span<const Command> commands) {
  CommandChoice choice;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == kLogLevel || arg == kLogFormat) {
      ++i;  // its value, even one that starts with '-' or is a command's name
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      choice.help = true;
      continue;
    }
    if (is_joined(arg, kLogLevel) || is_joined(arg, kLogFormat) || arg == "--version") continue;
    if (arg.starts_with('-')) return kEveryCommand;
    for (std::size_t c = 0; c < commands.size(); ++c) {
      if (commands[c].name == arg) return CommandChoice{c, false, choice.help};
    }
    return kEveryCommand;
  }
  return choice;
}

CommandLine parse_command_line(int argc, const char* const* argv, std::span<const Command> commands,
                               Registration registration) {
  CommandLine line;
  CLI::App app{"topo: node hardware topology discovery (nodetopo)", "topo"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_line());
  app.add_option("--log-level", line.log_level, "Log level: trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  app.add_option("--log-format", line.log_format, "Log format on stderr")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  const CommandChoice choice =
      registration == Registration::kAll ? kEveryCommand : choose_command(argc, argv, commands);
  // A named command is built alone: once CLI11 has descended into it, it never looks at the
  // top level's other subcommands again (at most one is taken), and nothing it prints names
  // them. Without one, the others are needed only for the list in `topo --help`: the top
  // level's errors and the version name no command.
  const bool listed = choice.index == CommandChoice::kNone && choice.help;
  for (std::size_t c = 0; c < commands.size(); ++c) {
    const bool named = choice.index == c;
    if (!choice.all && !named && !listed) continue;
    const Command& command = commands[c];
    CLI::App* cmd = app.add_subcommand(std::string(command.name), std::string(command.description));
    if (choice.all || named) command.add(*cmd, line.runner);
  }

  try {
    app.parse(argc, argv);
    // A command that parsed but did not say how to run (none of them today) is not a success.
    if (!line.runner) line.exit_code = kExitUsage;
    return line;
  } catch (const CLI::CallForHelp& e) {
    line.exit_code = app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    line.exit_code = app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    line.exit_code = app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and the hint to use --help
    line.exit_code = kExitUsage;
  }
  line.runner = nullptr;  // a callback may have run before CLI11 saw --help or an error
  return line;
}

int run_cli(int argc, char** argv, std::span<const Command> commands) {
  CommandLine line = parse_command_line(argc, argv, commands);
  if (!line.runner) return line.exit_code;
  configure_logging(parse_level(line.log_level),
                    line.log_format == "json" ? LogFormat::kJson : LogFormat::kText);
  try {
    return line.runner();
  } catch (const std::exception& e) {
    std::cerr << "topo: internal error: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace nodetopo::cli
