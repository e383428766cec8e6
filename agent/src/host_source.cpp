#include <cstdlib>

#include <CLI/CLI.hpp>

#include <nodetopo/agent/host_source.hpp>

namespace nodetopo::agent {

void HostSource::add_options(CLI::App& cmd) {
  cmd.add_option("--root", root_,
                 "Host root to read: a directory holding sys/ and proc/ (a capture or a mock "
                 "host). Default: $HOST_ROOT, else /")
      ->type_name("DIR");
}

Result<probes::SysRoot> HostSource::open() const {
  using Liveness = probes::SysRoot::Liveness;
  if (!root_.empty()) return probes::SysRoot::open(root_, Liveness::kAuto);
  // In the DaemonSet the host's / is mounted at $HOST_ROOT: a view of the machine we run on.
  if (const char* env = std::getenv("HOST_ROOT"); env != nullptr && *env != '\0') {  // NOLINT
    return probes::SysRoot::open(env, Liveness::kLive);
  }
  return probes::SysRoot::open("/", Liveness::kLive);
}

probes::ProbeOptions HostSource::probe_options() const {
  return {};
}

Result<probes::Discovery> HostSource::discover() const {
  auto root = open();
  if (!root) return root.error();
  return probes::discover(root.value(), probe_options());
}

}  // namespace nodetopo::agent
