// The plugin process: claims read through the kube client, the DRA plugin, and optionally the
// Publisher of our slices filtered by the publish policy against the node's other drivers.
#include <mutex>
#include <set>
#include <thread>

#include <spdlog/spdlog.h>

#include <nodetopo/kube/api_client.hpp>
#include <nodetopo/kube/publisher.hpp>
#include <nodetopo/kubelet/plugin.hpp>
#include <nodetopo/kubelet/publish_policy.hpp>
#include <nodetopo/kubelet/runner.hpp>

namespace nodetopo::kubelet {

namespace {

/// Claims are read on the gRPC threads, one at a time (DriverState serialises them), through one
/// ApiClient guarded by a mutex: the client belongs to whichever thread holds it.
class ClaimClient {
 public:
  explicit ClaimClient(const kube::ClientConfig& client) : api_(client, options()) {}

  Result<nlohmann::json> read(const ClaimRef& ref) {
    kube::ApiRequest req;
    req.path = "/apis/resource.k8s.io/v1/namespaces/" + kube::percent_encode(ref.name_space) +
               "/resourceclaims/" + kube::percent_encode(ref.name);
    req.verb = "get";
    req.resource = "resourceclaims";
    std::lock_guard lock(mutex_);
    const kube::ApiResponse resp = api_.call(req);
    const std::string what = "ResourceClaim " + ref.name_space + "/" + ref.name;
    if (resp.status == 404) return make_error(ErrorCode::kNotFound, what + " not found");
    if (!resp.ok())
      return make_error(ErrorCode::kIo, "reading " + what + " from " + api_.config().server + ": " +
                                            resp.message());
    nlohmann::json j = resp.json();
    if (!j.is_object()) return make_error(ErrorCode::kMalformed, what + ": answer is not JSON");
    return j;
  }

 private:
  static kube::ClientOptions options() {
    kube::ClientOptions o;
    o.max_retries = 3;  // the kubelet retries a failed prepare itself
    o.backoff_initial = std::chrono::milliseconds(200);
    o.user_agent = "nodetopo-kubelet-plugin";
    return o;
  }
  std::mutex mutex_;
  kube::ApiClient api_;
};

/// The node's slices of every driver, read every `poll`: the input of the `auto` policy.
std::optional<std::set<std::string>> read_foreign(kube::ApiClient& api, const PluginConfig& c) {
  kube::ApiRequest req;
  req.path = "/apis/resource.k8s.io/v1/resourceslices";
  req.query = kube::encode_query({{"fieldSelector", "spec.nodeName=" + c.node_name}});
  req.verb = "list";
  req.resource = "resourceslices";
  const kube::ApiResponse resp = api.call(req);
  if (!resp.ok()) {
    spdlog::warn("listing the ResourceSlices of node {}: {}", c.node_name, resp.message());
    return std::nullopt;
  }
  const nlohmann::json list = resp.json();
  std::vector<nlohmann::json> items;
  if (list.contains("items") && list["items"].is_array())
    for (const auto& i : list["items"])
      items.push_back(i);
  return foreign_pci_bus_ids(items, c.driver);
}

void publish(kube::Publisher& publisher, const PluginConfig& config, const NodeDevices& devices,
             const std::set<std::string>& foreign) {
  const std::set<std::string> keep = devices_to_publish(devices.devices, config.policy, foreign);
  auto render = devices.render_slices;
  publisher.update(
      {config.node_name, [render, keep](const kube::ServerInfo& server) -> Result<kube::Documents> {
         auto slices = render(server);
         if (!slices) return slices.error();
         kube::Documents docs;
         docs.slices = filter_slices(*slices, keep);
         return docs;
       }});
}

}  // namespace

int run_plugin(const PluginConfig& config, const kube::ClientConfig& client, DeviceSource devices,
               const std::atomic<bool>& stop) {
  auto claims = std::make_shared<ClaimClient>(client);
  auto state = DriverState::create(config, std::move(devices),
                                   [claims](const ClaimRef& ref) { return claims->read(ref); });
  if (!state) {
    spdlog::error("kubelet plugin: {}", state.error().describe());
    return 1;
  }
  const NodeDevices node = (*state)->devices();
  auto plugin = Plugin::start(config, std::move(*state));
  if (!plugin) {
    spdlog::error("kubelet plugin: {}", plugin.error().describe());
    return 1;
  }
  spdlog::info("DRA driver {} on node {}: {} device(s); registration {}, DRA {}", config.driver,
               config.node_name, node.devices.size(), config.registration_socket(),
               config.dra_socket());

  std::unique_ptr<kube::Publisher> publisher;
  std::unique_ptr<kube::ApiClient> lister;
  std::optional<std::set<std::string>> foreign;
  if (config.publish && node.render_slices) {
    kube::PublisherConfig pc;
    pc.client = client;
    pc.driver = config.driver;
    pc.label_mode = kube::LabelMode::kNone;
    pc.publish_nrt = false;
    publisher = std::make_unique<kube::Publisher>(pc);
    lister = std::make_unique<kube::ApiClient>(client, kube::ClientOptions{});
  }
  auto next_poll = std::chrono::steady_clock::now();
  while (!stop.load()) {
    if (publisher && std::chrono::steady_clock::now() >= next_poll) {
      next_poll = std::chrono::steady_clock::now() + config.foreign_slice_poll;
      // Until the first list succeeds nothing is published: publishing a device another
      // driver owns, even briefly, could let the scheduler hand it out twice.
      if (auto now = read_foreign(*lister, config); now && now != foreign) {
        foreign = std::move(now);
        spdlog::info("publish policy: {} PCI function(s) published by other drivers",
                     foreign->size());
        publish(*publisher, config, (*plugin)->state().devices(), *foreign);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (publisher) publisher->stop();
  (*plugin)->stop();
  spdlog::info("kubelet plugin stopped: {}", (*plugin)->health().describe());
  return 0;
}

}  // namespace nodetopo::kubelet
