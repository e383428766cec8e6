// Today's implementation over SysRoot + probes::discover + the exporters (see the header).
#include "snapshot_source.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>

#include <nlohmann/json.hpp>

#include <nodetopo/exporters/dot.hpp>
#include <nodetopo/exporters/export_config.hpp>
#include <nodetopo/exporters/json_model.hpp>
#include <nodetopo/exporters/k8s_names.hpp>
#include <nodetopo/exporters/matrix.hpp>
#include <nodetopo/exporters/node_labels.hpp>
#include <nodetopo/exporters/nrt.hpp>
#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/exporters/text_tree.hpp>
#include <nodetopo/exporters/yaml_emit.hpp>
#include <nodetopo/mock/builder.hpp>
#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/log.hpp>
#include <nodetopo/probes/sys_root.hpp>
#include <nodetopo/topology/shape.hpp>

namespace nodetopo::daemon {

namespace {

using Json = nlohmann::ordered_json;

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return std::isspace(c) == 0; };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// As `topo export` resolves it: the configured name, then NODE_NAME (read once at start), then
// the hostname under the root, lower-cased.
void resolve_node_name(const std::string& configured, const probes::SysRoot& root, Snapshot& s) {
  std::string name = configured;
  if (name.empty()) {
    for (const char* file : {"proc/sys/kernel/hostname", "etc/hostname"}) {
      if (auto text = root.read_file(file, 4096)) {
        name = trim(text.value());
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (!name.empty()) break;
      }
    }
  }
  if (name.empty()) {
    s.node_error =
        "cannot tell the node name: set node_name in the agent config or NODE_NAME (the root "
        "has no proc/sys/kernel/hostname or etc/hostname)";
    return;
  }
  if (std::string why = exporters::k8s::check_dns_subdomain(name, 253); !why.empty()) {
    s.node_error = "node name: " + why;
    return;
  }
  s.node_name = name;
}

class HostSnapshotSource final : public SnapshotSource {
 public:
  HostSnapshotSource(std::string root, probes::SysRoot::Liveness liveness,
                     std::optional<mock::TempHost> mock_host, std::string nvml_library,
                     std::string node_name)
      : root_(std::move(root)),
        liveness_(liveness),
        mock_host_(std::move(mock_host)),
        nvml_library_(std::move(nvml_library)),
        node_name_(std::move(node_name)) {}

  [[nodiscard]] std::string describe() const override { return root_; }

  Result<Snapshot> take() override {
    const auto started = std::chrono::steady_clock::now();
    // A fresh SysRoot per snapshot: its cache never invalidates, and the host may have changed.
    auto root = probes::SysRoot::open(root_, liveness_);
    if (!root) return root.error();
    probes::ProbeOptions options;
    options.nvml_library = nvml_library_;
    probes::Discovery d = probes::discover(root.value(), options);

    Snapshot s;
    s.reports = d.reports;
    resolve_node_name(node_name_, root.value(), s);
    const Topology& t = d.topology;
    const std::string canonical = exporters::render_json_model(t, {});
    s.documents["dump/json"] = exporters::render_json_model(t, d.reports);
    s.documents["dump/text"] = exporters::render_text_tree(t, d.reports);
    s.documents["dump/dot"] = exporters::render_dot(t);
    const exporters::DeviceMatrix matrix = exporters::build_device_matrix(t);
    s.documents["matrix/text"] = exporters::render_matrix_text(matrix);
    s.documents["matrix/json"] = exporters::render_matrix_json(matrix);

    std::string settings_text;
    exporters::ExportConfig settings;
    std::string settings_error;
    const std::string settings_path(exporters::kExportConfigPath);
    if (root->exists(settings_path)) {
      auto text = root->read_file(settings_path);
      if (!text) {
        settings_error = text.error().describe();
      } else {
        settings_text = text.value();
        auto parsed = exporters::parse_export_config(settings_text, root->host_path(settings_path));
        if (!parsed) {
          settings_error = parsed.error().describe();
        } else {
          settings = std::move(parsed.value());
        }
      }
    }
    render_exports(t, settings, settings_error, s);

    const ShapeFingerprint shape = compute_shape(t);
    s.shape = shape.hash;
    {
      Json j;
      j["shape"] = shape.hash;
      j["sha256"] = shape.sha256;
      j["description"] = shape.description;
      s.documents["shape/json"] = j.dump(2) + "\n";
      s.documents["shape/text"] = "shape: " + shape.hash + "\nsha256: " + shape.sha256 +
                                  "\n\ndescription (the sha256 covers these lines exactly):\n" +
                                  shape.description;
    }
    for (std::size_t i = 0; i < t.size(); ++i) {
      ++s.devices[std::string(to_string(t.node(static_cast<NodeIndex>(i)).kind))];
    }
    std::string digest_input = canonical;
    digest_input += '\0';
    digest_input += s.node_name;
    digest_input += '\0';
    digest_input += settings_text;
    s.digest = sha256_hex(digest_input);
    s.duration = std::chrono::steady_clock::now() - started;
    return s;
  }

 private:
  // The documents of `topo export`, with its defaults (k8s 1.34, pool generation 1, no expiry).
  static void render_exports(const Topology& t, const exporters::ExportConfig& settings,
                             const std::string& settings_error, Snapshot& s) {
    const auto fail_all = [&](std::initializer_list<const char*> keys, const std::string& why) {
      for (const char* k : keys)
        s.document_errors[k] = why;
    };
    if (!settings_error.empty()) {
      fail_all({"resourceslices/yaml", "resourceslices/json", "labels/plain", "labels/nfd",
                "labels/patch", "labels/nodefeature", "nrt/yaml", "nrt/json"},
               settings_error);
      return;
    }
    if (s.node_name.empty()) {
      fail_all({"resourceslices/yaml", "resourceslices/json", "labels/nodefeature", "nrt/yaml",
                "nrt/json"},
               s.node_error);
    } else {
      exporters::dra::SliceOptions o;
      o.node_name = s.node_name;
      o.driver = settings.driver.value_or("nodetopo.dev");
      if (settings.sharing) o.sharing = *settings.sharing;
      auto slices = exporters::dra::build_resource_slices(t, o);
      if (!slices) {
        fail_all({"resourceslices/yaml", "resourceslices/json"}, slices.error().describe());
      } else {
        s.documents["resourceslices/yaml"] = exporters::dra::render_slices_yaml(*slices);
        s.documents["resourceslices/json"] = exporters::dra::render_slices_json(*slices);
      }
      auto nrt = exporters::render_nrt(t, s.node_name);
      if (!nrt) {
        fail_all({"nrt/yaml", "nrt/json"}, nrt.error().describe());
      } else {
        s.documents["nrt/json"] = nrt->dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
        s.documents["nrt/yaml"] = exporters::to_yaml(nrt.value());
      }
    }
    const exporters::LabelMap labels = exporters::compute_labels(t);
    if (const auto problems = exporters::validate_labels(labels); !problems.empty()) {
      std::string message = "invalid labels:";
      for (const auto& p : problems)
        message += "\n  " + p;
      fail_all({"labels/plain", "labels/nfd", "labels/patch", "labels/nodefeature"}, message);
      return;
    }
    s.documents["labels/plain"] = exporters::render_labels_plain(labels);
    s.documents["labels/nfd"] = exporters::render_labels_nfd(labels, "");
    s.documents["labels/patch"] = exporters::render_labels_patch(labels);
    if (!s.node_name.empty()) {
      auto object = exporters::labels_to_nodefeature(labels, s.node_name, "");
      if (!object) {
        s.document_errors["labels/nodefeature"] = object.error().describe();
      } else {
        s.documents["labels/nodefeature"] = exporters::to_yaml(object.value());
      }
    }
  }

  std::string root_;
  probes::SysRoot::Liveness liveness_;
  std::optional<mock::TempHost> mock_host_;
  std::string nvml_library_;
  std::string node_name_;
};

}  // namespace

const std::vector<std::string>& document_keys() {
  static const std::vector<std::string> keys = {"dump/text",
                                                "dump/json",
                                                "dump/dot",
                                                "matrix/text",
                                                "matrix/json",
                                                "resourceslices/yaml",
                                                "resourceslices/json",
                                                "labels/plain",
                                                "labels/nfd",
                                                "labels/patch",
                                                "labels/nodefeature",
                                                "nrt/yaml",
                                                "nrt/json",
                                                "shape/text",
                                                "shape/json"};
  return keys;
}

Result<std::unique_ptr<SnapshotSource>> open_snapshot_source(const AgentConfig& config) {
  using Liveness = probes::SysRoot::Liveness;
  std::optional<mock::TempHost> host;
  std::string root = config.host_root;
  Liveness liveness = Liveness::kAuto;
  if (!config.mock_profile.empty()) {
    auto built = mock::TempHost::create(config.mock_profile);
    if (!built) return built.error();
    host = std::move(built.value());
    root = host->root().string();
    liveness = Liveness::kCapture;
  } else if (root.empty()) {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read once at start, before any thread
    const char* env = std::getenv("HOST_ROOT");
    root = (env != nullptr && *env != '\0') ? env : "/";
    liveness = Liveness::kLive;
  }
  auto opened = probes::SysRoot::open(root, liveness);
  if (!opened) return opened.error();

  std::string nvml_library;
  // A mock host (--mock, or a directory made by `topo mock build`) carries its NVML fixture: read
  // it through the mock library, as the CLI does. The fixture path goes through the root path, so
  // a root that is a symbolic link swapped to another host brings that host's fixture along.
  if (!opened->is_live() && opened->exists(mock::kNvmlFixtureFile)) {
    nvml_library = mock::nvml_library_path();
    if (!nvml_library.empty()) {
      const std::string fixture =
          (std::filesystem::path(root) / std::string(mock::kNvmlFixtureFile)).string();
      // NOLINTNEXTLINE(concurrency-mt-unsafe): once, before the worker thread starts
      ::setenv(std::string(mock::kNvmlFixtureEnv).c_str(), fixture.c_str(), 1);
    } else {
      component_logger("agent")->warn(
          "mock NVML library not found next to topo: NVLink facts of the mock host stay unknown");
    }
  }

  std::string node_name = config.node_name;
  if (node_name.empty()) {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read once at start, before any thread
    if (const char* env = std::getenv("NODE_NAME"); env != nullptr && *env != '\0') node_name = env;
  }
  return std::unique_ptr<SnapshotSource>(std::make_unique<HostSnapshotSource>(
      root, liveness, std::move(host), std::move(nvml_library), std::move(node_name)));
}

}  // namespace nodetopo::daemon
