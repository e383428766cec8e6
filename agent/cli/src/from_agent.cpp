#include <CLI/CLI.hpp>

#include <nodetopo/cli/from_agent.hpp>

namespace nodetopo::cli {

void FromAgent::add_options(CLI::App& cmd, std::initializer_list<const char*> rendering) {
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

}  // namespace nodetopo::cli
