// topo-capture: the process of `topo capture` (cli/helper_commands.hpp), the only executable
// that links libarchive. Installed in libexec/nodetopo; the interface stays `topo capture`.
#include <array>

#include <nodetopo/cli/capture_command.hpp>

int main(int argc, char** argv) {
  const std::array<nodetopo::cli::CommandRegistrar, 1> commands = {
      nodetopo::cli::register_capture_command};
  return nodetopo::cli::run_cli(argc, argv, commands);
}
