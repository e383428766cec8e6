// The daemon's one door to discovery: the host, opened once, and snapshots of it (agent/core).
//
// A snapshot holds every document the agent serves, rendered once by core::render() when it is
// taken (on the discovery worker), so that D-Bus and HTTP answers are string copies that never
// wait for a discovery, and so that `--from-agent` prints exactly what the one-shot command
// prints on the same host.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/core/refresh.hpp>
#include <nodetopo/core/snapshot.hpp>
#include <nodetopo/daemon/config.hpp>
#include <nodetopo/probes/discovery_cache.hpp>
#include <nodetopo/topology/diagnostics.hpp>

namespace nodetopo::daemon {

struct Snapshot {
  /// SHA-256 of core's snapshot digest (the JSON model with the probe reports), the node name
  /// and the documents that depend on the node name and the export settings: equal digests mean
  /// nothing any consumer sees has changed.
  std::string digest;
  std::string shape;      ///< 12-hex-digit shape fingerprint
  std::string node_name;  ///< empty when it cannot be resolved (see node_error)
  std::string node_error;
  /// By key ("dump/text", "dump/json", "dump/dot", "matrix/text", "matrix/json",
  /// "resourceslices/yaml", ..., "shape/json"): byte for byte what the one-shot command prints,
  /// or why a document cannot be rendered for this node (no node name, invalid labels). Rendered
  /// only when what they are made of changed (core::Refresher), so shared with earlier
  /// snapshots until then. Null only in a default-made Snapshot.
  std::shared_ptr<const core::ServedDocuments> served;
  /// Nodes of the model by kind ("accelerator", "net_device", ...).
  std::map<std::string, std::size_t> devices;
  std::vector<ProbeReport> reports;
  std::chrono::nanoseconds duration{0};
  /// The discovery itself, immutable and shared: the Kubernetes sink renders from it on the
  /// publisher's thread for the server's version (kube::render_documents).
  std::shared_ptr<const core::NodeSnapshot> core;
};

/// Kinds and formats the agent serves, as "kind/format" keys of Snapshot::documents.
const std::vector<std::string>& document_keys();

/// Takes snapshots of one host. take() runs on the discovery worker; nothing else is shared.
class SnapshotSource {
 public:
  virtual ~SnapshotSource() = default;
  /// One discovery, reading again what `changes` says may have changed since the last one and
  /// reusing the rest (probes::DiscoveryCache): the result is what a full discovery gives. An
  /// error only when the root itself cannot be opened; probe failures are in the reports.
  virtual Result<Snapshot> take(const probes::Changes& changes) = 0;
  /// The host root read, for messages.
  [[nodiscard]] virtual std::string describe() const = 0;
};

/// Opens the host of `config` (core::HostSource: a --mock profile is built here, once, into a
/// private directory that lives as long as the source) and writes what its discovery needs into
/// the process environment (core::write_process_environment). Call it from the only thread,
/// before the discovery worker, the bus or anything else starts a thread.
Result<std::unique_ptr<SnapshotSource>> open_snapshot_source(const AgentConfig& config);

}  // namespace nodetopo::daemon
