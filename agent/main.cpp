#include <nodetopo/cli/commands.hpp>

int main(int argc, char** argv) {
  return nodetopo::cli::run_cli(argc, argv);
}
