// The agent's Manager: one sd-event loop, one thread, owning every source (the way systemd's
// small daemons are built): signals (TERM/INT exit, HUP reload), the watchdog, the resync and
// debounce timers, the uevent socket, the D-Bus connection, the HTTP server, and the eventfd of
// the discovery worker. It holds the published snapshot and its generation, compares every new
// discovery with it, and hands changed ones to the sinks. docs/ARCHITECTURE.md draws the loop.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <nodetopo/base/error.hpp>
#include <nodetopo/daemon/config.hpp>
#include <nodetopo/daemon/uevent_source.hpp>

namespace nodetopo::daemon {

struct ManagerOptions {
  AgentConfig config;
  /// The file SIGHUP re-reads, and whether it must exist (--config given explicitly).
  std::string config_path;
  bool config_must_exist = false;
  /// --root / --mock from the command line: they win over the file, on reload too.
  std::string flag_root;
  std::string flag_mock;
  /// Replaces the source chosen by config.uevent_source (in-process tests).
  std::unique_ptr<UeventSource> uevents;
  /// Slept by the worker before each discovery: $NODETOPO_AGENT_TEST_DISCOVERY_DELAY_MS, so
  /// that a test can signal the agent while a discovery runs.
  std::chrono::milliseconds discovery_delay{0};
};

class Manager {
 public:
  virtual ~Manager() = default;
  /// Blocks SIGTERM/SIGINT/SIGHUP (before the worker thread exists, so it inherits the mask),
  /// opens the host, connects the bus, starts the HTTP server and arms every source. The error
  /// names what could not be set up.
  static Result<std::unique_ptr<Manager>> create(ManagerOptions options);
  /// Runs the loop until SIGTERM/SIGINT; returns the process exit code.
  virtual int run() = 0;
};

}  // namespace nodetopo::daemon
