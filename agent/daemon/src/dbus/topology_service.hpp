// The D-Bus object /dev/nodetopo/Topology1 (interface dev.nodetopo.Topology1, IDL in
// agent/daemon/dbus/), and the connection's place on the Manager's sd-event loop.
//
// sdbus-c++ 1.2 cannot attach to an sd_event, and its enterEventLoopAsync() would add a thread
// whose callbacks race the Manager's state. So the bus fd is an io source whose prepare callback
// refreshes its events and a CLOCK_MONOTONIC timer from getEventLoopPollData() before every
// poll, and both call processPendingRequest() until it has nothing left: every handler runs on
// the loop thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nodetopo/base/error.hpp>
#include <nodetopo/daemon/config.hpp>
#include <nodetopo/daemon/sink.hpp>

struct sd_event;

namespace nodetopo::daemon {

struct Snapshot;

/// What the service asks of the Manager; every call happens on the loop thread.
class TopologyState {
 public:
  virtual ~TopologyState() = default;
  /// The last published snapshot; null before the first.
  [[nodiscard]] virtual std::shared_ptr<const Snapshot> published() const = 0;
  [[nodiscard]] virtual std::uint64_t generation() const = 0;
  [[nodiscard]] virtual std::uint64_t last_refresh_usec() const = 0;
  [[nodiscard]] virtual std::string health() const = 0;
  /// Starts (or joins) a discovery that begins after this call; `done` gets the generation after
  /// it, or the error that stopped it.
  virtual void refresh(std::function<void(Result<std::uint64_t>)> done) = 0;
};

/// Error names of the API (docs/agent.md).
inline constexpr const char* kErrorNotReady = "dev.nodetopo.Error.NotReady";
inline constexpr const char* kErrorInvalidFormat = "dev.nodetopo.Error.InvalidFormat";
inline constexpr const char* kErrorInvalidKind = "dev.nodetopo.Error.InvalidKind";
inline constexpr const char* kErrorExportFailed = "dev.nodetopo.Error.ExportFailed";
inline constexpr const char* kErrorDiscoveryFailed = "dev.nodetopo.Error.DiscoveryFailed";

class DbusService {
 public:
  virtual ~DbusService() = default;
  /// Connects to `bus`, exports the object, takes the name dev.nodetopo.Topology1 and joins
  /// `loop`. The error names the bus and why (no bus, name owned by another agent).
  static Result<std::unique_ptr<DbusService>> create(BusKind bus, sd_event* loop,
                                                     TopologyState& state);

  /// Sends PropertiesChanged for Health (call when health() changed).
  virtual void health_changed() = 0;
  /// The sink that sends Changed(generation, shape) and PropertiesChanged(Generation, Shape).
  virtual std::unique_ptr<Sink> make_signal_sink() = 0;
};

}  // namespace nodetopo::daemon
