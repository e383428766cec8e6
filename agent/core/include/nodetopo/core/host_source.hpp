// Where a discovery reads its host from, and the opened host as a value that owns what it set up.
//
// The pipeline of every reading command and of the agent (docs/ARCHITECTURE.md, "Data flow"):
//
//   core::HostSource source(core::HostSpec{.root = "", .mock = "dgx-h100"});
//   Result<core::OpenedHost> host = source.open();        // once per process
//   core::write_process_environment(*host);               // still single-threaded: see below
//   Result<core::NodeSnapshot> snap = core::take_snapshot(*host);   // as often as needed
//   Result<std::string> doc = core::render(*snap, core::DocumentKind::kResourceSlices, "yaml");
//
// The host is chosen, in this order, from --mock PROFILE (a mock host built into a private
// temporary directory), --root DIR (a capture, a `topo mock build` directory or a mounted host),
// $HOST_ROOT (the DaemonSet mounts the node's / there) or "/".
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/probes/environment.hpp>
#include <nodetopo/probes/probe.hpp>
#include <nodetopo/probes/sys_root.hpp>

namespace nodetopo::mock {
class TempHost;
}

namespace nodetopo::core {

/// What the user asked for. Both empty: $HOST_ROOT, else "/". Setting both is a usage error the
/// command line already refuses; open() then prefers `mock`.
struct HostSpec {
  std::string root;  ///< --root DIR
  std::string mock;  ///< --mock PROFILE (a shipped name, a .yaml file, "synthetic:gpus=64")

  bool operator==(const HostSpec&) const = default;
};

/// A host opened for discovery: the root (the only door to its files), the probe options that
/// follow from it, and whatever had to be set up for it, which it undoes when destroyed:
///
/// - for --mock, the temporary mock host (its directory is removed by the destructor);
/// - for a mock host (--mock, or a --root built by `topo mock build`, which holds
///   nodetopo-mock/nvml.json), the mock NVML library in probe_options().nvml_library and the
///   fixture it must read (nvml_fixture(), and NODETOPO_MOCK_NVML_FIXTURE in
///   probe_options().library_environment).
///
/// Opening writes nothing into the process environment: what hwloc and the NVML library read
/// from it is environment(), written by write_process_environment() (below).
///
/// Movable, not copyable. Keep it alive while snapshots are taken; a daemon opens it once at
/// start. Its SysRoot caches resolved paths for its whole life (probes/sys_root.hpp): a daemon
/// that wants to see hot-plugged devices takes its snapshots with SnapshotOptions::reopen_root,
/// which reads through a fresh SysRoot each time while this host stays open.
class OpenedHost {
 public:
  OpenedHost(OpenedHost&& other) noexcept;
  OpenedHost& operator=(OpenedHost&& other) noexcept;
  OpenedHost(const OpenedHost&) = delete;
  OpenedHost& operator=(const OpenedHost&) = delete;
  ~OpenedHost();

  /// The host root every probe and every settings read goes through.
  [[nodiscard]] const probes::SysRoot& root() const { return root_; }
  /// Options for probes::discover() on this host.
  [[nodiscard]] const probes::ProbeOptions& probe_options() const { return options_; }
  /// True for a --mock host (built by open(), removed by the destructor).
  [[nodiscard]] bool is_mock() const { return temp_ != nullptr; }
  /// The mock NVML fixture of this host (absolute path), empty when there is none.
  [[nodiscard]] const std::string& nvml_fixture() const { return nvml_fixture_; }
  /// The variables a discovery of this host needs in the process environment
  /// (probes::discovery_environment: hwloc's HWLOC_FSROOT and co, the NVML fixture).
  [[nodiscard]] std::vector<probes::EnvVar> environment() const;

 private:
  friend class HostSource;
  OpenedHost(std::unique_ptr<mock::TempHost> temp, probes::SysRoot root);
  void use_nvml_fixture(const std::string& fixture);

  // Declared first, destroyed last: the root's descriptor is closed before the directory goes.
  std::unique_ptr<mock::TempHost> temp_;
  probes::SysRoot root_;
  probes::ProbeOptions options_;
  std::string nvml_fixture_;
};

/// Writes host.environment() into the process environment. The rule (probes/probe.hpp): call it
/// from main's thread before any other thread exists, once per host root — topo's commands right
/// after open(), a daemon once at start (its root never changes). Probes only check it; a
/// snapshot taken without it fails the cpu probe with a message naming the variable.
void write_process_environment(const OpenedHost& host);

/// The choice of host, turned into an OpenedHost by open().
class HostSource {
 public:
  HostSource() = default;
  explicit HostSource(HostSpec spec) : spec_(std::move(spec)) {}

  /// The choice; the command line binds its --root and --mock options to these fields.
  [[nodiscard]] HostSpec& spec() { return spec_; }
  [[nodiscard]] const HostSpec& spec() const { return spec_; }

  /// Opens the chosen host. Not const because it acts on the system: with --mock it builds a
  /// host into a new temporary directory (every call builds a new one, owned by the result).
  /// The error names the path, or the profile field at fault for --mock.
  [[nodiscard]] Result<OpenedHost> open();

 private:
  HostSpec spec_;
};

}  // namespace nodetopo::core
