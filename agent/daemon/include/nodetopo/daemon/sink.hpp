// Sinks: where a published snapshot goes (the NFD feature file, a JSON file, the D-Bus signal;
// the Kubernetes API publisher).
//
// Contract, so that one failing or slow sink never holds up the others:
// - publish() is called on the loop thread, only for a changed topology (a new generation), and
//   again for a sink whose last publish failed, at the next resync (retry without a change).
// - publish() returns promptly. A sink that talks to a network starts its work here and finishes
//   it from the loop (attach() hands it the sd_event), reporting through its state.
// - It never throws for its own faults: it records them in its SinkState. (The Manager catches
//   anyway and records the exception as the sink's error.)
// - Writing the same content twice is the sink's business to avoid: a restart publishes the
//   current snapshot once, and an unchanged file must keep its inode and mtime.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

struct sd_event;

namespace nodetopo::daemon {

struct Snapshot;

struct SinkState {
  bool ok = true;
  std::string error;             ///< why the last publish failed (names the file/object)
  std::uint64_t writes = 0;      ///< successful writes (a skipped identical write is not one)
  std::uint64_t errors = 0;      ///< failed publishes
  std::uint64_t generation = 0;  ///< generation of the last successful publish
};

struct Publication {
  const Snapshot& snapshot;
  std::uint64_t generation;
};

class Sink {
 public:
  virtual ~Sink() = default;
  /// Short stable name, used in metrics labels and health ("nfd", "json", "dbus").
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// Called once before the first publish; sinks with loop-driven I/O add their sources here.
  virtual void attach(sd_event* /*loop*/) {}
  virtual void publish(const Publication& publication) = 0;
  [[nodiscard]] virtual const SinkState& state() const = 0;
  /// Prometheus text of the sink's own metric families (whole families, HELP and TYPE lines
  /// included), appended to /metrics; empty for most sinks.
  [[nodiscard]] virtual std::string metrics() const { return {}; }
};

}  // namespace nodetopo::daemon
