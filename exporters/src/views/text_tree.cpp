#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include <nodetopo/base/hex.hpp>
#include <nodetopo/exporters/text_tree.hpp>

namespace nodetopo::exporters {

namespace {

std::string describe_pci(const Node& node) {
  const auto& f = node.as<PciFunctionInfo>();
  std::string line = f.address.to_string();
  if (node.kind == NodeKind::kPciBridge) {
    line += " PCI bridge";
    if (f.port_type) line += " (" + std::string(to_string(*f.port_type)) + ")";
    if (f.secondary_bus) {
      std::array<char, 32> buf{};
      std::snprintf(buf.data(), buf.size(), " [bus %02x-%02x]", *f.secondary_bus,
                    f.subordinate_bus.value_or(*f.secondary_bus));
      line += buf.data();
    }
  } else if (!f.class_name.empty()) {
    line += " " + f.class_name;
  } else {
    std::array<char, 32> buf{};
    std::snprintf(buf.data(), buf.size(), " class %06x", f.class_code);
    line += buf.data();
  }
  line += ": ";
  if (!f.vendor_name.empty() || !f.device_name.empty()) {
    line += f.vendor_name;
    if (!f.device_name.empty()) line += (f.vendor_name.empty() ? "" : " ") + f.device_name;
    line += " ";
  }
  line += "[" + to_hex(f.vendor_id, 4) + ":" + to_hex(f.device_id, 4) + "]";
  if (f.link_current.known()) {
    line += " " + f.link_current.to_string();
    if (f.link_max.known() && !(f.link_max == f.link_current)) {
      line += " (max " + f.link_max.to_string() + ")";
    }
  }
  if (!f.driver.empty()) line += " driver=" + f.driver;
  if (f.numa_node) line += " numa=" + std::to_string(*f.numa_node);
  if (f.is_virtual_function) line += " vf";
  return line;
}

std::string describe(const Node& node) {
  switch (node.kind) {
    case NodeKind::kMachine: {
      const auto& m = node.as<MachineInfo>();
      std::string line = "Machine";
      if (!m.architecture.empty()) line += " " + m.architecture;
      if (!m.product_name.empty()) line += " \"" + m.product_name + "\"";
      if (m.memory_bytes != 0) line += " " + format_bytes(m.memory_bytes);
      return line;
    }
    case NodeKind::kPackage: {
      const auto& p = node.as<PackageInfo>();
      std::string line = "Package " + std::to_string(p.os_index);
      if (!p.cpu_model.empty()) line += ": " + p.cpu_model;
      line += " (cpus " + p.cpus.to_list() + ")";
      return line;
    }
    case NodeKind::kNumaNode: {
      const auto& n = node.as<NumaInfo>();
      std::string line = "NUMA node " + std::to_string(n.os_index);
      if (!n.subtype.empty()) line += " (" + n.subtype + ")";
      line += ": " + format_bytes(n.memory_bytes);
      line += n.cpus.empty() ? ", no CPUs" : ", cpus " + n.cpus.to_list();
      if (n.device) line += ", memory of " + n.device->to_string();
      return line;
    }
    case NodeKind::kHostBridge: {
      const auto& h = node.as<HostBridgeInfo>();
      return "Host bridge " + h.root_name;
    }
    case NodeKind::kPciBridge:
    case NodeKind::kPciDevice:
      return describe_pci(node);
    case NodeKind::kAccelerator:
    case NodeKind::kNvSwitch: {
      const auto& a = node.as<AcceleratorInfo>();
      std::string line = node.kind == NodeKind::kNvSwitch ? "NVSwitch" : "Accelerator";
      if (a.index) line += " " + std::to_string(*a.index);
      line += ": " + std::string(to_string(a.vendor));
      if (!a.product.empty()) line += " " + a.product;
      if (a.memory_bytes != 0) line += ", " + format_bytes(a.memory_bytes);
      if (!a.uuid.empty()) line += ", " + a.uuid;
      return line;
    }
    case NodeKind::kNetDevice: {
      const auto& n = node.as<NetDeviceInfo>();
      std::string line = "Net " + n.name;
      if (!n.mac.empty()) line += " " + n.mac;
      if (n.speed_mbps) line += " " + std::to_string(*n.speed_mbps) + " Mb/s";
      if (!n.operstate.empty()) line += " " + n.operstate;
      return line;
    }
    case NodeKind::kRdmaDevice: {
      const auto& r = node.as<RdmaDeviceInfo>();
      std::string line = "RDMA " + r.name;
      for (const RdmaPort& p : r.ports) {
        line += " port" + std::to_string(p.number) + "=" + p.state;
        if (!p.rate.empty()) line += " (" + p.rate + ")";
      }
      return line;
    }
  }
  return node.id;
}

void render_node(const Topology& topo, NodeIndex index, int depth, std::string& out) {
  out.append(static_cast<std::size_t>(depth) * 2, ' ');
  out += describe(topo.node(index));
  out += '\n';
  for (NodeIndex child : topo.node(index).children)
    render_node(topo, child, depth + 1, out);
}

void render_distances(const Topology& topo, std::string& out) {
  const std::vector<NodeIndex> numa = topo.nodes_of_kind(NodeKind::kNumaNode);
  bool any = false;
  for (const Link& l : topo.links())
    any = any || l.kind == LinkKind::kNumaDistance;
  if (!any || numa.empty()) return;
  std::vector<std::uint32_t> ids;
  for (NodeIndex i : numa)
    ids.push_back(topo.node(i).as<NumaInfo>().os_index);
  std::sort(ids.begin(), ids.end());
  out += "\nNUMA distances:\n      ";
  std::array<char, 32> buf{};
  for (std::uint32_t id : ids) {
    std::snprintf(buf.data(), buf.size(), " %5u", id);
    out += buf.data();
  }
  out += '\n';
  for (std::uint32_t from : ids) {
    std::snprintf(buf.data(), buf.size(), "%6u", from);
    out += buf.data();
    for (std::uint32_t to : ids) {
      const auto d = topo.numa_distance(from, to);
      if (d) {
        std::snprintf(buf.data(), buf.size(), " %5lld", static_cast<long long>(*d));
      } else {
        std::snprintf(buf.data(), buf.size(), " %5s", "-");
      }
      out += buf.data();
    }
    out += '\n';
  }
}

// NVLink and xGMI links, one line per directed link as the probes reported it.
void render_fabric_links(const Topology& topo, std::string& out) {
  bool header = false;
  for (const Link& l : topo.links()) {
    if (l.kind == LinkKind::kNumaDistance) continue;
    if (!header) {
      out += "\nFabric links:\n";
      header = true;
    }
    out += "  " + topo.node(l.from).id + " -> " + topo.node(l.to).id + ": ";
    out += (l.kind == LinkKind::kNvLink ? "NVLink x" : "xGMI x") + std::to_string(l.value);
    if (l.bandwidth_mbps != 0) out += ", " + std::to_string(l.bandwidth_mbps) + " MB/s";
    out += "\n";
  }
}

}  // namespace

std::string format_bytes(std::uint64_t bytes) {
  constexpr std::array<const char*, 6> kUnits{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  // Tenths of the unit, in integers, so output does not depend on floating-point formatting.
  std::uint64_t whole = bytes;
  std::uint64_t rem = 0;
  while (whole >= 1024 && unit + 1 < kUnits.size()) {
    rem = whole % 1024;
    whole /= 1024;
    ++unit;
  }
  std::uint64_t tenth = (rem * 10 + 512) / 1024;
  if (tenth >= 10) {  // 1023.96 KiB rounds to 1024 KiB: that is 1 MiB
    ++whole;
    tenth = 0;
    if (whole == 1024 && unit + 1 < kUnits.size()) {
      whole = 1;
      ++unit;
    }
  }
  std::string out = std::to_string(whole);
  if (tenth != 0) out += "." + std::to_string(tenth);
  return out + " " + kUnits[unit];
}

std::string render_text_tree(const Topology& topology, std::span<const ProbeReport> reports) {
  std::string out;
  render_node(topology, 0, 0, out);
  render_distances(topology, out);
  render_fabric_links(topology, out);
  bool header = false;
  for (const ProbeReport& r : reports) {
    if (r.status == ProbeStatus::kOk) continue;
    if (!header) {
      out += "\nProbes:\n";
      header = true;
    }
    out += "  " + r.probe + ": " + std::string(to_string(r.status));
    if (!r.error.empty()) out += ": " + r.error;
    if (!r.warnings.empty()) out += " (" + std::to_string(r.warnings.size()) + " warnings)";
    out += '\n';
    for (const std::string& w : r.warnings)
      out += "    " + w + "\n";
  }
  return out;
}

}  // namespace nodetopo::exporters
