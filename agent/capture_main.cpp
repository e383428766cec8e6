// topo-capture: the process of `topo capture` (cli/helper_commands.hpp), the only executable
// that links libarchive. Installed in libexec/nodetopo; the interface stays `topo capture`.
#include <array>

#include <nodetopo/cli/capture_command.hpp>
#include <nodetopo/cli/helper_commands.hpp>

int main(int argc, char** argv) {
  namespace cli = nodetopo::cli;
  // Name and description shared with `topo`, which lists the command and execs this.
  const std::array<cli::Command, 1> commands = {
      cli::Command{cli::kCaptureCommand.name, cli::kCaptureCommand.description,
                   nodetopo::cli::register_capture_command}};
  return cli::run_cli(argc, argv, commands);
}
