// GCC 12 at -O2 reports a false -Wnull-dereference inside libstdc++'s std::vector<std::string>
// relocation, inlined here from CLI11's CLI::detail::split; the code is correct.
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/base/log.hpp>
#include <nodetopo/cli/app.hpp>

namespace nodetopo::cli {

namespace {

spdlog::level::level_enum parse_level(const std::string& name) {
  return spdlog::level::from_str(name);
}

}  // namespace

std::string version_line() {
  return std::string("topo (nodetopo) ") + NODETOPO_VERSION;
}

int run_cli(int argc, char** argv, std::span<const CommandRegistrar> commands) {
  CLI::App app{"topo: node hardware topology discovery (nodetopo)", "topo"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_line());
  std::string log_level = "error";
  std::string log_format = "text";
  app.add_option("--log-level", log_level, "Log level: trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  app.add_option("--log-format", log_format, "Log format on stderr")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  CommandRunner runner;
  for (const CommandRegistrar& add : commands)
    add(app, runner);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and the hint to use --help
    return kExitUsage;
  }

  configure_logging(parse_level(log_level),
                    log_format == "json" ? LogFormat::kJson : LogFormat::kText);
  if (!runner) return kExitUsage;
  try {
    return runner();
  } catch (const std::exception& e) {
    std::cerr << "topo: internal error: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace nodetopo::cli
