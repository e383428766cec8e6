// The Publisher's I/O thread: discovery, then a pass over the sinks whenever one is due, then a
// wait that the watch, update(), resync() and stop() cut short. See publisher.hpp for the
// contract.
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include <nodetopo/kube/publisher.hpp>

#include "../log.hpp"
#include "sinks.hpp"

namespace nodetopo::kube {

namespace {

constexpr const char* kSliceSink = "resourceslices";
constexpr const char* kNodeFeatureSink = "nodefeature";
constexpr const char* kNodeLabelsSink = "nodelabels";
constexpr const char* kNrtSink = "nrt";
constexpr const char* kHamiSink = "hami";

// Scheduling state of one sink, owned by the I/O thread.
struct Schedule {
  Clock::time_point due = Clock::time_point::max();
  Millis backoff{0};
  bool parked = false;
  std::string parked_message;  ///< the last message logged for the parked state
};

}  // namespace

class Publisher::Impl {
 public:
  explicit Impl(PublisherConfig config)
      : config_(std::move(config)),
        client_(config_.client, config_.options),
        slices_(client_, config_.driver, config_.watch_timeout) {
    thread_ = std::thread([this] { run(); });
  }

  ~Impl() { stop(); }

  void update(DesiredState desired) {
    {
      const std::lock_guard lock(mutex_);
      desired_ = std::make_shared<DesiredState>(std::move(desired));
      ++desired_version_;
    }
    client_.wakeup();
  }

  void resync() {
    resync_requested_ = true;
    client_.wakeup();
  }

  PublisherStatus status() const {
    PublisherStatus s;
    {
      const std::lock_guard lock(mutex_);
      s = status_;
    }
    s.requests = client_.metrics()->requests();
    s.retries = client_.metrics()->retries();
    return s;
  }

  void stop() {
    client_.stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run();
  bool discover();
  void sync_sink(const char* name, Schedule& schedule, const std::function<SyncOutcome()>& fn);
  void read_node_labels();
  void set_status(const char* name, const std::function<void(SinkStatus&)>& fn) {
    const std::lock_guard lock(mutex_);
    fn(status_.sinks[name]);
  }
  Millis next_backoff(Millis current) const {
    if (current.count() == 0) return config_.sync_backoff_initial;
    return std::min(current * 2, config_.sync_backoff_max);
  }

  PublisherConfig config_;
  ApiClient client_;
  SliceReconciler slices_;
  std::thread thread_;

  mutable std::mutex mutex_;  // guards desired_, desired_version_, status_
  std::shared_ptr<DesiredState> desired_;
  std::uint64_t desired_version_ = 0;
  PublisherStatus status_;
  std::atomic<bool> resync_requested_{false};

  // I/O thread only
  std::optional<ServerInfo> server_;
  Clock::time_point rediscover_at_{};
  std::optional<Documents> docs_;
  std::string node_;
  std::uint64_t rendered_version_ = 0;
  int rendered_minor_ = -1;
  LabelMode label_mode_ = LabelMode::kNone;
  Millis repair_delay_{0};
  Clock::time_point last_repair_{};
  // The Node's instance labels as last read, and those the documents were rendered with.
  std::map<std::string, std::string> node_labels_;
  std::optional<std::map<std::string, std::string>> rendered_node_labels_;
  bool node_labels_read_ = false;
};

bool Publisher::Impl::discover() {
  auto info = discover_server(client_);
  if (!info) {
    // Nothing is written or removed without a server to compare with: just try again later.
    kube_log()->warn("{}", info.error().describe());
    const std::lock_guard lock(mutex_);
    for (const char* s : {kSliceSink, kNodeFeatureSink, kNodeLabelsSink, kNrtSink}) {
      if (status_.sinks.count(s) != 0) status_.sinks[s].last_error = info.error().describe();
    }
    return false;
  }
  if (!server_ || server_->git_version != info->git_version) {
    kube_log()->info(
        "API server {} is Kubernetes {} ({}.{}); resource.k8s.io/v1 {}, NFD {}, NRT {}",
        client_.config().server, info->git_version, info->major, info->minor,
        info->serves(kSliceGroupVersion) ? "served" : "absent",
        info->serves(kNfdGroupVersion) ? "served" : "absent",
        info->serves(kNrtGroupVersion) ? "served" : "absent");
  }
  server_ = std::move(info.value());
  read_node_labels();
  const std::lock_guard lock(mutex_);
  status_.server = server_;
  return true;
}

void Publisher::Impl::read_node_labels() {
  // The render chooses the instance labels from the Node's own (exporters/instance_labels.hpp):
  // read them before the first render, so a restart never publishes without them. A failure
  // keeps what was read before; the Node syncs refresh them too.
  std::string node;
  {
    const std::lock_guard lock(mutex_);
    if (!desired_) return;
    node = desired_->node_name;
  }
  if (node.empty()) return;
  const ApiResponse r =
      client_.call({"GET", "/api/v1/nodes/" + percent_encode(node), "", "", "", "get", "nodes"});
  node_labels_read_ = true;  // once per discovery, whatever the answer: never a loop of reads
  if (r.ok()) {
    node_labels_ = instance_labels_of(r.json());
  } else if (r.status != 404) {
    kube_log()->debug("get nodes {}: {}; instance labels of the Node not refreshed", node,
                      r.message());
  }
}

void Publisher::Impl::sync_sink(const char* name, Schedule& schedule,
                                const std::function<SyncOutcome()>& fn) {
  SyncOutcome out;
  // A conflict means "read again and retry": a few times at once, then like a failure.
  for (int attempt = 0; attempt < 4; ++attempt) {
    out = fn();
    if (out.kind != SyncOutcome::Kind::kConflict || client_.stopped()) break;
    kube_log()->debug("{}: {}; reading again", name, out.message);
    set_status(name, [&](SinkStatus& st) { st.writes += out.writes; });
    out.writes = 0;
  }
  if (client_.stopped()) return;
  const auto now = Clock::now();
  set_status(name, [&](SinkStatus& st) {
    ++st.syncs;
    st.writes += out.writes;
    st.enabled = true;
    st.parked = out.kind == SyncOutcome::Kind::kParked;
    st.in_sync = out.kind == SyncOutcome::Kind::kOk;
    if (out.kind == SyncOutcome::Kind::kOk) {
      st.last_success = std::chrono::system_clock::now();
      st.last_error.clear();
    } else {
      ++st.failures;
      st.last_error = out.message;
    }
  });
  switch (out.kind) {
    case SyncOutcome::Kind::kOk:
      if (schedule.parked) kube_log()->info("{}: no longer refused, publishing again", name);
      if (out.writes > 0) kube_log()->info("{}: {} write(s), in sync", name, out.writes);
      schedule = Schedule{now + config_.resync, Millis(0), false, {}};
      break;
    case SyncOutcome::Kind::kParked:
      // One message per distinct refusal, not one per retry.
      if (!schedule.parked || schedule.parked_message != out.message) {
        kube_log()->warn(
            "{}: {}; this sink is parked and retried every {} s", name, out.message,
            std::chrono::duration_cast<std::chrono::seconds>(config_.parked_retry).count());
      }
      schedule.parked = true;
      schedule.parked_message = out.message;
      schedule.due = now + config_.parked_retry;
      rediscover_at_ = std::min(rediscover_at_, schedule.due);
      break;
    case SyncOutcome::Kind::kConflict:
    case SyncOutcome::Kind::kFailed:
      schedule.backoff = next_backoff(schedule.backoff);
      kube_log()->warn("{}: {}; retrying in {} ms", name, out.message, schedule.backoff.count());
      schedule.due = now + schedule.backoff;
      break;
  }
}

void Publisher::Impl::run() {
  std::mt19937_64 rng(std::random_device{}());
  if (config_.startup_jitter.count() > 0) {
    // Spread the first requests of a fleet that starts at once (a cluster-wide restart).
    // update() wakes the client: keep waiting until the drawn time has passed.
    std::uniform_int_distribution<std::int64_t> d(0, config_.startup_jitter.count());
    const auto until = Clock::now() + Millis(d(rng));
    while (!client_.stopped() && Clock::now() < until) {
      client_.wait(std::chrono::duration_cast<Millis>(until - Clock::now()));
    }
  }
  Schedule slices;
  Schedule labels;
  Schedule nrt;
  Schedule hami;
  Clock::time_point discovery_retry{};
  Millis discovery_backoff{0};
  while (!client_.stopped()) {
    const auto now = Clock::now();
    // Discovery first: the object forms and the sinks follow the server.
    if (!server_ || now >= rediscover_at_) {
      if (now < discovery_retry) {
        client_.wait(std::chrono::duration_cast<Millis>(discovery_retry - now));
        continue;
      }
      if (!discover()) {
        discovery_backoff = next_backoff(discovery_backoff);
        discovery_retry = Clock::now() + discovery_backoff;
        continue;
      }
      discovery_backoff = Millis(0);
      rediscover_at_ = Clock::now() + config_.resync;
      rendered_minor_ = -1;  // render again if the version changed
    }
    std::shared_ptr<DesiredState> desired;
    std::uint64_t version = 0;
    {
      const std::lock_guard lock(mutex_);
      desired = desired_;
      version = desired_version_;
    }
    if (!desired) {
      client_.wait(Millis(60'000));
      continue;
    }
    if (!node_labels_read_) read_node_labels();
    if (version != rendered_version_ || rendered_minor_ != server_->minor ||
        rendered_node_labels_ != node_labels_) {
      const bool new_input = true;
      rendered_version_ = version;
      rendered_minor_ = server_->minor;
      rendered_node_labels_ = node_labels_;
      ServerInfo input = *server_;
      input.node_labels = node_labels_;
      Result<Documents> docs =
          desired->render
              ? desired->render(input)
              : Result<Documents>(make_error(ErrorCode::kInvalid, "no render function"));
      if (!docs) {
        // Keep publishing what was last rendered; a failed render removes nothing.
        kube_log()->error(
            "rendering the documents of node {} failed: {}; keeping what is "
            "published",
            desired->node_name, docs.error().describe());
      } else {
        docs_ = std::move(docs.value());
        node_ = desired->node_name;
        if (new_input) {
          // New input (or a new server version): every sink looks again now.
          slices.due = labels.due = nrt.due = hami.due = Clock::now();
        }
      }
    }
    if (!docs_) {
      client_.wait(Millis(60'000));
      continue;
    }
    if (resync_requested_.exchange(false)) {
      slices.due = labels.due = nrt.due = hami.due = Clock::now();
      rediscover_at_ = Clock::now();
      continue;
    }
    // The watch asks for repairs and relists between passes.
    if (slices_.take_relist()) slices.due = std::min(slices.due, Clock::now());
    if (slices_.take_foreign_change()) {
      // Repairs back off while someone keeps changing our slices, so two writers never fight
      // in a tight loop; a quiet minute resets the delay.
      const auto t = Clock::now();
      repair_delay_ = (t - last_repair_ < std::chrono::minutes(1) && repair_delay_.count() > 0)
                          ? std::min(repair_delay_ * 2, config_.repair_delay_max)
                          : config_.repair_delay;
      last_repair_ = t;
      slices.due = std::min(slices.due, t + repair_delay_);
    }

    // Which label sink: decided by discovery in auto mode.
    LabelMode mode = config_.label_mode;
    if (mode == LabelMode::kAuto) {
      mode = server_->serves(kNfdGroupVersion) ? LabelMode::kNodeFeature : LabelMode::kNode;
    }
    if (mode != label_mode_) {
      label_mode_ = mode;
      labels.due = Clock::now();
    }

    const auto t = Clock::now();
    if (config_.publish_slices && docs_->slices && t >= slices.due) {
      if (!server_->serves(kSliceGroupVersion)) {
        sync_sink(kSliceSink, slices, [&] {
          return SyncOutcome{SyncOutcome::Kind::kParked,
                             "resourceslices: resource.k8s.io/v1 is not served by " +
                                 client_.config().server + " (Kubernetes " + server_->git_version +
                                 "; DRA needs 1.34 or later)",
                             0};
        });
      } else {
        sync_sink(kSliceSink, slices, [&] { return slices_.sync(node_, *docs_->slices); });
      }
    }
    const bool watching = config_.publish_slices && docs_->slices && !slices.parked &&
                          slices.backoff.count() == 0 && slices.due != Clock::time_point::max();
    if (watching) slices_.ensure_watch(node_);
    if (docs_->labels && label_mode_ != LabelMode::kNone && t >= labels.due) {
      if (label_mode_ == LabelMode::kNodeFeature) {
        std::string ns = config_.nodefeature_namespace;
        if (ns.empty()) ns = client_.config().name_space;
        if (ns.empty()) ns = "node-feature-discovery";
        sync_sink(kNodeFeatureSink, labels, [&] {
          if (!server_->serves(kNfdGroupVersion)) {
            return SyncOutcome{SyncOutcome::Kind::kParked,
                               "create nodefeatures in namespace " + ns +
                                   ": the NodeFeature CRD (nfd.k8s-sigs.io/v1alpha1) is not "
                                   "installed",
                               0};
          }
          return sync_nodefeature(client_, node_, ns, *docs_->labels);
        });
      } else {
        sync_sink(kNodeLabelsSink, labels,
                  [&] { return sync_node_labels(client_, node_, *docs_->labels); });
      }
    }
    if (config_.publish_nrt && docs_->nrt && t >= nrt.due) {
      sync_sink(kNrtSink, nrt, [&] {
        if (!server_->serves(kNrtGroupVersion)) {
          return SyncOutcome{SyncOutcome::Kind::kParked,
                             "create noderesourcetopologies (cluster-scoped): the "
                             "NodeResourceTopology CRD (topology.node.k8s.io/v1alpha2) is not "
                             "installed",
                             0};
        }
        return sync_nrt(client_, node_, *docs_->nrt);
      });
    }
    if (config_.hami && docs_->hami && t >= hami.due) {
      HamiSyncInfo info;
      sync_sink(kHamiSink, hami, [&] { return sync_hami(client_, node_, *docs_->hami, info); });
      if (info.node_read) node_labels_ = info.node_labels;
      if (info.handshakes > 0) {
        kube_log()->debug("hami: answered the scheduler's handshake request");
        const std::lock_guard lock(mutex_);
        status_.hami_handshakes += info.handshakes;
      }
      // The scheduler's requests must be answered within 60 s: the Node is read every poll
      // (reads only while nothing changes), not every resync.
      if (!hami.parked && hami.backoff.count() == 0) {
        hami.due = std::min(hami.due, Clock::now() + config_.hami_poll);
      }
    }
    {
      const std::lock_guard lock(mutex_);
      ++status_.passes;
      status_.watch_restarts = slices_.watch_restarts();
      status_.relists = slices_.relists();
    }
    if (slices_.take_relist()) {
      slices.due = std::min(slices.due, Clock::now());
      continue;
    }
    // Only sinks that have something to do count for the wake-up time.
    const bool slices_on = config_.publish_slices && docs_->slices;
    const bool labels_on = docs_->labels && label_mode_ != LabelMode::kNone;
    const bool nrt_on = config_.publish_nrt && docs_->nrt;
    const bool hami_on = config_.hami && docs_->hami;
    const auto never = Clock::time_point::max();
    auto next = std::min({slices_on ? slices.due : never, labels_on ? labels.due : never,
                          nrt_on ? nrt.due : never, hami_on ? hami.due : never, rediscover_at_});
    if (watching && !slices_.watching()) next = std::min(next, slices_.watch_retry_at());
    const auto now2 = Clock::now();
    if (next > now2) {
      const auto wait = std::chrono::duration_cast<Millis>(next - now2) + Millis(1);
      client_.wait(std::min(wait, Millis(60'000)));
    }
  }
  slices_.close_watch();
}

Publisher::Publisher(PublisherConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Publisher::~Publisher() = default;
void Publisher::update(DesiredState desired) {
  impl_->update(std::move(desired));
}
void Publisher::resync() {
  impl_->resync();
}
PublisherStatus Publisher::status() const {
  return impl_->status();
}
void Publisher::stop() {
  impl_->stop();
}

}  // namespace nodetopo::kube
