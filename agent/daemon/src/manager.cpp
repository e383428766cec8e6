#include <csignal>
#include <cstring>
#include <ctime>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <malloc.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include <nodetopo/base/log.hpp>
#include <nodetopo/daemon/logging.hpp>
#include <nodetopo/daemon/manager.hpp>

#include "dbus/topology_service.hpp"
#include "degradation.hpp"
#include "discovery_worker.hpp"
#include "http/http_server.hpp"
#include "http/metrics.hpp"
#include "sinks/file_sinks.hpp"
#include "sinks/kubernetes_sink.hpp"
#include "snapshot_source.hpp"

#ifndef NODETOPO_VERSION
#define NODETOPO_VERSION "unknown"
#endif

namespace nodetopo::daemon {

namespace {

using std::chrono::milliseconds;

constexpr std::uint64_t kPreciseUsec = 1000;

std::uint64_t usec(milliseconds d) {
  return static_cast<std::uint64_t>(d.count()) * 1000U;
}

std::uint64_t realtime_usec() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000U +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1000U;
}

std::uint64_t monotonic_usec() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000U +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1000U;
}

// sd_notify with the message logged at debug; a missing NOTIFY_SOCKET is not an error.
void notify(const std::string& message) {
  const int r = sd_notify(0, message.c_str());
  if (r < 0) component_logger("agent")->debug("sd_notify failed: {}", std::strerror(-r));
}

class ManagerImpl final : public Manager, public TopologyState {
 public:
  explicit ManagerImpl(ManagerOptions options)
      : options_(std::move(options)), config_(options_.config), log_(component_logger("agent")) {}

  ~ManagerImpl() override {
    for (sd_event_source* s : {debounce_, resync_, worker_io_}) {
      if (s != nullptr) sd_event_source_disable_unref(s);
    }
    sinks_.clear();
    dbus_.reset();
    http_.reset();
    uevents_.reset();
    if (worker_) {
      worker_->stop(milliseconds(0));
      worker_.reset();
    }
    if (loop_ != nullptr) sd_event_unref(loop_);
  }
  ManagerImpl(const ManagerImpl&) = delete;
  ManagerImpl& operator=(const ManagerImpl&) = delete;

  Result<void> setup() {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    // sd-event takes signals through a signalfd, which sees only blocked signals. Blocked here,
    // before the worker exists, so that no thread of ours ever receives them asynchronously.
    pthread_sigmask(SIG_BLOCK, &mask, nullptr);

    int r = sd_event_new(&loop_);
    if (r < 0) return sys_error("cannot create the event loop", r);
    for (int sig : {SIGTERM, SIGINT}) {
      r = sd_event_add_signal(loop_, nullptr, sig, &ManagerImpl::on_exit_signal, this);
      if (r < 0) return sys_error("cannot watch SIGTERM/SIGINT", r);
    }
    r = sd_event_add_signal(loop_, nullptr, SIGHUP, &ManagerImpl::on_hup, this);
    if (r < 0) return sys_error("cannot watch SIGHUP", r);
    // Pings WATCHDOG=1 at half of WatchdogSec, from the loop: a stuck loop stops pinging.
    r = sd_event_set_watchdog(loop_, 1);
    if (r < 0) return sys_error("cannot set up the watchdog", r);

    auto source = open_snapshot_source(config_);
    if (!source) return source.error();
    source_ = std::move(source.value());
    worker_ = std::make_unique<DiscoveryWorker>(*source_, options_.discovery_delay);
    r = sd_event_add_io(loop_, &worker_io_, worker_->fd(), EPOLLIN, &ManagerImpl::on_worker, this);
    if (r < 0) return sys_error("cannot watch the discovery worker", r);

    // Accuracy 1 ms: sd-event's default (accuracy 0) lets a timer fire up to 250 ms late, which
    // the debounce cannot afford; the resync sets a wide one of its own (arm_resync).
    r = sd_event_add_time(loop_, &debounce_, CLOCK_MONOTONIC, UINT64_MAX, kPreciseUsec,
                          &ManagerImpl::on_debounce, this);
    if (r >= 0) r = sd_event_source_set_enabled(debounce_, SD_EVENT_OFF);
    if (r >= 0) {
      r = sd_event_add_time(loop_, &resync_, CLOCK_MONOTONIC, UINT64_MAX, 0,
                            &ManagerImpl::on_resync, this);
    }
    if (r < 0) return sys_error("cannot create the timers", r);

    if (config_.bus != BusKind::kNone) {
      auto service = DbusService::create(config_.bus, loop_, *this);
      if (!service) return service.error();
      dbus_ = std::move(service.value());
    }
    if (!config_.http_listen.empty()) {
      auto server = HttpServer::start(config_.http_listen, loop_,
                                      [this](std::string_view method, std::string_view path) {
                                        return answer_http(method, path);
                                      });
      if (!server) return server.error();
      http_ = std::move(server.value());
      log_->info("health and metrics on http://{} (port {})", config_.http_listen, http_->port());
    }
    if (auto attached = attach_uevents(); !attached) return attached;
    build_sinks();
    return {};
  }

  int run() override {
    log_->info("topo agent {} starting on {}", NODETOPO_VERSION, source_->describe());
    notify("STATUS=Running the first discovery of " + source_->describe());
    request_discovery(Trigger::kStart);
    const int r = sd_event_loop(loop_);
    // Discovery results are never published from here on; a discovery still running is given
    // a moment, then abandoned (the process leaves: nothing it would write is written).
    if (!worker_->stop(milliseconds(1000))) {
      log_->warn("a discovery was still running at exit; abandoned");
      spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& l) { l->flush(); });
      std::_Exit(0);
    }
    return r < 0 ? 1 : 0;
  }

  // --- TopologyState (D-Bus) ---------------------------------------------------------------
  [[nodiscard]] std::shared_ptr<const Snapshot> published() const override { return published_; }
  [[nodiscard]] std::uint64_t generation() const override { return generation_; }
  [[nodiscard]] std::uint64_t last_refresh_usec() const override { return last_refresh_usec_; }
  [[nodiscard]] std::string health() const override {
    std::vector<std::string> reasons;
    if (!discovery_problem_.empty()) reasons.push_back(discovery_problem_);
    if (!config_problem_.empty()) reasons.push_back(config_problem_);
    if (!kube_problem_.empty()) reasons.push_back(kube_problem_);
    for (const auto& sink : sinks_) {
      if (!sink->state().ok) {
        reasons.push_back("sink " + std::string(sink->name()) + ": " + sink->state().error);
      }
    }
    std::string joined;
    for (const auto& r : reasons)
      joined += (joined.empty() ? "" : "; ") + r;
    if (!published_) return joined.empty() ? "starting" : "starting: " + joined;
    return joined.empty() ? "ok" : "degraded: " + joined;
  }
  void refresh(std::function<void(Result<std::uint64_t>)> done) override {
    if (running_) {
      // The running discovery may have started before what the caller wants to see: wait for
      // the next one.
      waiting_next_.push_back(std::move(done));
      if (!pending_) pending_ = Trigger::kDbus;
      changes_.merge(probes::Changes{});  // whatever the pending trigger: read everything
    } else {
      waiting_current_.push_back(std::move(done));
      start_discovery(Trigger::kDbus);
    }
  }

 private:
  static Error sys_error(const std::string& what, int r) {
    return make_error(ErrorCode::kIo, what + ": " + std::strerror(-r));
  }

  Result<void> attach_uevents() {
    if (options_.uevents) {
      uevents_ = std::move(options_.uevents);
    } else if (config_.uevent_source == UeventSourceKind::kKernel) {
      uevents_ = make_kernel_uevent_source();
    } else if (config_.uevent_source == UeventSourceKind::kSocket) {
      uevents_ = make_socket_uevent_source(config_.uevent_socket);
    }
    if (!uevents_) return {};
    UeventSource::Callbacks callbacks;
    callbacks.on_event = [this](const Uevent& e) { on_uevent(e); };
    callbacks.on_overflow = [this] {
      ++metrics_.uevent_overflows;
      log_->warn("uevents were lost (socket buffer overflow): rediscovering");
      arm_debounce();
      overflow_ = true;
    };
    return uevents_->attach(loop_, std::move(callbacks));
  }

  void build_sinks() {
    // Kept in a fixed order: files first, the signal last, so that a client that reacts to
    // Changed by reading the files finds them written.
    std::vector<std::unique_ptr<Sink>> sinks;
    kube_problem_.clear();
    if (config_.nfd_enabled) sinks.push_back(make_nfd_sink(config_.nfd_path));
    if (config_.json_enabled) sinks.push_back(make_json_sink(config_.json_path));
    if (config_.kubernetes.enabled) {
      // Started here, after open_snapshot_source wrote the environment: it owns a thread.
      auto api = make_kubernetes_sink(config_.kubernetes, config_.hami);
      if (api) {
        sinks.push_back(std::move(api.value()));
      } else {
        kube_problem_ = "kubernetes: " + api.error().describe();
        log_->error("the Kubernetes publisher cannot start: {}", api.error().describe());
      }
    }
    if (dbus_ && config_.dbus_signal_enabled) sinks.push_back(dbus_->make_signal_sink());
    for (auto& s : sinks)
      s->attach(loop_);
    sinks_ = std::move(sinks);
  }

  // --- discovery -----------------------------------------------------------------------------
  void request_discovery(Trigger trigger) {
    if (running_) {
      if (!pending_) pending_ = trigger;
      if (trigger != Trigger::kUevent) changes_.merge(probes::Changes{});  // read everything
      return;
    }
    start_discovery(trigger);
  }

  void start_discovery(Trigger trigger) {
    running_ = true;
    current_ = trigger;
    log_->debug("discovery started ({})", to_string(trigger));
    // Only a discovery for uevents reuses what they did not touch; every other trigger (start,
    // resync, overflow, reload, D-Bus) reads everything. Events since the last start go to this
    // one; those arriving while it runs, to the next.
    if (trigger != Trigger::kUevent) changes_ = probes::Changes{};
    worker_->request(std::exchange(changes_, probes::Changes::none()));
  }

  static int on_worker(sd_event_source* /*s*/, int /*fd*/, uint32_t /*revents*/, void* user) {
    auto* self = static_cast<ManagerImpl*>(user);
    if (auto result = self->worker_->take()) self->on_result(std::move(*result));
    return 0;
  }

  void on_result(Result<Snapshot> result) {
    running_ = false;
    last_refresh_usec_ = realtime_usec();
    Outcome outcome = Outcome::kFailed;
    if (!result) {
      discovery_problem_ =
          "discovery failed: " + result.error().describe() +
          (published_ ? " (generation " + std::to_string(generation_) + " kept)" : "");
      log_->error("{}", discovery_problem_);
    } else {
      auto snapshot = std::make_shared<const Snapshot>(std::move(result.value()));
      metrics_.observe_duration(snapshot->duration);
      latest_probes_ = snapshot->reports;
      const std::string failed = failed_probes(*snapshot);
      const std::string degraded = published_ ? degradation(*published_, *snapshot) : "";
      if (!degraded.empty()) {
        outcome = Outcome::kDegraded;
        discovery_problem_ = degraded + " (generation " + std::to_string(generation_) + " kept)";
        log_->warn("degraded discovery, last good topology kept: {}", discovery_problem_);
      } else if (published_ && snapshot->digest == published_->digest) {
        outcome = Outcome::kUnchanged;
        discovery_problem_ = failed;
        log_->debug("discovery ({}): unchanged, digest {}", to_string(current_),
                    snapshot->digest.substr(0, 12));
      } else {
        outcome = Outcome::kPublished;
        discovery_problem_ = failed;
        published_ = std::move(snapshot);
        ++generation_;
        log_->info("topology changed ({}): generation {}, shape {}, digest {}", to_string(current_),
                   generation_, published_->shape, published_->digest.substr(0, 12));
        publish_all();
      }
      if (outcome != Outcome::kPublished && published_) retry_failed_sinks();
    }
    if (overflow_ && current_ == Trigger::kUevent) overflow_ = false;
    ++metrics_.discoveries[{current_, outcome}];

    const std::uint64_t answered = generation_;
    auto waiters = std::move(waiting_current_);
    waiting_current_ = std::move(waiting_next_);
    waiting_next_.clear();
    for (auto& done : waiters) {
      if (outcome == Outcome::kFailed && !published_) {
        done(Result<std::uint64_t>(make_error(ErrorCode::kIo, discovery_problem_)));
      } else {
        done(Result<std::uint64_t>(answered));
      }
    }

    kept_last_good_ = published_ && (outcome == Outcome::kDegraded || outcome == Outcome::kFailed);
    if (!ready_notified_ && published_) {
      ready_notified_ = true;
      last_status_ = status_line();
      notify("READY=1\n" + last_status_);
      arm_resync();
    } else if (const std::string status = status_line(); status != last_status_) {
      // Only a changed line: an idle node's resyncs send nothing, not even to systemd.
      last_status_ = status;
      notify(status);
    }
    if (!published_) {
      // Not a single good discovery yet: try again soon rather than at the next resync.
      sd_event_source_set_time_relative(
          resync_, usec(std::min(config_.resync_interval, milliseconds(5000))));
      sd_event_source_set_enabled(resync_, SD_EVENT_ONESHOT);
    }
    health_maybe_changed();
    if (pending_) {
      const Trigger next = *pending_;
      pending_.reset();
      start_discovery(next);
    } else {
      // A discovery allocates a few hundred KiB (readers, the model, every rendered document)
      // and frees all but the published snapshot; malloc keeps the freed pages of its arenas
      // until something asks. Between discoveries nothing allocates much, so give them back:
      // the idle agent's resident memory is then the snapshot it serves, not its last peak.
      malloc_trim(0);
    }
  }

  void publish_all() {
    const Publication p{*published_, generation_};
    for (auto& sink : sinks_) {
      try {
        sink->publish(p);
      } catch (const std::exception& e) {
        log_->error("sink {} threw: {}", sink->name(), e.what());
      }
    }
  }

  void retry_failed_sinks() {
    const Publication p{*published_, generation_};
    for (auto& sink : sinks_) {
      if (sink->state().ok && sink->state().generation == generation_) continue;
      try {
        sink->publish(p);
      } catch (const std::exception& e) {
        log_->error("sink {} threw: {}", sink->name(), e.what());
      }
    }
  }

  [[nodiscard]] bool sinks_ok() const {
    if (!kube_problem_.empty()) return false;
    for (const auto& s : sinks_) {
      if (!s->state().ok) return false;
    }
    return true;
  }

  [[nodiscard]] std::string status_line() const {
    if (!published_) return "STATUS=No topology yet: " + health();
    auto count = [&](const char* kind) {
      const auto it = published_->devices.find(kind);
      return it == published_->devices.end() ? std::size_t{0} : it->second;
    };
    return "STATUS=Generation " + std::to_string(generation_) + ", shape " + published_->shape +
           ": " + std::to_string(count("accelerator")) + " accelerators, " +
           std::to_string(count("net_device")) + " NICs, " + std::to_string(count("numa_node")) +
           " NUMA nodes; " + health();
  }

  void health_maybe_changed() {
    const std::string now = health();
    if (now == last_health_) return;
    if (!last_health_.empty()) log_->info("health: {}", now);
    last_health_ = now;
    if (dbus_) dbus_->health_changed();
  }

  // --- uevents and timers --------------------------------------------------------------------
  void on_uevent(const Uevent& e) {
    ++metrics_.uevents_received;
    if (!is_topology_event(e)) return;
    ++metrics_.uevents_relevant;
    log_->debug("uevent {} {} ({})", e.action, e.devpath, e.subsystem);
    changes_.merge(changes_of(e));
    arm_debounce();
  }

  // Trailing debounce: the discovery starts `quiet` after the last event of a burst, but no
  // later than `max` after its first, so a device that keeps chattering cannot starve it.
  void arm_debounce() {
    const std::uint64_t now = monotonic_usec();
    if (burst_start_ == 0) burst_start_ = now;
    const std::uint64_t at =
        std::min(now + usec(config_.debounce), burst_start_ + usec(config_.debounce_max));
    sd_event_source_set_time(debounce_, at);
    sd_event_source_set_enabled(debounce_, SD_EVENT_ONESHOT);
  }

  static int on_debounce(sd_event_source* /*s*/, uint64_t /*usec*/, void* user) {
    auto* self = static_cast<ManagerImpl*>(user);
    self->burst_start_ = 0;
    self->request_discovery(self->overflow_ ? Trigger::kOverflow : Trigger::kUevent);
    self->overflow_ = false;
    return 0;
  }

  void arm_resync() {
    const auto jitter = config_.resync_jitter.count();
    std::int64_t offset = 0;
    if (jitter > 0) offset = std::uniform_int_distribution<std::int64_t>(-jitter, jitter)(rng_);
    const auto delay = milliseconds(config_.resync_interval.count() + offset);
    sd_event_source_set_time_relative(resync_, usec(delay));
    // A resync need not be punctual: a wide accuracy lets the kernel and sd-event coalesce it
    // with other wake-ups, which is what an idle node wants.
    sd_event_source_set_time_accuracy(resync_, usec(std::min(milliseconds(1000), delay / 10)));
    sd_event_source_set_enabled(resync_, SD_EVENT_ONESHOT);
  }

  static int on_resync(sd_event_source* /*s*/, uint64_t /*usec*/, void* user) {
    auto* self = static_cast<ManagerImpl*>(user);
    self->request_discovery(self->published_ ? Trigger::kResync : Trigger::kRetry);
    if (self->published_) self->arm_resync();
    return 0;
  }

  // --- signals -------------------------------------------------------------------------------
  static int on_exit_signal(sd_event_source* /*s*/, const struct signalfd_siginfo* info,
                            void* user) {
    auto* self = static_cast<ManagerImpl*>(user);
    self->log_->info("signal {}: stopping", info->ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
    notify("STOPPING=1\nSTATUS=Stopping");
    sd_event_exit(self->loop_, 0);
    return 0;
  }

  static int on_hup(sd_event_source* /*s*/, const struct signalfd_siginfo* /*info*/, void* user) {
    static_cast<ManagerImpl*>(user)->reload();
    return 0;
  }

  void reload() {
    ++metrics_.config_reloads;
    notify("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(monotonic_usec()) +
           "\nSTATUS=Reloading the configuration");
    if (options_.config_path.empty()) {
      log_->info("SIGHUP: no config file to reload; rediscovering");
    } else {
      auto loaded = load_agent_config(options_.config_path, options_.config_must_exist);
      if (!loaded) {
        ++metrics_.config_reload_failures;
        config_problem_ =
            "config reload refused, running config kept: " + loaded.error().describe();
        log_->error("{}", config_problem_);
      } else {
        apply(std::move(loaded.value()));
        config_problem_.clear();
      }
    }
    last_status_ = status_line();
    notify("READY=1\n" + last_status_);
    health_maybe_changed();
    request_discovery(Trigger::kReload);
  }

  void apply(AgentConfig loaded) {
    if (!options_.flag_root.empty()) loaded.host_root = options_.flag_root;
    loaded.mock_profile = options_.flag_mock;
    std::string restart = restart_only_changes(config_, loaded);
    if (loaded.node_name != config_.node_name) {
      restart += (restart.empty() ? "" : ", ") + std::string("node_name");
    }
    // The publisher holds credentials and a connection; it is built once, at start.
    const auto& ka = loaded.kubernetes;
    const auto& kb = config_.kubernetes;
    if (ka.enabled != kb.enabled || ka.kubeconfig != kb.kubeconfig || ka.context != kb.context ||
        ka.driver != kb.driver || ka.labels != kb.labels || ka.slices != kb.slices ||
        ka.nrt != kb.nrt || ka.nodefeature_namespace != kb.nodefeature_namespace) {
      restart += (restart.empty() ? "" : ", ") + std::string("kubernetes.*");
    }
    if (!(loaded.hami == config_.hami)) {
      restart += (restart.empty() ? "" : ", ") + std::string("sinks.hami.*");
    }
    if (loaded.instance != config_.instance) {
      restart += (restart.empty() ? "" : ", ") + std::string("instance.*");
    }
    if (!restart.empty()) {
      log_->warn("config reload: {} take effect only after a restart; running values kept",
                 restart);
    }
    // Keep what needs a restart, take the rest.
    loaded.host_root = config_.host_root;
    loaded.mock_profile = config_.mock_profile;
    loaded.node_name = config_.node_name;
    loaded.bus = config_.bus;
    loaded.http_listen = config_.http_listen;
    loaded.uevent_source = config_.uevent_source;
    loaded.uevent_socket = config_.uevent_socket;
    loaded.kubernetes = config_.kubernetes;
    loaded.hami = config_.hami;
    loaded.instance = config_.instance;
    const bool sinks_changed =
        loaded.nfd_enabled != config_.nfd_enabled || loaded.nfd_path != config_.nfd_path ||
        loaded.json_enabled != config_.json_enabled || loaded.json_path != config_.json_path ||
        loaded.dbus_signal_enabled != config_.dbus_signal_enabled;
    const bool timing_changed = loaded.resync_interval != config_.resync_interval ||
                                loaded.resync_jitter != config_.resync_jitter;
    config_ = std::move(loaded);
    configure_agent_logging(config_);
    if (sinks_changed) {
      build_sinks();
      // The new sinks have not seen the published snapshot yet; files with equal content are
      // left alone, and the signal is not sent (the topology did not change).
      if (published_) {
        const Publication p{*published_, generation_};
        for (auto& sink : sinks_) {
          if (sink->name() != "dbus") sink->publish(p);
        }
      }
    }
    if (timing_changed && published_) arm_resync();
    log_->info("configuration reloaded from {}", options_.config_path);
  }

  // --- HTTP ----------------------------------------------------------------------------------
  HttpResponse answer_http(std::string_view method, std::string_view path) {
    if (method != "GET" && method != "HEAD") {
      return {405, "text/plain; charset=utf-8", "only GET\n"};
    }
    if (path == "/healthz") {
      // Answered by the loop itself: an answer proves the loop runs.
      return {200, "text/plain; charset=utf-8", "ok\n"};
    }
    if (path == "/readyz") {
      const bool ready = published_ && sinks_ok();
      return {ready ? 200U : 503U, "text/plain; charset=utf-8",
              (ready ? "ready: " : "not ready: ") + health() + "\n"};
    }
    if (path == "/metrics") {
      MetricsView v;
      v.version = NODETOPO_VERSION;
      v.generation = generation_;
      v.ready = published_ && sinks_ok();
      v.degraded = kept_last_good_;
      v.last_refresh_seconds = static_cast<double>(last_refresh_usec_) / 1e6;
      v.probes = latest_probes_;
      if (published_) v.devices = published_->devices;
      for (const auto& s : sinks_) {
        v.sinks.push_back(
            {std::string(s->name()), s->state().ok, s->state().writes, s->state().errors});
        v.sink_metrics += s->metrics();
      }
      return {200, "text/plain; version=0.0.4; charset=utf-8", render_metrics(metrics_, v)};
    }
    return {404, "text/plain; charset=utf-8",
            "not found: " + std::string(path) + " (/healthz, /readyz, /metrics)\n"};
  }

  ManagerOptions options_;
  AgentConfig config_;
  std::shared_ptr<spdlog::logger> log_;
  sd_event* loop_ = nullptr;
  sd_event_source* debounce_ = nullptr;
  sd_event_source* resync_ = nullptr;
  sd_event_source* worker_io_ = nullptr;
  std::unique_ptr<SnapshotSource> source_;
  std::unique_ptr<DiscoveryWorker> worker_;
  std::unique_ptr<DbusService> dbus_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<UeventSource> uevents_;
  std::vector<std::unique_ptr<Sink>> sinks_;
  std::string kube_problem_;  ///< the Kubernetes sink could not be built (credentials)

  std::shared_ptr<const Snapshot> published_;
  std::uint64_t generation_ = 0;
  std::uint64_t last_refresh_usec_ = 0;
  std::vector<ProbeReport> latest_probes_;
  std::string discovery_problem_;
  std::string config_problem_;
  std::string last_health_;
  bool ready_notified_ = false;
  bool kept_last_good_ = false;  ///< the last discovery was degraded or failed
  std::string last_status_;

  bool running_ = false;
  Trigger current_ = Trigger::kStart;
  std::optional<Trigger> pending_;
  // What the uevents since the last discovery started say changed (probes::DiscoveryCache).
  probes::Changes changes_ = probes::Changes::none();
  std::vector<std::function<void(Result<std::uint64_t>)>> waiting_current_;
  std::vector<std::function<void(Result<std::uint64_t>)>> waiting_next_;
  std::uint64_t burst_start_ = 0;
  bool overflow_ = false;
  std::mt19937_64 rng_{std::random_device{}()};
  Metrics metrics_;
};

}  // namespace

Result<std::unique_ptr<Manager>> Manager::create(ManagerOptions options) {
  auto manager = std::make_unique<ManagerImpl>(std::move(options));
  if (auto ok = manager->setup(); !ok) return ok.error();
  return std::unique_ptr<Manager>(std::move(manager));
}

}  // namespace nodetopo::daemon
