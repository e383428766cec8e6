// The process environment a discovery needs, written once by the program's main thread.
//
// Two libraries read their settings from the environment, with no API for them: hwloc
// (HWLOC_FSROOT, the host root to read; HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES; HWLOC_PLUGINS_PATH; and
// the variables that would replace the real backend, HWLOC_XMLFILE and HWLOC_SYNTHETIC), and a
// drop-in NVML library (the mock's NODETOPO_MOCK_NVML_FIXTURE, see ProbeOptions). POSIX makes
// setenv() unsafe against any concurrent getenv(), including ones inside libraries (a resolver
// thread, an async log sink), so the rule is (probes/probe.hpp):
//
//   the environment is written by main, once, after the host is opened and before any thread
//   starts; probes never write it, they only check that it holds what they need.
//
// The host root does not change during a process's life, so once is enough. What hwloc can be
// told through its API (the components it may use) is told through the API (cpu probe).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/probes/probe.hpp>
#include <nodetopo/probes/sys_root.hpp>

namespace nodetopo::probes {

/// One variable: set to `value`, or unset when it has none.
struct EnvVar {
  std::string name;
  std::optional<std::string> value;
};

/// Everything the built-in probes need to find in the environment to discover `root` with
/// `options`: hwloc's variables (HWLOC_FSROOT unset for "/"; HWLOC_HIDE_ERRORS=2 when the logs
/// are JSON, so that every stderr line stays JSON — configure logging first), then
/// options.library_environment.
std::vector<EnvVar> discovery_environment(const SysRoot& root, const ProbeOptions& options);

/// Writes `vars` into the process environment. Call only while the process has one thread (see
/// above): topo's commands do it right after opening the host, a daemon once at start, a test
/// between discoveries.
void write_process_environment(const std::vector<EnvVar>& vars);

/// The first of `vars` the environment does not hold as given, described for an error message
/// ("HWLOC_FSROOT is \"/\", not \"/tmp/x\""); nullopt when all match.
std::optional<std::string> environment_mismatch(const std::vector<EnvVar>& vars);

/// The message a probe fails with when the environment was not written for its root.
std::string environment_not_written(const std::string& mismatch);

}  // namespace nodetopo::probes
