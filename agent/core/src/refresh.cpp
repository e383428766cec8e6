#include <utility>

#include <nodetopo/base/sha256.hpp>
#include <nodetopo/core/refresh.hpp>
#include <nodetopo/exporters/json_model.hpp>
#include <nodetopo/topology/shape.hpp>

namespace nodetopo::core {

bool depends_on_node_settings(DocumentKind kind) {
  return kind == DocumentKind::kResourceSlices || kind == DocumentKind::kLabels ||
         kind == DocumentKind::kNrt;
}

const std::vector<ServedDocument>& agent_documents() {
  using K = DocumentKind;
  static const std::vector<ServedDocument> documents = {
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

Refresher::Refresher(std::vector<ServedDocument> served) : served_(std::move(served)) {}

Result<Refreshed> Refresher::refresh(const OpenedHost& host, SnapshotOptions options,
                                     const probes::Changes& changes) {
  cache_.invalidate(changes);
  options.cache = &cache_;
  // The digest is made here, from the model this refresh renders anyway.
  options.with_digest = false;
  auto taken = take_snapshot(host, options);
  if (!taken) return taken.error();
  NodeSnapshot& snap = taken.value();

  // The model is what `topo dump --format json` prints, and the digest is its SHA-256. Equal
  // bytes have an equal hash: a model equal to the last one keeps the last digest unhashed.
  std::string model = exporters::render_json_model(snap.discovery.topology, snap.discovery.reports);
  const bool same_model = have_last_ && model == model_;
  snap.digest = same_model ? model_digest_ : sha256_hex(model);
  std::string node_key = snap.node_name;
  node_key += '\0';
  node_key += snap.node_error;
  node_key += '\0';
  node_key += snap.settings_key;

  Refreshed out;
  if (same_model && node_key == node_key_) {
    out.snapshot = std::make_shared<const NodeSnapshot>(std::move(snap));
    out.documents = documents_;
    out.digest = digest_;
    return out;
  }

  auto documents = std::make_shared<ServedDocuments>();
  std::string digest_input = snap.digest;
  digest_input += '\0';
  digest_input += snap.node_name;
  RenderShared shared;  // the labels, slices, shape, ... of several documents, computed once
  for (const ServedDocument& d : served_) {
    // The dump's JSON is the model itself (render() gives these bytes): not rendered twice.
    auto doc = d.kind == DocumentKind::kDump && d.format == "json"
                   ? Result<std::string>(model)
                   : render(snap, d.kind, d.format, {}, shared);
    const bool in_digest = depends_on_node_settings(d.kind);
    if (in_digest) digest_input += '\0';
    if (doc) {
      if (in_digest) digest_input += doc.value();
      documents->documents[d.key] = std::move(doc.value());
    } else {
      std::string why = doc.error().describe();
      if (in_digest) digest_input += "error: " + why;
      documents->errors[d.key] = std::move(why);
    }
  }
  out.digest = sha256_hex(digest_input);
  if (!shared.shape) shared.shape = compute_shape(snap.topology());
  documents->shape = shared.shape->hash;
  out.documents = documents;
  out.rendered = true;

  have_last_ = true;
  model_digest_ = snap.digest;
  model_ = std::move(model);
  node_key_ = std::move(node_key);
  documents_ = std::move(documents);
  digest_ = out.digest;
  out.snapshot = std::make_shared<const NodeSnapshot>(std::move(snap));
  return out;
}

}  // namespace nodetopo::core
