// Snapshots through agent/core (see the header): one OpenedHost for the process's life, one
// core::take_snapshot() per discovery, every document by core::render().
#include "snapshot_source.hpp"

#include <utility>

#include <nodetopo/base/sha256.hpp>
#include <nodetopo/core/host_source.hpp>
#include <nodetopo/core/render.hpp>
#include <nodetopo/core/snapshot.hpp>
#include <nodetopo/exporters/instance_labels.hpp>
#include <nodetopo/topology/shape.hpp>

namespace nodetopo::daemon {

namespace {

struct Served {
  const char* key;
  core::DocumentKind kind;
  const char* format;
};

// What the agent serves, rendered with the command line's defaults (Kubernetes 1.34, pool
// generation 1, no expiry, the settings file's driver and sharing).
const std::vector<Served>& served() {
  using K = core::DocumentKind;
  static const std::vector<Served> documents = {
      {"dump/text", K::kDump, "text"},
      {"dump/json", K::kDump, "json"},
      {"dump/dot", K::kDump, "dot"},
      {"matrix/text", K::kMatrix, "text"},
      {"matrix/json", K::kMatrix, "json"},
      {"resourceslices/yaml", K::kResourceSlices, "yaml"},
      {"resourceslices/json", K::kResourceSlices, "json"},
      {"labels/plain", K::kLabels, "plain"},
      {"labels/nfd", K::kLabels, "nfd"},
      {"labels/patch", K::kLabels, "patch"},
      {"labels/nodefeature", K::kLabels, "nodefeature"},
      {"nrt/yaml", K::kNrt, "yaml"},
      {"nrt/json", K::kNrt, "json"},
      {"shape/text", K::kShape, "text"},
      {"shape/json", K::kShape, "json"},
  };
  return documents;
}

// The dump, the matrix and the shape are functions of the model alone, which core's digest
// covers; the Kubernetes documents also depend on the node name and the export settings.
bool depends_on_node_settings(core::DocumentKind kind) {
  return kind == core::DocumentKind::kResourceSlices || kind == core::DocumentKind::kLabels ||
         kind == core::DocumentKind::kNrt;
}

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
    // The discovery cache keeps what the events say did not change.
    cache_.invalidate(changes);
    auto taken = core::take_snapshot(host_, {.node_name = node_name_,
                                             .with_digest = true,
                                             .reopen_root = true,
                                             .instance_config = instance_,
                                             .cache = &cache_});
    if (!taken) return taken.error();
    const core::NodeSnapshot& snap = taken.value();

    Snapshot s;
    s.reports = snap.discovery.reports;
    s.node_name = snap.node_name;
    s.node_error = snap.node_error;
    std::string digest_input = snap.digest;
    digest_input += '\0';
    digest_input += snap.node_name;
    for (const Served& d : served()) {
      auto doc = core::render(snap, d.kind, d.format);
      const bool in_digest = depends_on_node_settings(d.kind);
      if (in_digest) digest_input += '\0';
      if (doc) {
        if (in_digest) digest_input += doc.value();
        s.documents[d.key] = std::move(doc.value());
      } else {
        s.document_errors[d.key] = doc.error().describe();
        if (in_digest) digest_input += "error: " + s.document_errors[d.key];
      }
    }
    s.digest = sha256_hex(digest_input);
    const Topology& t = snap.topology();
    s.shape = compute_shape(t).hash;
    for (std::size_t i = 0; i < t.size(); ++i) {
      ++s.devices[std::string(to_string(t.node(static_cast<NodeIndex>(i)).kind))];
    }
    s.core = std::make_shared<const core::NodeSnapshot>(std::move(taken.value()));
    s.duration = std::chrono::steady_clock::now() - started;
    return s;
  }

 private:
  core::OpenedHost host_;
  std::string node_name_;
  exporters::InstanceValues instance_;  // the agent config's instance.* with their sources
  probes::DiscoveryCache cache_;
};

}  // namespace

const std::vector<std::string>& document_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const Served& d : served())
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
