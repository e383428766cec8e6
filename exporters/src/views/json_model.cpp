#include <array>
#include <cstdio>

#include <nodetopo/base/hex.hpp>
#include <nodetopo/exporters/json_model.hpp>
#include <nodetopo/exporters/matrix.hpp>

#include "views/json_writer.hpp"
#include "views/matrix_json.hpp"

namespace nodetopo::exporters {

namespace {

using detail::JsonKey;
using detail::JsonWriter;

void write_link(JsonWriter& j, const PcieLink& link) {
  j.begin_object();
  if (link.speed_mts != 0) {
    j.field("speed_mts", link.speed_mts);
    j.field("generation", link.generation());
  }
  if (link.width != 0) j.field("width", link.width);
  j.end_object();
}

// Optional fields are omitted rather than null: consumers test for presence.
template <class T>
void put_optional(JsonWriter& j, JsonKey key, const std::optional<T>& value) {
  if (value) j.field(key, *value);
}

void put_nonempty(JsonWriter& j, JsonKey key, const std::string& value) {
  if (!value.empty()) j.field(key, value);
}

// IDs and addresses are formatted on the stack: thousands of them, each a std::string otherwise.
void put_hex(JsonWriter& j, JsonKey key, std::uint32_t value, int width) {
  std::array<char, 16> buf{};  // a 32-bit value has 8 digits, widths here are at most 6
  j.field(key, std::string_view(buf.data(), write_hex(buf.data(), value, width)));
}

void put_address(JsonWriter& j, JsonKey key, const PciAddress& address) {
  std::array<char, PciAddress::kMaxTextSize> buf{};
  j.field(key, std::string_view(buf.data(), address.to_chars(buf.data())));
}

void put_payload(JsonWriter& j, const Node& node) {
  struct Visitor {
    JsonWriter& j;
    void operator()(const MachineInfo& m) const {
      put_nonempty(j, "architecture", m.architecture);
      put_nonempty(j, "product_name", m.product_name);
      put_nonempty(j, "board_vendor", m.board_vendor);
      put_nonempty(j, "os_release", m.os_release);
      j.field("memory_bytes", m.memory_bytes);
    }
    void operator()(const PackageInfo& p) const {
      j.field("os_index", p.os_index);
      j.field("cpus", p.cpus.to_list());
      j.field("cpu_count", p.cpus.count());
      put_nonempty(j, "cpu_vendor", p.cpu_vendor);
      put_nonempty(j, "cpu_model", p.cpu_model);
    }
    void operator()(const NumaInfo& n) const {
      j.field("os_index", n.os_index);
      j.field("cpus", n.cpus.to_list());
      j.field("cpu_count", n.cpus.count());
      j.field("memory_bytes", n.memory_bytes);
      put_nonempty(j, "subtype", n.subtype);
      if (n.device) put_address(j, "device", *n.device);
    }
    void operator()(const HostBridgeInfo& h) const {
      put_hex(j, "domain", h.domain, 4);
      j.field("bus", h.bus);
      j.field("pcie_root", h.root_name);
      put_optional(j, "numa_node", h.numa_node);
    }
    void operator()(const PciFunctionInfo& f) const {
      put_address(j, "address", f.address);
      put_hex(j, "vendor_id", f.vendor_id, 4);
      put_hex(j, "device_id", f.device_id, 4);
      put_hex(j, "subsystem_vendor_id", f.subsystem_vendor_id, 4);
      put_hex(j, "subsystem_device_id", f.subsystem_device_id, 4);
      put_hex(j, "class", f.class_code, 6);
      put_optional(j, "revision", f.revision);
      put_nonempty(j, "vendor_name", f.vendor_name);
      put_nonempty(j, "device_name", f.device_name);
      put_nonempty(j, "class_name", f.class_name);
      put_nonempty(j, "driver", f.driver);
      put_optional(j, "numa_node", f.numa_node);
      if (!f.local_cpus.empty()) j.field("local_cpus", f.local_cpus.to_list());
      if (f.link_current.known()) {
        j.key("link_current");
        write_link(j, f.link_current);
      }
      if (f.link_max.known()) {
        j.key("link_max");
        write_link(j, f.link_max);
      }
      if (f.port_type) j.field("port_type", to_string(*f.port_type));
      put_optional(j, "secondary_bus", f.secondary_bus);
      put_optional(j, "subordinate_bus", f.subordinate_bus);
      j.field("pcie_root", f.pcie_root);
      j.field("sysfs_path", f.sysfs_path);
      if (f.is_virtual_function) j.field("virtual_function", true);
      if (f.physical_function) put_address(j, "physical_function", *f.physical_function);
      put_optional(j, "sriov_total_vfs", f.sriov_total_vfs);
      put_optional(j, "sriov_num_vfs", f.sriov_num_vfs);
    }
    void operator()(const AcceleratorInfo& a) const {
      j.field("vendor", to_string(a.vendor));
      put_nonempty(j, "product", a.product);
      put_nonempty(j, "architecture", a.architecture);
      put_nonempty(j, "uuid", a.uuid);
      put_nonempty(j, "serial", a.serial);
      if (a.memory_bytes != 0) j.field("memory_bytes", a.memory_bytes);
      put_nonempty(j, "driver_version", a.driver_version);
      put_optional(j, "index", a.index);
      put_nonempty(j, "fabric_cluster_uuid", a.fabric_cluster_uuid);
      put_optional(j, "fabric_clique_id", a.fabric_clique_id);
      if (a.partitions != 0) j.field("partitions", a.partitions);
      put_nonempty(j, "xgmi_hive_id", a.xgmi_hive_id);
    }
    void operator()(const NetDeviceInfo& n) const {
      j.field("name", n.name);
      put_nonempty(j, "mac", n.mac);
      put_optional(j, "mtu", n.mtu);
      put_optional(j, "speed_mbps", n.speed_mbps);
      put_nonempty(j, "operstate", n.operstate);
      put_nonempty(j, "driver", n.driver);
      put_nonempty(j, "link_type", n.link_type);
      if (n.is_virtual) j.field("virtual", true);
      put_nonempty(j, "physical_function_netdev", n.physical_function_netdev);
    }
    void operator()(const RdmaDeviceInfo& r) const {
      j.field("name", r.name);
      put_nonempty(j, "node_guid", r.node_guid);
      j.key("ports");
      j.begin_array();
      for (const RdmaPort& p : r.ports) {
        j.begin_object();
        j.field("number", p.number);
        put_nonempty(j, "state", p.state);
        put_nonempty(j, "rate", p.rate);
        put_nonempty(j, "link_layer", p.link_layer);
        put_nonempty(j, "netdev", p.netdev);
        j.end_object();
      }
      j.end_array();
      if (r.is_virtual) j.field("virtual", true);
    }
  };
  std::visit(Visitor{j}, node.payload);
}

void write_node(JsonWriter& j, const Topology& topo, NodeIndex index) {
  const Node& node = topo.node(index);
  j.begin_object();
  j.field("id", node.id);
  j.field("kind", to_string(node.kind));
  put_payload(j, node);
  if (!node.children.empty()) {
    j.key("children");
    j.begin_array();
    for (NodeIndex child : node.children)
      write_node(j, topo, child);
    j.end_array();
  }
  j.end_object();
}

// The document up to its closing brace; the caller ends it (a newline) as it keeps it.
void write_model(JsonWriter& j, const Topology& topology, const DeviceMatrix& matrix,
                 std::span<const ProbeReport> reports) {
  j.begin_object();
  j.field("schema_version", kModelSchemaVersion);
  j.key("machine");
  write_node(j, topology, 0);
  j.key("links");
  j.begin_array();
  for (const Link& link : topology.links()) {
    j.begin_object();
    j.field("kind", to_string(link.kind));
    j.field("from", topology.node(link.from).id);
    j.field("to", topology.node(link.to).id);
    j.field("value", link.value);
    if (link.bandwidth_mbps != 0) j.field("bandwidth_mbps", link.bandwidth_mbps);
    j.end_object();
  }
  j.end_array();
  j.key("relations");
  write_matrix_json(j, matrix);
  j.key("probes");
  j.begin_array();
  for (const ProbeReport& r : reports) {
    j.begin_object();
    j.field("name", r.probe);
    j.field("status", to_string(r.status));
    if (!r.error.empty()) j.field("error", r.error);
    if (!r.warnings.empty()) {
      j.key("warnings");
      j.begin_array();
      for (const std::string& w : r.warnings)
        j.value(w);
      j.end_array();
    }
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

}  // namespace

std::string render_json_model(const Topology& topology, std::span<const ProbeReport> reports) {
  const DeviceMatrix matrix = build_device_matrix(topology);
  JsonWriter j;
  // About 1.4 KiB of JSON per node and 24 bytes per relation cell (a 64-GPU node: 1.9 MB + 0.4
  // MB): reserving a little more spares the copies of a doubling buffer.
  const std::size_t cells = matrix.devices.size() * matrix.devices.size();
  j.reserve(topology.size() * 1536 + cells * 32);
  write_model(j, topology, matrix, reports);
  return j.take_with_newline();
}

void write_json_model(const Topology& topology, std::span<const ProbeReport> reports,
                      const TextSink& sink) {
  const DeviceMatrix matrix = build_device_matrix(topology);
  JsonWriter j(sink);
  write_model(j, topology, matrix, reports);
  j.finish();
}

}  // namespace nodetopo::exporters
