#include <nodetopo/agent/commands.hpp>

int main(int argc, char** argv) {
  return nodetopo::agent::run_cli(argc, argv);
}
