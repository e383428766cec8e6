// An agent's refresh of one host: a snapshot through a discovery cache, the digest that tells
// whether anything a consumer sees changed, and the documents it serves — rendered again only
// when what they are made of changed.
//
// Rendering every served document (ResourceSlices of a thousand functions, the tree, the dot
// graph...) costs more than the cached discovery itself, and hashing the JSON model with SHA-256
// almost as much. Both are functions of what the snapshot holds: the JSON model (which covers the
// topology and the probe reports: equal models render equal documents, see NodeSnapshot::digest),
// the node name and the settings and instance inputs (NodeSnapshot::settings_key). So a refresh
// renders the model, compares it byte for byte with the last one, and only when it or the rest
// differs hashes and renders again; otherwise it hands back the last documents and digest, which
// are exactly what rendering would give.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/core/host_source.hpp>
#include <nodetopo/core/render.hpp>
#include <nodetopo/core/snapshot.hpp>
#include <nodetopo/probes/discovery_cache.hpp>

namespace nodetopo::core {

/// One document an agent serves, rendered with render()'s default options.
struct ServedDocument {
  std::string key;  ///< "dump/json", ...
  DocumentKind kind;
  std::string format;
};

/// The rendered documents of one refresh, by key; immutable once made and shared between refreshes
/// that found nothing changed.
struct ServedDocuments {
  std::map<std::string, std::string> documents;
  /// Same keys: why a document cannot be rendered for this node (no node name, invalid labels).
  std::map<std::string, std::string> errors;
  /// The 12-hex-digit shape fingerprint of the topology (compute_shape()).
  std::string shape;
};

/// What `topo agent` serves (D-Bus, HTTP, the file sinks), in this order: every kind in every
/// format, rendered with render()'s default options (Kubernetes 1.34, pool generation 1, no
/// expiry, the settings file's driver and sharing).
const std::vector<ServedDocument>& agent_documents();

/// What one refresh gives.
struct Refreshed {
  /// The snapshot, its digest set (NodeSnapshot::digest).
  std::shared_ptr<const NodeSnapshot> snapshot;
  /// The served documents: the last refresh's when `rendered` is false.
  std::shared_ptr<const ServedDocuments> documents;
  /// SHA-256 (hex) of the snapshot's digest, the node name and the documents that depend on the
  /// node name and the export settings (ResourceSlices, labels, NRT), or their errors: equal
  /// digests mean nothing any consumer sees has changed.
  std::string digest;
  /// Whether the documents were rendered by this refresh.
  bool rendered = false;
};

/// Whether documents of `kind` depend on the node name and the export settings besides the model
/// (and are therefore part of Refreshed::digest).
bool depends_on_node_settings(DocumentKind kind);

/// Refreshes one host again and again, keeping what did not change. Thread-compatible: one
/// refresh at a time.
class Refresher {
 public:
  explicit Refresher(std::vector<ServedDocument> served);

  /// Invalidates what `changes` says may have changed (probes::DiscoveryCache), takes a snapshot
  /// of `host` through the cache (`options.cache` and `options.with_digest` are set here), and
  /// renders the served documents unless they are made of what the last ones were. The result
  /// equals that of a Refresher that starts afresh, given what the events said. Fails as
  /// take_snapshot() does.
  [[nodiscard]] Result<Refreshed> refresh(const OpenedHost& host, SnapshotOptions options,
                                          const probes::Changes& changes);

  /// The discovery cache, for its statistics (tests, benchmarks).
  [[nodiscard]] const probes::DiscoveryCache& cache() const { return cache_; }

 private:
  std::vector<ServedDocument> served_;
  probes::DiscoveryCache cache_;
  // What the last documents were made of, and what they were.
  bool have_last_ = false;
  std::string model_;         // the JSON model (topo dump --format json)
  std::string model_digest_;  // its SHA-256
  std::string node_key_;      // node name, node error, settings key
  std::shared_ptr<const ServedDocuments> documents_;
  std::string digest_;
};

}  // namespace nodetopo::core
