// `--from-agent [--bus system|session]` of the reading commands: answer from a running
// `topo agent` over D-Bus instead of discovering the host (agent/daemon's client library).
#pragma once

#include <initializer_list>
#include <string>

namespace CLI {
class App;
}

namespace nodetopo::cli {

struct FromAgent {
  bool enabled = false;
  std::string bus = "system";

  /// Adds the two options to `cmd`; --from-agent excludes the host options (--root, --mock)
  /// and every option in `rendering` (the agent renders with its own settings).
  void add_options(CLI::App& cmd, std::initializer_list<const char*> rendering = {});

  bool operator==(const FromAgent&) const = default;
};

}  // namespace nodetopo::cli
