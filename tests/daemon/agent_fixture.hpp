// AgentWithFakes: a real `topo agent` process on a mock host, with every outside source faked by
// the test: a private dbus-daemon (never the system bus), a NOTIFY_SOCKET bound by the test, the
// uevent socket source fed by the test, sink files and the HTTP port in a temporary directory,
// and short timers from the config. The host root is a symbolic link the test swaps between mock
// hosts built by `topo mock build`, which is what a hot-plug looks like to a fresh SysRoot.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sdbus-c++/sdbus-c++.h>
#include <sys/types.h>

#include "spawn/spawn.hpp"
#include "test_support.hpp"

namespace nodetopo::test {

/// A child process with stdout+stderr in a log file; SIGKILLed if still running at destruction.
using Child = spawn::Process;

/// A private session bus: dbus-daemon --session started and stopped by the test.
class PrivateBus {
 public:
  explicit PrivateBus(const std::filesystem::path& dir);
  ~PrivateBus();
  PrivateBus(const PrivateBus&) = delete;
  PrivateBus& operator=(const PrivateBus&) = delete;
  [[nodiscard]] const std::string& address() const { return address_; }

 private:
  std::unique_ptr<Child> daemon_;
  std::string address_;
};

/// An AF_UNIX datagram socket standing in for systemd's notify socket. A thread reads it all the
/// time, as systemd does: sd_notify() blocks once a datagram socket's queue is full, and an
/// unread socket would stall the agent's loop after a dozen messages.
class NotifySocket {
 public:
  explicit NotifySocket(std::filesystem::path path);
  ~NotifySocket();
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  /// Waits for a message after the last one a previous wait_for() returned that contains
  /// `needle` (returned), or `timeout` passes (nullopt).
  std::optional<std::string> wait_for(const std::string& needle, std::chrono::milliseconds timeout);
  /// Every message received so far, in order.
  [[nodiscard]] std::vector<std::string> received();

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  int stop_ = -1;  // eventfd that ends the reader
  std::mutex mutex_;
  std::vector<std::string> received_;
  std::size_t cursor_ = 0;
  std::thread reader_;
};

/// A D-Bus client of dev.nodetopo.Topology1 on the private bus, with its own connection and
/// event-loop thread (so that it sees signals while the test waits).
class AgentClient {
 public:
  explicit AgentClient(const std::string& address);
  ~AgentClient();
  AgentClient(const AgentClient&) = delete;
  AgentClient& operator=(const AgentClient&) = delete;

  std::string call(const std::string& method, const std::vector<std::string>& args = {});
  std::uint64_t refresh();
  std::uint64_t generation();
  std::string shape();
  std::uint64_t last_refresh();
  std::string health();
  /// Changed signals received so far: (generation, shape).
  std::vector<std::pair<std::uint64_t, std::string>> changed();
  /// Waits until at least `count` Changed signals arrived.
  bool wait_changed(std::size_t count, std::chrono::milliseconds timeout);

 private:
  std::unique_ptr<sdbus::IConnection> connection_;
  std::unique_ptr<sdbus::IProxy> proxy_;
  std::mutex mutex_;
  std::vector<std::pair<std::uint64_t, std::string>> changed_;
};

struct AgentSettings {
  std::string profile = "synthetic:gpus=2,nics=2";
  std::string resync = "interval: 1h\n  jitter: 0s";
  std::string debounce = "quiet: 50ms\n  max: 300ms";
  std::string log_level = "debug";
  std::string extra_yaml;  ///< appended to the config
  std::vector<std::string> env;
  bool json_sink = true;
  bool wait_ready = true;
};

class AgentWithFakes {
 public:
  explicit AgentWithFakes(AgentSettings settings = {});
  ~AgentWithFakes();
  AgentWithFakes(const AgentWithFakes&) = delete;
  AgentWithFakes& operator=(const AgentWithFakes&) = delete;

  /// Builds `profile` as host `name` (under hosts/), once.
  std::filesystem::path build_host(const std::string& name, const std::string& profile);
  /// Points the agent's root at host `name` (an atomic rename of the symbolic link).
  void use_host(const std::string& name);
  /// Sends one uevent in the kernel's format to the agent's uevent socket.
  void send_uevent(const std::string& action, const std::string& devpath,
                   const std::string& subsystem);
  /// GET http://127.0.0.1:PORT/path: status and body.
  std::pair<int, std::string> http_get(const std::string& path);
  /// `topo ARGS...` with the private bus in its environment.
  CommandResult topo(std::vector<std::string> args);
  /// Rewrites the config file (followed by SIGHUP, or not).
  void write_config(const std::string& extra_yaml);

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_.path(); }
  [[nodiscard]] std::filesystem::path root() const { return dir() / "root"; }
  [[nodiscard]] std::filesystem::path nfd_file() const { return dir() / "features.d/nodetopo"; }
  [[nodiscard]] std::filesystem::path json_file() const { return dir() / "out/topology.json"; }
  [[nodiscard]] std::filesystem::path config_file() const { return dir() / "agent.yaml"; }
  [[nodiscard]] std::string log() const;
  [[nodiscard]] const std::string& bus_address() const { return bus_->address(); }
  [[nodiscard]] unsigned http_port() const { return port_; }
  Child& agent() { return *agent_; }
  NotifySocket& notify() { return *notify_; }
  AgentClient& client() { return *client_; }
  /// A second, independent client.
  std::unique_ptr<AgentClient> new_client() { return std::make_unique<AgentClient>(bus_address()); }
  /// A metric's value from /metrics (the first sample whose name+labels start with `series`).
  std::optional<double> metric(const std::string& series);

 private:
  std::string config_text(const std::string& extra) const;

  AgentSettings settings_;
  TempDir dir_;
  unsigned port_ = 0;
  std::unique_ptr<PrivateBus> bus_;
  std::unique_ptr<NotifySocket> notify_;
  std::unique_ptr<Child> agent_;
  std::unique_ptr<AgentClient> client_;
};

/// Polls `condition` every 10 ms until true or `timeout`.
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

/// A TCP port on 127.0.0.1 that was free a moment ago.
unsigned free_port();

}  // namespace nodetopo::test
