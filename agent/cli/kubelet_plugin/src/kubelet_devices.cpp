// Adapter: one core snapshot of the opened host -> the exporters' slice devices ->
// kubelet::NodeDevice, with the device nodes a container needs, read from the same host root.
#include "kubelet_devices.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <nodetopo/core/snapshot.hpp>
#include <nodetopo/kube/render.hpp>
#include <nodetopo/probes/sys_root.hpp>

namespace nodetopo::cli {

namespace {

/// "gpu-0000-1b-00-0" -> "0000:1b:00.0" (the exporters name devices by PCI address).
std::string bus_id_of(const std::string& name) {
  const std::size_t dash = name.find('-');
  std::string a = dash == std::string::npos ? name : name.substr(dash + 1);  // 0000-1b-00-0
  if (a.size() != 12) return {};
  return a.substr(0, 4) + ":" + a.substr(5, 2) + ":" + a.substr(8, 2) + "." + a.substr(11, 1);
}

/// RDMA device -> its verbs devices ("uverbs3"), as rdma-core finds them.
std::map<std::string, std::vector<std::string>> verbs_devices(const probes::SysRoot& root) {
  std::map<std::string, std::vector<std::string>> out;
  auto rdma = root.list_dir("sys/class/infiniband");
  if (!rdma) return out;
  for (const std::string& dev : *rdma) {
    auto verbs = root.list_dir("sys/class/infiniband/" + dev + "/device/infiniband_verbs");
    if (!verbs) continue;
    for (const std::string& v : *verbs)
      if (v.rfind("uverbs", 0) == 0) out[dev].push_back(v);
    std::sort(out[dev].begin(), out[dev].end());
  }
  return out;
}

kubelet::NodeDevice to_node_device(const nlohmann::json& d,
                                   const std::map<std::string, std::vector<std::string>>& verbs) {
  kubelet::NodeDevice n;
  n.name = d.value("name", "");
  n.slice_device = d;
  const std::string type = n.string_attribute("type").value_or("");
  n.kind = type == "nic"   ? kubelet::DeviceKind::kNic
           : type == "gpu" ? kubelet::DeviceKind::kGpu
                           : kubelet::DeviceKind::kAccelerator;
  n.pci_bus_id = n.string_attribute("resource.kubernetes.io/pciBusID").value_or(bus_id_of(n.name));
  n.vendor = n.string_attribute("vendor").value_or("");
  n.uuid = n.string_attribute("uuid").value_or("");
  n.netdev = n.string_attribute("ifName").value_or("");
  n.rdma_device = n.string_attribute("rdmaDevice").value_or("");
  if (n.kind == kubelet::DeviceKind::kNic && !n.rdma_device.empty()) {
    if (auto it = verbs.find(n.rdma_device); it != verbs.end())
      for (const std::string& v : it->second)
        n.device_nodes.push_back("/dev/infiniband/" + v);
    n.device_nodes.push_back("/dev/infiniband/rdma_cm");
  }
  return n;
}

}  // namespace

kubelet::DeviceSource make_kubelet_device_source(const core::OpenedHost& host, std::string node,
                                                 std::string driver) {
  auto lock = std::make_shared<std::mutex>();
  return [&host, lock, node, driver]() -> Result<kubelet::NodeDevices> {
    // take_snapshot is one-at-a-time per host; the plugin may ask from its gRPC threads.
    const std::lock_guard<std::mutex> guard(*lock);
    core::SnapshotOptions snap_options;
    snap_options.node_name = node;
    snap_options.with_digest = false;
    snap_options.reopen_root = true;  // hot-plugged devices, a swapped symlinked root
    auto snapshot = core::take_snapshot(host, snap_options);
    if (!snapshot) return snapshot.error();
    if (snapshot->export_config_error) return *snapshot->export_config_error;
    // The verbs devices through a fresh root too (the host's own root caches resolved paths).
    auto root = host.root().reopen();
    if (!root) return root.error();
    const auto verbs = verbs_devices(*root);
    kube::RenderOptions options;
    options.node_name = node;
    options.driver = driver;
    options.labels = false;
    options.nrt = false;
    if (snapshot->export_config.sharing) options.sharing = *snapshot->export_config.sharing;
    // A mock host (--mock, or a root built by `topo mock build`) has no device files.
    const bool mock = host.is_mock() || root->exists("nodetopo-mock");
    auto topology = std::make_shared<const Topology>(std::move(snapshot->discovery.topology));
    kube::ServerInfo newest;
    newest.major = 1;
    newest.minor = 36;
    auto docs = kube::render_documents(*topology, options, newest);
    if (!docs) return docs.error();
    kubelet::NodeDevices out;
    std::map<std::string, int> per_vendor;
    for (const nlohmann::json& slice : docs->slices.value_or(std::vector<nlohmann::json>{})) {
      for (const nlohmann::json& d : slice["spec"].value("devices", nlohmann::json::array())) {
        kubelet::NodeDevice n = to_node_device(d, verbs);
        n.mock = mock;
        if (n.kind != kubelet::DeviceKind::kNic) {
          // Device order is PCI order, which is the vendor drivers' minor-number order.
          const int index = per_vendor[n.vendor]++;
          n.vendor_index = index;
          if (n.vendor == "nvidia") {
            n.device_nodes = {"/dev/nvidia" + std::to_string(index), "/dev/nvidiactl",
                              "/dev/nvidia-uvm"};
          } else if (n.vendor == "amd") {
            n.device_nodes = {"/dev/kfd", "/dev/dri/renderD" + std::to_string(128 + index)};
          }
        }
        out.devices.push_back(std::move(n));
      }
    }
    out.render_slices =
        [topology, options](const kube::ServerInfo& server) -> Result<std::vector<nlohmann::json>> {
      auto rendered = kube::render_documents(*topology, options, server);
      if (!rendered) return rendered.error();
      return rendered->slices.value_or(std::vector<nlohmann::json>{});
    };
    return out;
  };
}

}  // namespace nodetopo::cli
