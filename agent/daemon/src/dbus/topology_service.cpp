#include "topology_service.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <dev.nodetopo.Topology1.adaptor.h>
#include <sdbus-c++/sdbus-c++.h>
#include <systemd/sd-event.h>

#include <nodetopo/base/log.hpp>

#include "../snapshot_source.hpp"

namespace nodetopo::daemon {

namespace {

constexpr const char* kBusName = "dev.nodetopo.Topology1";
constexpr const char* kObjectPath = "/dev/nodetopo/Topology1";

class Topology1 final : public sdbus::AdaptorInterfaces<dev::nodetopo::Topology1_adaptor> {
 public:
  Topology1(sdbus::IConnection& connection, TopologyState& state)
      : AdaptorInterfaces(connection, kObjectPath), state_(state) {
    registerAdaptor();
  }
  ~Topology1() { unregisterAdaptor(); }
  Topology1(const Topology1&) = delete;
  Topology1& operator=(const Topology1&) = delete;

  using dev::nodetopo::Topology1_adaptor::emitChanged;
  void emit_properties_changed(const std::vector<std::string>& names) {
    getObject().emitPropertiesChangedSignal(INTERFACE_NAME, names);
  }

 private:
  std::shared_ptr<const Snapshot> ready() const {
    auto s = state_.published();
    if (!s) {
      throw sdbus::Error(kErrorNotReady,
                         "no topology published yet: the first discovery has not finished (" +
                             state_.health() + ")");
    }
    return s;
  }

  // One document of the published snapshot, or the named error saying why not.
  std::string document(const std::string& method, const std::string& kind,
                       const std::string& format) const {
    bool kind_known = false;
    std::string formats;
    for (const std::string& key : document_keys()) {
      const auto slash = key.find('/');
      if (key.compare(0, slash, kind) != 0 || slash != kind.size()) continue;
      kind_known = true;
      formats += (formats.empty() ? "" : ", ") + key.substr(slash + 1);
    }
    if (!kind_known) {
      throw sdbus::Error(kErrorInvalidKind, method + ": unknown kind \"" + kind +
                                                "\" (resourceslices, labels, nrt, shape)");
    }
    const std::string key = kind + "/" + format;
    if (std::find(document_keys().begin(), document_keys().end(), key) == document_keys().end()) {
      throw sdbus::Error(kErrorInvalidFormat, method + ": unknown format \"" + format + "\" for " +
                                                  kind + " (" + formats + ")");
    }
    const auto s = ready();
    static const core::ServedDocuments kNone;
    const core::ServedDocuments& served = s->served ? *s->served : kNone;
    if (auto doc = served.documents.find(key); doc != served.documents.end()) return doc->second;
    const auto why = served.errors.find(key);
    throw sdbus::Error(
        kErrorExportFailed,
        method + " " + key + ": " +
            (why != served.errors.end() ? why->second : std::string("not rendered")));
  }

  std::string GetTopology(const std::string& format) override {
    return document("GetTopology", "dump", format);
  }
  std::string GetMatrix(const std::string& format) override {
    return document("GetMatrix", "matrix", format);
  }
  std::string Export(const std::string& kind, const std::string& format) override {
    if (kind == "dump" || kind == "matrix") {
      throw sdbus::Error(kErrorInvalidKind, "Export: unknown kind \"" + kind +
                                                "\" (resourceslices, labels, nrt, shape; use "
                                                "GetTopology/GetMatrix for dump and matrix)");
    }
    return document("Export", kind, format);
  }
  void Refresh(sdbus::Result<uint64_t>&& result) override {
    // The reply waits for the discovery; the loop keeps answering everything else meanwhile.
    auto shared = std::make_shared<sdbus::Result<uint64_t>>(std::move(result));
    state_.refresh([shared](Result<std::uint64_t> outcome) {
      if (outcome) {
        shared->returnResults(outcome.value());
      } else {
        shared->returnError(
            sdbus::Error(kErrorDiscoveryFailed, "Refresh: " + outcome.error().describe()));
      }
    });
  }
  uint64_t Generation() override { return state_.generation(); }
  std::string Shape() override {
    auto s = state_.published();
    return s ? s->shape : std::string();
  }
  uint64_t LastRefresh() override { return state_.last_refresh_usec(); }
  std::string Health() override { return state_.health(); }

  TopologyState& state_;
};

class SignalSink;

class Service final : public DbusService {
 public:
  Service(std::unique_ptr<sdbus::IConnection> connection, TopologyState& state)
      : connection_(std::move(connection)), object_(*connection_, state) {}

  ~Service() override {
    if (io_ != nullptr) sd_event_source_disable_unref(io_);
    if (timer_ != nullptr) sd_event_source_disable_unref(timer_);
  }
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  Result<void> attach(sd_event* loop) {
    const auto poll = connection_->getEventLoopPollData();
    int r = sd_event_add_io(loop, &io_, poll.fd, static_cast<uint32_t>(poll.events),
                            &Service::on_io, this);
    if (r >= 0) r = sd_event_source_set_prepare(io_, &Service::on_prepare);
    if (r >= 0) {
      // 1 ms accuracy: the default (0 = 250 ms) would delay queued messages.
      r = sd_event_add_time(loop, &timer_, CLOCK_MONOTONIC, UINT64_MAX, 1000, &Service::on_timer,
                            this);
    }
    if (r >= 0) r = sd_event_source_set_enabled(timer_, SD_EVENT_OFF);
    if (r < 0) {
      return make_error(
          ErrorCode::kIo,
          std::string("cannot add the D-Bus connection to the loop: ") + std::strerror(-r));
    }
    sd_event_source_set_description(io_, "dbus-io");
    sd_event_source_set_description(timer_, "dbus-timer");
    return {};
  }

  void health_changed() override { emit_properties({"Health"}); }

  sdbus::IConnection& connection() { return *connection_; }

  std::unique_ptr<Sink> make_signal_sink() override;

  void emit_changed(std::uint64_t generation, const std::string& shape) {
    object_.emitChanged(generation, shape);
    emit_properties({"Generation", "Shape", "Health"});
  }

 private:
  void emit_properties(const std::vector<std::string>& names) {
    try {
      object_.emit_properties_changed(names);
    } catch (const sdbus::Error& e) {
      component_logger("agent.dbus")->warn("PropertiesChanged not sent: {}", e.what());
    }
  }

  void process() {
    try {
      while (connection_->processPendingRequest()) {
      }
    } catch (const sdbus::Error& e) {
      component_logger("agent.dbus")->error("D-Bus processing failed: {}", e.what());
    }
  }

  static int on_io(sd_event_source* /*s*/, int /*fd*/, uint32_t /*revents*/, void* user) {
    static_cast<Service*>(user)->process();
    return 0;
  }
  static int on_timer(sd_event_source* /*s*/, uint64_t /*usec*/, void* user) {
    static_cast<Service*>(user)->process();
    return 0;
  }
  // Before every poll: what the bus wants to wait for now (POLLOUT while replies are queued)
  // and until when (a method call timeout, or 0 when messages are already read and queued).
  static int on_prepare(sd_event_source* /*s*/, void* user) {
    auto* self = static_cast<Service*>(user);
    try {
      const auto poll = self->connection_->getEventLoopPollData();
      sd_event_source_set_io_events(self->io_, static_cast<uint32_t>(poll.events));
      if (poll.timeout_usec == UINT64_MAX) {
        sd_event_source_set_enabled(self->timer_, SD_EVENT_OFF);
      } else {
        sd_event_source_set_time(self->timer_, poll.timeout_usec);
        sd_event_source_set_enabled(self->timer_, SD_EVENT_ONESHOT);
      }
    } catch (const sdbus::Error& e) {
      component_logger("agent.dbus")->error("D-Bus poll data unavailable: {}", e.what());
    }
    return 0;
  }

  std::unique_ptr<sdbus::IConnection> connection_;
  Topology1 object_;
  sd_event_source* io_ = nullptr;
  sd_event_source* timer_ = nullptr;
};

class SignalSink final : public Sink {
 public:
  explicit SignalSink(Service& service) : service_(service) {}
  [[nodiscard]] std::string_view name() const override { return "dbus"; }
  [[nodiscard]] const SinkState& state() const override { return state_; }
  void publish(const Publication& p) override {
    try {
      service_.emit_changed(p.generation, p.snapshot.shape);
      ++state_.writes;
      state_.ok = true;
      state_.error.clear();
      state_.generation = p.generation;
    } catch (const sdbus::Error& e) {
      ++state_.errors;
      state_.ok = false;
      state_.error = std::string("Changed signal not sent: ") + e.what();
    }
  }

 private:
  Service& service_;
  SinkState state_;
};

std::unique_ptr<Sink> Service::make_signal_sink() {
  return std::make_unique<SignalSink>(*this);
}

}  // namespace

Result<std::unique_ptr<DbusService>> DbusService::create(BusKind bus, sd_event* loop,
                                                         TopologyState& state) {
  std::unique_ptr<sdbus::IConnection> connection;
  try {
    connection = bus == BusKind::kSystem ? sdbus::createSystemBusConnection()
                                         : sdbus::createSessionBusConnection();
  } catch (const sdbus::Error& e) {
    return make_error(ErrorCode::kUnavailable, std::string("cannot connect to the ") +
                                                   std::string(to_string(bus)) +
                                                   " bus: " + e.getMessage());
  }
  auto service = std::make_unique<Service>(std::move(connection), state);
  // The name is taken after the object exists, so a client that sees the name finds the object.
  try {
    service->connection().requestName(kBusName);
  } catch (const sdbus::Error& e) {
    return make_error(ErrorCode::kUnavailable, std::string("cannot own ") + kBusName + " on the " +
                                                   std::string(to_string(bus)) +
                                                   " bus (another agent running, or the bus "
                                                   "policy does not allow it): " +
                                                   e.getMessage());
  }
  if (auto attached = service->attach(loop); !attached) return attached.error();
  return std::unique_ptr<DbusService>(std::move(service));
}

}  // namespace nodetopo::daemon
