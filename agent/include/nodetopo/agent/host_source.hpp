// Where a reading command (dump, matrix, export) takes its host from: --root DIR, --mock PROFILE,
// the HOST_ROOT environment variable, or "/" (DESIGN §2).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/sys_root.hpp>

namespace CLI {
class App;
}

namespace nodetopo::agent {

/// Options shared by every command that reads a host, and the opened root.
///
/// With --mock, the profile is built into a private temporary directory the first time the
/// root is needed; the directory is removed by discover() as soon as the probes are done, and
/// in any case when the HostSource is destroyed (errors included). While it exists, the mock
/// NVML library is selected and NODETOPO_MOCK_NVML_FIXTURE points at its fixture. A --root
/// directory built earlier by `topo mock build` (it holds nodetopo-mock/nvml.json) gets the same
/// NVML wiring, so `topo mock build P DIR && topo dump --root DIR` equals `topo dump --mock P`.
class HostSource {
 public:
  HostSource();
  ~HostSource();
  HostSource(const HostSource&) = delete;
  HostSource& operator=(const HostSource&) = delete;

  /// Registers --root and --mock (mutually exclusive) on `cmd`.
  void add_options(CLI::App& cmd);

  /// Opens the root chosen by the options and the environment. The error names the path (or the
  /// profile field at fault for --mock).
  [[nodiscard]] Result<probes::SysRoot> open() const;

  /// Opens the root and runs every probe on it; a mock host is removed before returning.
  [[nodiscard]] Result<probes::Discovery> discover() const;

  /// Probe options that follow from the source (a mock root brings its own NVML library).
  [[nodiscard]] probes::ProbeOptions probe_options() const;

  /// True when --mock was given.
  [[nodiscard]] bool is_mock() const { return !mock_.empty(); }

  /// Removes the mock host now (no-op for other sources).
  void release() const;

 private:
  struct MockSession;

  std::string root_;
  std::string mock_;
  mutable std::unique_ptr<MockSession> session_;
};

}  // namespace nodetopo::agent
