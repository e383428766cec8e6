#include <array>
#include <cstdio>

#include <nodetopo/exporters/json_model.hpp>
#include <nodetopo/exporters/matrix.hpp>

namespace nodetopo::exporters {

namespace {

using Json = nlohmann::ordered_json;

std::string hex4(std::uint32_t v) {
  std::array<char, 16> buf{};
  std::snprintf(buf.data(), buf.size(), "%04x", v);
  return buf.data();
}

std::string hex6(std::uint32_t v) {
  std::array<char, 16> buf{};
  std::snprintf(buf.data(), buf.size(), "%06x", v);
  return buf.data();
}

Json link_json(const PcieLink& link) {
  Json j = Json::object();
  if (link.speed_mts != 0) {
    j["speed_mts"] = link.speed_mts;
    j["generation"] = link.generation();
  }
  if (link.width != 0) j["width"] = link.width;
  return j;
}

// Optional fields are omitted rather than null: consumers test for presence.
template <class T>
void put_optional(Json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}

void put_nonempty(Json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
}

void put_payload(Json& j, const Node& node) {
  struct Visitor {
    Json& j;
    void operator()(const MachineInfo& m) const {
      put_nonempty(j, "architecture", m.architecture);
      put_nonempty(j, "product_name", m.product_name);
      put_nonempty(j, "board_vendor", m.board_vendor);
      put_nonempty(j, "os_release", m.os_release);
      j["memory_bytes"] = m.memory_bytes;
    }
    void operator()(const PackageInfo& p) const {
      j["os_index"] = p.os_index;
      j["cpus"] = p.cpus.to_list();
      j["cpu_count"] = p.cpus.count();
      put_nonempty(j, "cpu_vendor", p.cpu_vendor);
      put_nonempty(j, "cpu_model", p.cpu_model);
    }
    void operator()(const NumaInfo& n) const {
      j["os_index"] = n.os_index;
      j["cpus"] = n.cpus.to_list();
      j["cpu_count"] = n.cpus.count();
      j["memory_bytes"] = n.memory_bytes;
      put_nonempty(j, "subtype", n.subtype);
      if (n.device) j["device"] = n.device->to_string();
    }
    void operator()(const HostBridgeInfo& h) const {
      j["domain"] = hex4(h.domain);
      j["bus"] = h.bus;
      j["pcie_root"] = h.root_name;
      put_optional(j, "numa_node", h.numa_node);
    }
    void operator()(const PciFunctionInfo& f) const {
      j["address"] = f.address.to_string();
      j["vendor_id"] = hex4(f.vendor_id);
      j["device_id"] = hex4(f.device_id);
      j["subsystem_vendor_id"] = hex4(f.subsystem_vendor_id);
      j["subsystem_device_id"] = hex4(f.subsystem_device_id);
      j["class"] = hex6(f.class_code);
      put_optional(j, "revision", f.revision);
      put_nonempty(j, "vendor_name", f.vendor_name);
      put_nonempty(j, "device_name", f.device_name);
      put_nonempty(j, "class_name", f.class_name);
      put_nonempty(j, "driver", f.driver);
      put_optional(j, "numa_node", f.numa_node);
      if (!f.local_cpus.empty()) j["local_cpus"] = f.local_cpus.to_list();
      if (f.link_current.known()) j["link_current"] = link_json(f.link_current);
      if (f.link_max.known()) j["link_max"] = link_json(f.link_max);
      if (f.port_type) j["port_type"] = to_string(*f.port_type);
      put_optional(j, "secondary_bus", f.secondary_bus);
      put_optional(j, "subordinate_bus", f.subordinate_bus);
      j["pcie_root"] = f.pcie_root;
      j["sysfs_path"] = f.sysfs_path;
      if (f.is_virtual_function) j["virtual_function"] = true;
      if (f.physical_function) j["physical_function"] = f.physical_function->to_string();
      put_optional(j, "sriov_total_vfs", f.sriov_total_vfs);
      put_optional(j, "sriov_num_vfs", f.sriov_num_vfs);
    }
    void operator()(const AcceleratorInfo& a) const {
      j["vendor"] = to_string(a.vendor);
      put_nonempty(j, "product", a.product);
      put_nonempty(j, "architecture", a.architecture);
      put_nonempty(j, "uuid", a.uuid);
      put_nonempty(j, "serial", a.serial);
      if (a.memory_bytes != 0) j["memory_bytes"] = a.memory_bytes;
      put_nonempty(j, "driver_version", a.driver_version);
      put_optional(j, "index", a.index);
      put_nonempty(j, "fabric_cluster_uuid", a.fabric_cluster_uuid);
      put_optional(j, "fabric_clique_id", a.fabric_clique_id);
      if (a.partitions != 0) j["partitions"] = a.partitions;
      put_nonempty(j, "xgmi_hive_id", a.xgmi_hive_id);
    }
    void operator()(const NetDeviceInfo& n) const {
      j["name"] = n.name;
      put_nonempty(j, "mac", n.mac);
      put_optional(j, "mtu", n.mtu);
      put_optional(j, "speed_mbps", n.speed_mbps);
      put_nonempty(j, "operstate", n.operstate);
      put_nonempty(j, "driver", n.driver);
      put_nonempty(j, "link_type", n.link_type);
      if (n.is_virtual) j["virtual"] = true;
      put_nonempty(j, "physical_function_netdev", n.physical_function_netdev);
    }
    void operator()(const RdmaDeviceInfo& r) const {
      j["name"] = r.name;
      put_nonempty(j, "node_guid", r.node_guid);
      Json ports = Json::array();
      for (const RdmaPort& p : r.ports) {
        Json pj;
        pj["number"] = p.number;
        put_nonempty(pj, "state", p.state);
        put_nonempty(pj, "rate", p.rate);
        put_nonempty(pj, "link_layer", p.link_layer);
        put_nonempty(pj, "netdev", p.netdev);
        ports.push_back(std::move(pj));
      }
      j["ports"] = std::move(ports);
      if (r.is_virtual) j["virtual"] = true;
    }
  };
  std::visit(Visitor{j}, node.payload);
}

Json node_json(const Topology& topo, NodeIndex index) {
  const Node& node = topo.node(index);
  Json j;
  j["id"] = node.id;
  j["kind"] = to_string(node.kind);
  put_payload(j, node);
  if (!node.children.empty()) {
    Json kids = Json::array();
    for (NodeIndex child : node.children)
      kids.push_back(node_json(topo, child));
    j["children"] = std::move(kids);
  }
  return j;
}

}  // namespace

nlohmann::ordered_json model_to_json(const Topology& topology,
                                     std::span<const ProbeReport> reports) {
  Json doc;
  doc["schema_version"] = kModelSchemaVersion;
  doc["machine"] = node_json(topology, 0);
  Json links = Json::array();
  for (const Link& link : topology.links()) {
    Json lj;
    lj["kind"] = to_string(link.kind);
    lj["from"] = topology.node(link.from).id;
    lj["to"] = topology.node(link.to).id;
    lj["value"] = link.value;
    if (link.bandwidth_mbps != 0) lj["bandwidth_mbps"] = link.bandwidth_mbps;
    links.push_back(std::move(lj));
  }
  doc["links"] = std::move(links);
  doc["relations"] = matrix_to_json(build_device_matrix(topology));
  Json probes = Json::array();
  for (const ProbeReport& r : reports) {
    Json pj;
    pj["name"] = r.probe;
    pj["status"] = to_string(r.status);
    if (!r.error.empty()) pj["error"] = r.error;
    if (!r.warnings.empty()) pj["warnings"] = r.warnings;
    probes.push_back(std::move(pj));
  }
  doc["probes"] = std::move(probes);
  return doc;
}

std::string render_json_model(const Topology& topology, std::span<const ProbeReport> reports) {
  // Strings come from the host (DMI, CPU model, pci.ids): replace invalid UTF-8 instead of
  // throwing.
  return model_to_json(topology, reports).dump(2, ' ', false, Json::error_handler_t::replace) +
         "\n";
}

}  // namespace nodetopo::exporters
