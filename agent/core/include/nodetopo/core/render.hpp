// The documents a snapshot renders to: every output of `topo dump`, `topo matrix` and
// `topo export`, byte for byte. The renderers themselves are the pure exporters; this adds the
// choice between them and the settings that come from the snapshot (driver, sharing, node name).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/base/error.hpp>
#include <nodetopo/core/snapshot.hpp>
#include <nodetopo/exporters/dra_types.hpp>
#include <nodetopo/exporters/json_model.hpp>
#include <nodetopo/exporters/matrix.hpp>
#include <nodetopo/exporters/node_labels.hpp>
#include <nodetopo/topology/shape.hpp>

namespace nodetopo::core {

/// What to render.
enum class DocumentKind {
  kDump,            ///< formats text (tree), json (the model), dot (Graphviz)
  kMatrix,          ///< text, json: the accelerator/NIC relation matrix
  kResourceSlices,  ///< yaml, json: DRA ResourceSlices (resource.k8s.io/v1)
  kLabels,          ///< plain, nfd (feature file), nodefeature (YAML object), patch (merge patch)
  kNrt,             ///< yaml, json: NodeResourceTopology (topology.node.k8s.io/v1alpha2)
  kShape,           ///< text, json: the shape fingerprint and the description it hashes
};

/// "dump", "matrix", "resourceslices", "labels", "nrt", "shape".
std::string_view to_string(DocumentKind kind);

/// The formats `kind` accepts, the first being its default.
const std::vector<std::string_view>& formats_of(DocumentKind kind);

/// Settings of one rendering; the defaults are those of the command line.
struct RenderOptions {
  // resourceslices
  std::string node_uid;  ///< adds the ownerReference to the Node when set
  std::string driver;    ///< empty: the settings file's, else "nodetopo.dev"
  std::string k8s_version = "1.34";
  std::string sharing;          ///< "none" | "consumable" | "partitionable"; empty: settings
  std::int64_t generation = 1;  ///< pool.generation
  // labels
  std::string expiry;      ///< RFC 3339 time, --format nfd only
  std::string name_space;  ///< namespace of the NodeFeature object
};

/// Checks `format` and the options that can be checked without a snapshot (an unknown format,
/// an --expiry for a format that has none, a malformed time), so a command can refuse them before
/// discovering anything. The message is the one render() gives.
[[nodiscard]] Result<void> check_render(DocumentKind kind, std::string_view format,
                                        const RenderOptions& options = {});

/// Renders `snapshot` as `kind` in `format`. Pure: no I/O, same snapshot and options give the
/// same bytes. Errors: the checks above, the snapshot's settings error for the Kubernetes kinds,
/// its node-name error for kinds that name the node, and the exporters' own (invalid labels,
/// slices over the API's limits).
[[nodiscard]] Result<std::string> render(const NodeSnapshot& snapshot, DocumentKind kind,
                                         std::string_view format,
                                         const RenderOptions& options = {});

/// What the documents of one snapshot have in common across their formats (the labels of the
/// four label formats, the slices of YAML and JSON, the shape of the labels and of the shape
/// documents, ...): computed by the first render() that needs it and taken by the next ones given
/// the same RenderShared. Only for documents of one snapshot rendered with the same options;
/// core::Refresher renders the agent's documents through one. Not for use by several threads.
struct RenderShared {
  std::optional<ShapeFingerprint> shape;
  std::optional<exporters::LabelMap> labels;
  std::optional<Result<std::vector<exporters::dra::ResourceSlice>>> slices;
  std::optional<std::vector<nlohmann::ordered_json>> slice_objects;  ///< of `slices`, when built
  std::optional<Result<nlohmann::ordered_json>> nrt;
  std::optional<exporters::DeviceMatrix> matrix;
};

/// render(), with what the documents rendered through `shared` have in common computed once.
[[nodiscard]] Result<std::string> render(const NodeSnapshot& snapshot, DocumentKind kind,
                                         std::string_view format, const RenderOptions& options,
                                         RenderShared& shared);

/// render(), the document handed to `sink` in order instead of returned. The JSON model of a dump
/// is streamed as it is written, in pieces of about 16 KiB, so the process never holds all of it
/// (2.4 MB on a 64-GPU node); every other document comes in one piece. The same bytes as
/// render(); its errors come before any piece.
[[nodiscard]] Result<void> render_to(const NodeSnapshot& snapshot, DocumentKind kind,
                                     std::string_view format, const exporters::TextSink& sink,
                                     const RenderOptions& options = {});

/// The ResourceSlices `render(snapshot, kResourceSlices, …)` prints, as values: what
/// `topo fit` and the publisher start from, so that what they reason about and what is published
/// cannot drift apart. Fails as render() does for this kind.
[[nodiscard]] Result<std::vector<exporters::dra::ResourceSlice>> build_slices(
    const NodeSnapshot& snapshot, const RenderOptions& options = {});

}  // namespace nodetopo::core
