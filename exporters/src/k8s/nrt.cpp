#include <map>

#include <nodetopo/exporters/k8s_devices.hpp>
#include <nodetopo/exporters/k8s_names.hpp>
#include <nodetopo/exporters/nrt.hpp>

namespace nodetopo::exporters {

namespace {

using Json = nlohmann::ordered_json;

Json resource(std::string_view name, const std::string& amount) {
  return Json{{"allocatable", amount},
              {"available", amount},
              {"capacity", amount},
              {"name", std::string(name)}};
}

}  // namespace

std::string_view accelerator_resource_name(AcceleratorVendor vendor) {
  switch (vendor) {
    case AcceleratorVendor::kNvidia:
      return "nvidia.com/gpu";
    case AcceleratorVendor::kAmd:
      return "amd.com/gpu";
    case AcceleratorVendor::kIntel:
      return "gpu.intel.com/i915";
    case AcceleratorVendor::kHabana:
      return "habana.ai/gaudi";
    case AcceleratorVendor::kOther:
      return {};
  }
  return {};
}

Result<Json> render_nrt(const Topology& topology, std::string_view node_name) {
  if (std::string why = k8s::check_dns_subdomain(node_name, 253); !why.empty()) {
    return make_error(ErrorCode::kInvalid, "node name: " + why);
  }
  std::vector<const NumaInfo*> zones;
  for (NodeIndex i : topology.nodes_of_kind(NodeKind::kNumaNode)) {
    const auto& numa = topology.node(i).as<NumaInfo>();
    if (!numa.device) zones.push_back(&numa);
  }
  // Accelerators per NUMA node and resource name.
  std::map<std::uint32_t, std::map<std::string, std::uint64_t>> accel;
  for (const K8sDevice& d : collect_k8s_devices(topology, node_name)) {
    if (d.accelerator == nullptr || !d.numa_node) continue;
    const std::string_view name = accelerator_resource_name(d.accelerator->vendor);
    if (!name.empty()) ++accel[*d.numa_node][std::string(name)];
  }

  Json zone_list = Json::array();
  for (const NumaInfo* z : zones) {
    Json zone;
    Json costs = Json::array();
    for (const NumaInfo* other : zones) {
      if (const auto d = topology.numa_distance(z->os_index, other->os_index)) {
        costs.push_back(Json{{"name", "node-" + std::to_string(other->os_index)}, {"value", *d}});
      }
    }
    if (!costs.empty()) zone["costs"] = std::move(costs);
    zone["name"] = "node-" + std::to_string(z->os_index);
    Json resources = Json::array();
    resources.push_back(resource("cpu", std::to_string(z->cpus.count())));
    resources.push_back(resource("memory", k8s::format_binary_quantity(z->memory_bytes)));
    if (auto it = accel.find(z->os_index); it != accel.end()) {
      for (const auto& [name, count] : it->second) {
        resources.push_back(resource(name, std::to_string(count)));
      }
    }
    zone["resources"] = std::move(resources);
    zone["type"] = "Node";
    zone_list.push_back(std::move(zone));
  }

  Json j;
  j["apiVersion"] = "topology.node.k8s.io/v1alpha2";
  j["kind"] = "NodeResourceTopology";
  j["metadata"] = Json{{"name", std::string(node_name)}};
  // Deprecated in v1alpha2 but required by its CRD; the kubelet's policy is not nodetopo's to
  // know, so the list is empty.
  j["topologyPolicies"] = Json::array();
  j["zones"] = std::move(zone_list);
  return j;
}

}  // namespace nodetopo::exporters
