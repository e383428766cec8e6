#include <nodetopo/exporters/hami.hpp>
#include <nodetopo/exporters/node_labels.hpp>
#include <nodetopo/exporters/nrt.hpp>
#include <nodetopo/kube/render.hpp>

namespace nodetopo::kube {

std::optional<exporters::dra::K8sVersion> slice_version_for(const ServerInfo& server) {
  if (server.major != 1 || server.minor < 34) {
    if (server.major > 1) return exporters::dra::K8sVersion::k1_36;
    return std::nullopt;
  }
  if (server.minor >= 36) return exporters::dra::K8sVersion::k1_36;
  if (server.minor == 35) return exporters::dra::K8sVersion::k1_35;
  return exporters::dra::K8sVersion::k1_34;
}

Result<Documents> render_documents(const Topology& topology, const RenderOptions& options,
                                   const ServerInfo& server) {
  Documents docs;
  if (options.slices) {
    if (const auto version = slice_version_for(server)) {
      exporters::dra::SliceOptions o;
      o.node_name = options.node_name;
      o.driver = options.driver;
      o.version = *version;
      o.sharing = options.sharing;
      auto slices = exporters::dra::build_resource_slices(topology, o);
      if (!slices) return slices.error();
      std::vector<nlohmann::json> out;
      for (const auto& s : slices.value()) {
        // ordered_json -> json: the publisher compares objects, where key order must not matter.
        out.push_back(nlohmann::json::parse(exporters::dra::slice_to_json(s).dump()));
      }
      docs.slices = std::move(out);
    }
  }
  if (options.labels) {
    const exporters::LabelMap labels = exporters::compute_labels(
        topology, exporters::choose_instance_labels(options.instance, server.node_labels));
    docs.labels = std::map<std::string, std::string>(labels.begin(), labels.end());
  }
  if (options.nrt) {
    auto nrt = exporters::render_nrt(topology, options.node_name);
    if (!nrt) return nrt.error();
    docs.nrt = nlohmann::json::parse(nrt.value().dump());
  }
  if (options.hami) {
    auto hami = exporters::render_hami(topology, *options.hami);
    if (!hami) return hami.error();
    HamiNodeState state;
    // A node without a GPU HAMi could use gets nothing; one whose GPUs went away is told so.
    state.annotations[std::string(exporters::kHamiRegisterAnnotation)] = hami->register_json;
    if (options.hami->score) {
      state.annotations[std::string(exporters::kHamiScoreAnnotation)] = hami->score_json;
    } else {
      state.remove_annotations.emplace_back(exporters::kHamiScoreAnnotation);
    }
    state.resources[options.hami->resource_name] = std::to_string(hami->gpu_count);
    docs.hami = std::move(state);
  }
  return docs;
}

}  // namespace nodetopo::kube
