#include <algorithm>

#include <nlohmann/json.hpp>

#include <nodetopo/core/render.hpp>
#include <nodetopo/exporters/dot.hpp>
#include <nodetopo/exporters/json_model.hpp>
#include <nodetopo/exporters/k8s_names.hpp>
#include <nodetopo/exporters/matrix.hpp>
#include <nodetopo/exporters/node_labels.hpp>
#include <nodetopo/exporters/nrt.hpp>
#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/exporters/text_tree.hpp>
#include <nodetopo/exporters/yaml_emit.hpp>
#include <nodetopo/topology/shape.hpp>

namespace nodetopo::core {

namespace {

using Json = nlohmann::ordered_json;

std::string render_dump(const NodeSnapshot& s, std::string_view format) {
  const auto& d = s.discovery;
  if (format == "json") return exporters::render_json_model(d.topology, d.reports);
  if (format == "dot") return exporters::render_dot(d.topology);
  return exporters::render_text_tree(d.topology, d.reports);
}

std::string render_matrix(const NodeSnapshot& s, std::string_view format, RenderShared& shared) {
  if (!shared.matrix) shared.matrix = exporters::build_device_matrix(s.topology());
  const exporters::DeviceMatrix& matrix = *shared.matrix;
  return format == "json" ? exporters::render_matrix_json(matrix)
                          : exporters::render_matrix_text(matrix);
}

Result<std::string> render_slices(const NodeSnapshot& s, std::string_view format,
                                  const RenderOptions& opts, RenderShared& shared) {
  if (!shared.slices) shared.slices = build_slices(s, opts);
  const auto& slices = *shared.slices;
  if (!slices) return slices.error();
  if (!shared.slice_objects) shared.slice_objects = exporters::dra::slices_to_json(*slices);
  return format == "json" ? exporters::dra::render_slice_objects_json(*shared.slice_objects)
                          : exporters::dra::render_slice_objects_yaml(*shared.slice_objects);
}

Result<std::string> render_labels(const NodeSnapshot& s, std::string_view format,
                                  const RenderOptions& opts, RenderShared& shared) {
  if (!shared.labels) {
    shared.labels =
        exporters::compute_labels(s.topology(), exporters::choose_instance_labels(s.instance, {}));
  }
  const exporters::LabelMap& labels = *shared.labels;
  if (const auto problems = exporters::validate_labels(labels); !problems.empty()) {
    std::string message = "invalid labels:";
    for (const auto& p : problems)
      message += "\n  " + p;
    return make_error(ErrorCode::kInvalid, message);
  }
  if (format == "nfd") return exporters::render_labels_nfd(labels, opts.expiry);
  if (format == "patch") return exporters::render_labels_patch(labels);
  if (format == "nodefeature") {
    if (s.node_name.empty()) return make_error(ErrorCode::kInvalid, s.node_error);
    auto object = exporters::labels_to_nodefeature(labels, s.node_name, opts.name_space);
    if (!object) return object.error();
    return exporters::to_yaml(object.value());
  }
  return exporters::render_labels_plain(labels);
}

Result<std::string> render_nrt(const NodeSnapshot& s, std::string_view format,
                               RenderShared& shared) {
  if (s.node_name.empty()) return make_error(ErrorCode::kInvalid, s.node_error);
  if (!shared.nrt) shared.nrt = exporters::render_nrt(s.topology(), s.node_name);
  const auto& object = *shared.nrt;
  if (!object) return object.error();
  if (format == "json") return object->dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  return exporters::to_yaml(object.value());
}

std::string render_shape(const NodeSnapshot& s, std::string_view format, RenderShared& shared) {
  if (!shared.shape) shared.shape = compute_shape(s.topology());
  const ShapeFingerprint& shape = *shared.shape;
  if (format == "json") {
    Json j;
    j["shape"] = shape.hash;
    j["sha256"] = shape.sha256;
    j["description"] = shape.description;
    return j.dump(2) + "\n";
  }
  return "shape: " + shape.hash + "\nsha256: " + shape.sha256 +
         "\n\ndescription (the sha256 covers these lines exactly):\n" + shape.description;
}

bool reads_settings(DocumentKind kind) {
  return kind == DocumentKind::kResourceSlices || kind == DocumentKind::kLabels ||
         kind == DocumentKind::kNrt;
}

}  // namespace

std::string_view to_string(DocumentKind kind) {
  switch (kind) {
    case DocumentKind::kDump:
      return "dump";
    case DocumentKind::kMatrix:
      return "matrix";
    case DocumentKind::kResourceSlices:
      return "resourceslices";
    case DocumentKind::kLabels:
      return "labels";
    case DocumentKind::kNrt:
      return "nrt";
    case DocumentKind::kShape:
      return "shape";
  }
  return "dump";
}

const std::vector<std::string_view>& formats_of(DocumentKind kind) {
  static const std::vector<std::string_view> kDump = {"text", "json", "dot"};
  static const std::vector<std::string_view> kText = {"text", "json"};
  static const std::vector<std::string_view> kYaml = {"yaml", "json"};
  static const std::vector<std::string_view> kLabels = {"plain", "nfd", "nodefeature", "patch"};
  switch (kind) {
    case DocumentKind::kDump:
      return kDump;
    case DocumentKind::kMatrix:
    case DocumentKind::kShape:
      return kText;
    case DocumentKind::kResourceSlices:
    case DocumentKind::kNrt:
      return kYaml;
    case DocumentKind::kLabels:
      return kLabels;
  }
  return kDump;
}

Result<void> check_render(DocumentKind kind, std::string_view format,
                          const RenderOptions& options) {
  const auto& formats = formats_of(kind);
  if (std::find(formats.begin(), formats.end(), format) == formats.end()) {
    std::string known;
    for (std::string_view f : formats)
      known += (known.empty() ? "" : ", ") + std::string(f);
    return make_error(ErrorCode::kInvalid, "unknown format \"" + std::string(format) + "\" for " +
                                               std::string(to_string(kind)) + " (expected " +
                                               known + ")");
  }
  if (kind == DocumentKind::kLabels && !options.expiry.empty()) {
    if (format != "nfd") {
      return make_error(ErrorCode::kInvalid, "--expiry applies to --format nfd only");
    }
    if (std::string why = exporters::k8s::check_rfc3339(options.expiry); !why.empty()) {
      return make_error(ErrorCode::kInvalid, "--expiry: " + why);
    }
  }
  return {};
}

Result<std::string> render(const NodeSnapshot& snapshot, DocumentKind kind, std::string_view format,
                           const RenderOptions& options) {
  RenderShared shared;
  return render(snapshot, kind, format, options, shared);
}

Result<std::string> render(const NodeSnapshot& snapshot, DocumentKind kind, std::string_view format,
                           const RenderOptions& options, RenderShared& shared) {
  if (auto checked = check_render(kind, format, options); !checked) return checked.error();
  // A published document replaces the last one: from a degraded discovery it would withdraw
  // what the failed probe misses (docs/reliability.md). Only the views show one.
  if (kind != DocumentKind::kDump && kind != DocumentKind::kMatrix) {
    if (const std::string why = snapshot.discovery.degraded(); !why.empty()) {
      return make_error(ErrorCode::kIo, "degraded result, nothing written: " + why);
    }
  }
  if (reads_settings(kind) && snapshot.export_config_error) return *snapshot.export_config_error;
  switch (kind) {
    case DocumentKind::kDump:
      return render_dump(snapshot, format);
    case DocumentKind::kMatrix:
      return render_matrix(snapshot, format, shared);
    case DocumentKind::kResourceSlices:
      return render_slices(snapshot, format, options, shared);
    case DocumentKind::kLabels:
      return render_labels(snapshot, format, options, shared);
    case DocumentKind::kNrt:
      return render_nrt(snapshot, format, shared);
    case DocumentKind::kShape:
      return render_shape(snapshot, format, shared);
  }
  return make_error(ErrorCode::kInvalid, "unknown document kind");
}

Result<void> render_to(const NodeSnapshot& snapshot, DocumentKind kind, std::string_view format,
                       const exporters::TextSink& sink, const RenderOptions& options) {
  if (kind == DocumentKind::kDump && format == "json") {
    // render() refuses nothing else for a dump (it shows a degraded discovery).
    if (auto checked = check_render(kind, format, options); !checked) return checked.error();
    exporters::write_json_model(snapshot.discovery.topology, snapshot.discovery.reports, sink);
    return {};
  }
  auto doc = render(snapshot, kind, format, options);
  if (!doc) return doc.error();
  sink(*doc);
  return {};
}

Result<std::vector<exporters::dra::ResourceSlice>> build_slices(const NodeSnapshot& s,
                                                                const RenderOptions& opts) {
  if (const std::string why = s.discovery.degraded(); !why.empty()) {
    return make_error(ErrorCode::kIo, "degraded result: " + why);
  }
  if (s.export_config_error) return *s.export_config_error;
  if (s.node_name.empty()) return make_error(ErrorCode::kInvalid, s.node_error);
  exporters::dra::SliceOptions o;
  o.node_name = s.node_name;
  o.node_uid = opts.node_uid;
  o.driver = !opts.driver.empty() ? opts.driver : s.export_config.driver.value_or("nodetopo.dev");
  o.generation = opts.generation;
  auto version = exporters::dra::parse_k8s_version(opts.k8s_version);
  if (!version) return version.error();
  o.version = version.value();
  if (s.export_config.sharing) o.sharing = *s.export_config.sharing;
  if (!opts.sharing.empty()) {
    auto mode = exporters::parse_sharing_mode(opts.sharing);
    if (!mode) return mode.error();
    o.sharing.mode = mode.value();
  }
  return exporters::dra::build_resource_slices(s.topology(), o);
}

}  // namespace nodetopo::core
