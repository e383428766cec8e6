// The DRA kubelet plugin: the kubelet's plugin registration service on a socket in its plugin
// registry directory, and the DRA service (v1 and v1beta1) on a socket in its plugins directory,
// both served by gRPC (Debian's grpc++, code generated from kubelet/proto at build time).
//
//   auto plugin = kubelet::Plugin::start(config, devices, claims);  // sockets up, registered
//   plugin->wait(stop_flag);                                         // until SIGTERM
//   plugin->stop();                                                  // removes our sockets
//
// Threads: gRPC owns the threads that answer calls; one more thread of the plugin re-creates
// a socket that disappeared (someone cleaned the directory, the kubelet restarted) and offers the
// registration again after the kubelet refused it, with a doubling delay.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <nodetopo/base/error.hpp>
#include <nodetopo/kubelet/config.hpp>
#include <nodetopo/kubelet/state.hpp>

namespace nodetopo::kubelet {

/// The service names the DRA socket serves, as PluginInfo.supported_versions lists them.
inline constexpr const char* kDraServiceV1 = "v1.DRAPlugin";
inline constexpr const char* kDraServiceV1beta1 = "v1beta1.DRAPlugin";

/// What the plugin reports about itself (health.cpp).
struct PluginHealth {
  bool registered = false;         ///< the kubelet's last NotifyRegistrationStatus said yes
  std::string registration_error;  ///< its last refusal
  int registration_attempts = 0;   ///< sockets offered to the kubelet
  int socket_restarts = 0;         ///< sockets re-created after they disappeared
  std::uint64_t prepares = 0;
  std::uint64_t unprepares = 0;
  [[nodiscard]] std::string describe() const;
};

class Plugin {
 public:
  /// Creates the directories, starts the DRA server first, then the registration server.
  static Result<std::unique_ptr<Plugin>> start(PluginConfig config,
                                               std::unique_ptr<DriverState> state);
  ~Plugin();  ///< stop()
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  /// Blocks until `stop_flag` is set (polled every 100 ms).
  void wait(const std::atomic<bool>& stop_flag);
  /// Stops both servers and removes the sockets this instance created. Idempotent.
  void stop();

  [[nodiscard]] PluginHealth health() const;
  [[nodiscard]] DriverState& state();

  class Impl;

 private:
  explicit Plugin(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nodetopo::kubelet
