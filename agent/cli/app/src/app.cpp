// GCC 12 at -O2 reports a false -Wnull-dereference inside libstdc++'s std::vector<std::string>
// relocation, inlined here from CLI11's CLI::detail::split; the code is correct.
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include <algorithm>
#include <array>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include <nodetopo/base/log.hpp>
#include <nodetopo/cli/app.hpp>

namespace nodetopo::cli {

namespace {

constexpr std::string_view kLogLevel = "--log-level";
constexpr std::string_view kLogFormat = "--log-format";
// What CLI11 checks the global options' values against, and the plain reading too.
constexpr std::array<std::string_view, 7> kLogLevels = {"trace", "debug",    "info", "warn",
                                                        "error", "critical", "off"};
constexpr std::array<std::string_view, 2> kLogFormats = {"text", "json"};
constexpr CommandChoice kEveryCommand{CommandChoice::kNone, true, false};

spdlog::level::level_enum parse_level(const std::string& name) {
  return spdlog::level::from_str(name);
}

CLI::IsMember member_of(std::span<const std::string_view> values) {
  return CLI::IsMember(std::vector<std::string>(values.begin(), values.end()));
}

const PlainOption* plain_option_named(std::span<const PlainOption> options, std::string_view name,
                                      bool joined) {
  for (const PlainOption& option : options) {
    if (option.name == name || (!joined && !option.short_name.empty() && option.short_name == name))
      return &option;
  }
  return nullptr;
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

std::optional<std::size_t> read_plain_options(std::span<const char* const> words,
                                              std::span<const PlainOption> options) {
  std::vector<bool> given(options.size());
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view word = words[i];
    if (!word.starts_with('-')) return i;
    // Only a long name is read with its value after '='; `-o=x` is left to CLI11.
    const std::size_t equals = word.starts_with("--") ? word.find('=') : std::string_view::npos;
    const bool joined = equals != std::string_view::npos;
    const PlainOption* option = plain_option_named(options, word.substr(0, equals), joined);
    if (option == nullptr) return std::nullopt;
    std::string_view value;
    if (joined) {
      value = word.substr(equals + 1);
    } else if (++i < words.size()) {
      value = words[i];
    } else {
      return std::nullopt;  // CLI11: "requires 1 argument"
    }
    // An empty value is CLI11's to refuse with its own message; one that starts with '-'
    // (`--root --mock`, which CLI11 takes as the root) is far more often a mistake than a
    // path, and left to CLI11 too.
    if (value.empty() || value.starts_with('-')) return std::nullopt;
    if (!option->allowed.empty() &&
        std::find(option->allowed.begin(), option->allowed.end(), value) == option->allowed.end())
      return std::nullopt;
    const auto index = static_cast<std::size_t>(option - options.data());
    if (given[index]) return std::nullopt;  // CLI11's policy for a repeated option is its own
    given[index] = true;
    option->value->assign(value);
  }
  return words.size();
}

std::optional<CommandLine> read_plain_line(int argc, const char* const* argv,
                                           std::span<const Command> commands) {
  if (argc < 2) return std::nullopt;
  CommandLine line;
  const std::array<PlainOption, 2> globals = {
      PlainOption{kLogLevel, {}, &line.log_level, kLogLevels},
      PlainOption{kLogFormat, {}, &line.log_format, kLogFormats},
  };
  const std::span<const char* const> words(argv + 1, static_cast<std::size_t>(argc - 1));
  const std::optional<std::size_t> at = read_plain_options(words, globals);
  if (!at || *at == words.size()) return std::nullopt;
  for (const Command& command : commands) {
    if (command.name != words[*at]) continue;
    if (command.plain != nullptr && command.plain(words.subspan(*at + 1), line.runner)) return line;
    return std::nullopt;
  }
  return std::nullopt;
}

CommandLine parse_command_line(int argc, const char* const* argv, std::span<const Command> commands,
                               Registration registration) {
  CommandLine line;
  CLI::App app{"topo: node hardware topology discovery (nodetopo)", "topo"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_line());
  app.add_option("--log-level", line.log_level, "Log level: trace, debug, info, warn, error, off")
      ->check(member_of(kLogLevels))
      ->capture_default_str();
  app.add_option("--log-format", line.log_format, "Log format on stderr")
      ->check(member_of(kLogFormats))
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
  std::optional<CommandLine> plain = read_plain_line(argc, argv, commands);
  CommandLine line = plain ? std::move(*plain) : parse_command_line(argc, argv, commands);
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
