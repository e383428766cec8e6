// topo-cleanup: the process of `topo cleanup` (cli/helper_commands.hpp): the Kubernetes client
// (libcurl) without the probes. Installed in libexec/nodetopo; the interface stays
// `topo cleanup`.
#include <array>

#include <nodetopo/cli/cleanup_command.hpp>

int main(int argc, char** argv) {
  const std::array<nodetopo::cli::CommandRegistrar, 1> commands = {
      nodetopo::cli::register_cleanup_command};
  return nodetopo::cli::run_cli(argc, argv, commands);
}
