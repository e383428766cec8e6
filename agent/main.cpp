// topo: the executable people and scripts run. It runs the reading commands itself (dump, matrix,
// export, mock, fit) and links only their libraries, so that `topo dump` starts about as fast
// as lstopo; every other command is listed in its help and runs as its own executable
// (helper_commands.hpp), which `topo` execs into.
#include <array>

#include <nodetopo/cli/commands.hpp>

int main(int argc, char** argv) {
  namespace cli = nodetopo::cli;
  const std::array<cli::CommandRegistrar, 6> commands = {
      cli::register_dump_command,
      cli::register_matrix_command,
      cli::register_export_command,
      cli::register_mock_command,
      cli::register_fit_command,
      [argv](CLI::App& app, cli::CommandRunner& runner) {
        cli::register_helper_commands(app, runner, argv);
      }};
  return cli::run_cli(argc, argv, commands);
}
