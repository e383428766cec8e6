// The table of `topo`'s commands (commands.hpp): what agent/main.cpp parses argv against, and
// what the tests compare the frame's lazy registration over.
#include <nodetopo/cli/commands.hpp>
#include <nodetopo/cli/dump_line.hpp>

namespace nodetopo::cli {

namespace {

Command helper_entry(const HelperCommand& helper, char** argv) {
  return {helper.name, helper.description, [&helper, argv](CLI::App& cmd, CommandRunner& runner) {
            register_helper_command(cmd, runner, helper, argv);
          }};
}

}  // namespace

std::array<Command, kTopoCommandCount> topo_commands(char** argv) {
  static_assert(kHelperCommands.size() == 4, "list every helper below");
  return {{
      {"dump", kDumpDescription, register_dump_command, read_plain_dump},
      {"matrix", kMatrixDescription, register_matrix_command},
      {"export", kExportDescription, register_export_command},
      {"mock", kMockDescription, register_mock_command},
      {"fit", kFitDescription, register_fit_command},
      helper_entry(kHelperCommands[0], argv),
      helper_entry(kHelperCommands[1], argv),
      helper_entry(kHelperCommands[2], argv),
      helper_entry(kHelperCommands[3], argv),
  }};
}

}  // namespace nodetopo::cli
