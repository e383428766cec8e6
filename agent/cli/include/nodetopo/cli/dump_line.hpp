// What `topo dump`'s words ask for, and its two readers of them: CLI11's options (every form,
// help and errors) and the plain reading of the common lines (`topo dump --format json --root
// DIR`), which spares a dump of a small root the building of CLI11's options (docs/cli.md,
// "Start-up"). Both must come to the same DumpLine wherever the plain one reads a line at all
// (tests/unit/cli/dump_line_test.cpp).
#pragma once

#include <optional>
#include <span>
#include <string>

#include <nodetopo/cli/app.hpp>
#include <nodetopo/cli/from_agent.hpp>
#include <nodetopo/core/host_source.hpp>

namespace CLI {
class App;
}

namespace nodetopo::cli {

struct DumpLine {
  core::HostSpec host;          ///< --root, --mock
  FromAgent from_agent;         ///< --from-agent, --bus
  std::string format = "text";  ///< --format: text, json or dot
  std::string output;           ///< --output/-o FILE; empty: standard output

  bool operator==(const DumpLine&) const = default;
};

/// CLI11's reading: gives `cmd` dump's options, bound to `line`.
void add_dump_options(CLI::App& cmd, DumpLine& line);

/// The plain reading (read_plain_options()): --root, --mock, --format and --output/-o, each once
/// and with a value CLI11 accepts as it is; nullopt for anything else (--from-agent, --help, an
/// error), which is then CLI11's.
std::optional<DumpLine> read_plain_dump_line(std::span<const char* const> words);

/// dump's PlainReader for the command table: read_plain_dump_line(), and on success the runner
/// the CLI11 callback would have set.
bool read_plain_dump(std::span<const char* const> words, CommandRunner& runner);

}  // namespace nodetopo::cli
