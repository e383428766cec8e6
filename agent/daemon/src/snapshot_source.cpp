// Snapshots through agent/core (see the header): one OpenedHost for the process's life, one
// core::Refresher::refresh() per discovery (a snapshot through the discovery cache, every
// document by core::render() when something it is made of changed).
#include "snapshot_source.hpp"

#include <utility>

#include <nodetopo/core/host_source.hpp>
#include <nodetopo/core/refresh.hpp>
#include <nodetopo/core/render.hpp>
#include <nodetopo/core/snapshot.hpp>
#include <nodetopo/exporters/instance_labels.hpp>
#include <nodetopo/topology/shape.hpp>

namespace nodetopo::daemon {

namespace {

class CoreSnapshotSource final : public SnapshotSource {
 public:
  CoreSnapshotSource(core::OpenedHost host, std::string node_name,
                     const std::map<std::string, std::string>& instance)
      : host_(std::move(host)), node_name_(std::move(node_name)) {
    static constexpr std::pair<std::string_view, std::string_view> kKeys[] = {
        {exporters::kInstanceTypeLabel, "instance.type"},
        {exporters::kCapacityTypeLabel, "instance.capacity_type"},
        {exporters::kReservationLabel, "instance.reservation"}};
    for (const auto& [name, key] : kKeys) {
      auto it = instance.find(std::string(name));
      if (it != instance.end()) {
        instance_[std::string(name)] = {it->second, "agent config " + std::string(key)};
      }
    }
  }

  [[nodiscard]] std::string describe() const override { return host_.root().path().string(); }

  Result<Snapshot> take(const probes::Changes& changes) override {
    const auto started = std::chrono::steady_clock::now();
    // reopen_root: a fresh SysRoot per snapshot, since a SysRoot's cache never invalidates and
    // the host (or the tree a symlinked root points to) may have changed since the last one.
    // The refresher's discovery cache keeps what the events say did not change, and it renders
    // the documents only when what they are made of changed.
    auto taken = refresher_.refresh(
        host_, {.node_name = node_name_, .reopen_root = true, .instance_config = instance_},
        changes);
    if (!taken) return taken.error();
    const core::NodeSnapshot& snap = *taken.value().snapshot;

    Snapshot s;
    s.reports = snap.discovery.reports;
    s.node_name = snap.node_name;
    s.node_error = snap.node_error;
    s.served = taken.value().documents;
    s.digest = taken.value().digest;
    s.shape = taken.value().documents->shape;
    const Topology& t = snap.topology();
    for (std::size_t i = 0; i < t.size(); ++i) {
      ++s.devices[std::string(to_string(t.node(static_cast<NodeIndex>(i)).kind))];
    }
    s.core = std::move(taken.value().snapshot);
    s.duration = std::chrono::steady_clock::now() - started;
    return s;
  }

 private:
  core::OpenedHost host_;
  std::string node_name_;
  exporters::InstanceValues instance_;  // the agent config's instance.* with their sources
  core::Refresher refresher_{core::agent_documents()};
};

}  // namespace

const std::vector<std::string>& document_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const core::ServedDocument& d : core::agent_documents())
      k.emplace_back(d.key);
    return k;
  }();
  return keys;
}

Result<std::unique_ptr<SnapshotSource>> open_snapshot_source(const AgentConfig& config) {
  // mock_profile wins (the --mock flag clears host_root); an empty host_root is $HOST_ROOT, else
  // "/", as for every command.
  core::HostSource source(core::HostSpec{.root = config.host_root, .mock = config.mock_profile});
  auto host = source.open();
  if (!host) return host.error();
  // Still the only thread (the worker and the bus start after this returns): the one place the
  // agent writes the process environment (probes/probe.hpp). The root path never changes for
  // the process's life, so once is enough, even when the tree behind a symlinked root does.
  core::write_process_environment(host.value());
  return std::unique_ptr<SnapshotSource>(std::make_unique<CoreSnapshotSource>(
      std::move(host.value()), config.node_name, config.instance));
}

}  // namespace nodetopo::daemon
