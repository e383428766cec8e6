// topo: the executable people and scripts run. It runs the reading commands itself (dump, matrix,
// export, mock, fit) and links only their libraries, so that `topo dump` starts about as fast
// as lstopo; every other command is listed in its help and runs as its own executable
// (helper_commands.hpp), which `topo` execs into. The frame builds in full only the command
// argv names, and reads dump's common lines without building CLI11's options at all (app.hpp).
// Its start-up pages are filled in ahead of use (prefault.cpp).
#include <nodetopo/cli/commands.hpp>

#include "prefault.hpp"

int main(int argc, char** argv) {
  namespace cli = nodetopo::cli;
  nodetopo::prefault::fill_heap();
  const auto commands = cli::topo_commands(argv);
  return cli::run_cli(argc, argv, commands);
}
