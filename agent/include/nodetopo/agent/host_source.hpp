// Where a reading command (dump, matrix, export) takes its host from: --root DIR, the HOST_ROOT
// environment variable, or "/" (DESIGN §2).
#pragma once

#include <optional>
#include <string>

#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/sys_root.hpp>

namespace CLI {
class App;
}

namespace nodetopo::agent {

/// Options shared by every command that reads a host, and the opened root.
class HostSource {
 public:
  /// Registers --root on `cmd`.
  void add_options(CLI::App& cmd);

  /// Opens the root chosen by the options and the environment. The error names the path.
  [[nodiscard]] Result<probes::SysRoot> open() const;

  /// Opens the root and runs every probe on it.
  [[nodiscard]] Result<probes::Discovery> discover() const;

  /// Probe options that follow from the source (a mock root brings its own NVML library).
  [[nodiscard]] probes::ProbeOptions probe_options() const;

 private:
  std::string root_;
};

}  // namespace nodetopo::agent
