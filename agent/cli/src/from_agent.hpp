// `--from-agent [--bus system|session]` of the reading commands: answer from a running
// `topo agent` over D-Bus instead of discovering the host (agent/daemon's client library).
// Private to the CLI's commands: it includes CLI11, which nothing outside agent/cli links.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace nodetopo::cli {

struct FromAgent {
  bool enabled = false;
  std::string bus = "system";

  /// Adds the two options to `cmd`; --from-agent excludes the host options (--root, --mock)
  /// and every option in `rendering` (the agent renders with its own settings).
  void add_options(CLI::App& cmd, std::initializer_list<const char*> rendering = {}) {
    CLI::Option* flag = cmd.add_flag(
        "--from-agent", enabled,
        "Read what a running `topo agent` published (D-Bus dev.nodetopo.Topology1) instead of "
        "discovering the host; the output equals the one-shot output for the agent's host");
    cmd.add_option("--bus", bus, "Bus of the agent for --from-agent")
        ->check(CLI::IsMember({"system", "session"}))
        ->capture_default_str()
        ->needs(flag);
    for (const char* name : {"--root", "--mock"}) {
      if (CLI::Option* o = cmd.get_option_no_throw(name)) flag->excludes(o);
    }
    for (const char* name : rendering) {
      if (CLI::Option* o = cmd.get_option_no_throw(name)) flag->excludes(o);
    }
  }
};

}  // namespace nodetopo::cli
