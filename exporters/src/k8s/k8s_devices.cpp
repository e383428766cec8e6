#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>

#include <nodetopo/base/hex.hpp>
#include <nodetopo/exporters/k8s_devices.hpp>
#include <nodetopo/topology/relations.hpp>
#include <nodetopo/topology/shape.hpp>

namespace nodetopo::exporters {

namespace {

std::string address_label(const PciAddress& a) {
  std::string s = a.to_string();
  std::replace(s.begin(), s.end(), ':', '-');
  std::replace(s.begin(), s.end(), '.', '-');
  return s;
}

bool has_child_of_kind(const Topology& topo, NodeIndex index, NodeKind kind) {
  const auto& kids = topo.node(index).children;
  return std::any_of(kids.begin(), kids.end(),
                     [&](NodeIndex c) { return topo.node(c).kind == kind; });
}

// Same rule as `topo matrix`: network class or an RDMA device, never a VF, and never the
// function of an accelerator (Gaudi's on-die ports belong to the accelerator).
bool is_nic_function(const Topology& topo, NodeIndex index) {
  const Node& node = topo.node(index);
  if (node.kind != NodeKind::kPciDevice) return false;
  const auto& f = node.as<PciFunctionInfo>();
  if (f.is_virtual_function) return false;
  if (has_child_of_kind(topo, index, NodeKind::kAccelerator)) return false;
  return (f.class_code >> 16) == 0x02 || has_child_of_kind(topo, index, NodeKind::kRdmaDevice);
}

// "400 Gb/sec (4X NDR)" -> 400000 Mb/s.
std::optional<std::uint64_t> rate_to_mbps(const std::string& rate) {
  double value = 0;
  char unit[8] = {};
  if (std::sscanf(rate.c_str(), "%lf %7[GMT]", &value, unit) < 2 || value <= 0) {
    return std::nullopt;
  }
  double mbps = value;
  if (unit[0] == 'G') mbps *= 1000;
  if (unit[0] == 'T') mbps *= 1000000;
  return static_cast<std::uint64_t>(mbps + 0.5);
}

// Connected components of accelerators over one link kind (NVSwitches join their GPUs).
std::map<NodeIndex, std::string> fabric_domains(const Topology& topo, LinkKind kind,
                                                std::string_view node_name) {
  std::vector<NodeIndex> parent(topo.size());
  std::iota(parent.begin(), parent.end(), NodeIndex{0});
  std::function<NodeIndex(NodeIndex)> find = [&](NodeIndex x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  };
  std::vector<bool> linked(topo.size(), false);
  for (const Link& link : topo.links()) {
    if (link.kind != kind || link.value <= 0) continue;
    linked[link.from] = linked[link.to] = true;
    parent[find(link.from)] = find(link.to);
  }
  std::map<NodeIndex, std::vector<std::string>> members;  // root -> accelerator addresses
  for (NodeIndex i : topo.nodes_of_kind(NodeKind::kAccelerator)) {
    if (!linked[i]) continue;
    const auto f = pci_function_of(topo, i);
    members[find(i)].push_back(f ? topo.node(*f).as<PciFunctionInfo>().address.to_string()
                                 : topo.node(i).id);
  }
  std::map<NodeIndex, std::string> ids;
  for (auto& [root, addresses] : members) {
    std::sort(addresses.begin(), addresses.end());
    std::string seed = std::string(to_string(kind)) + "|" + std::string(node_name);
    for (const auto& a : addresses)
      seed += "|" + a;
    ids[root] = "local-" + sha256_hex(seed).substr(0, 12);
  }
  std::map<NodeIndex, std::string> out;
  for (NodeIndex i : topo.nodes_of_kind(NodeKind::kAccelerator)) {
    if (linked[i]) out[i] = ids[find(i)];
  }
  return out;
}

template <class Info>
const Info* first_child(const Topology& topo, NodeIndex index, NodeKind kind) {
  for (NodeIndex c : topo.node(index).children) {
    if (topo.node(c).kind == kind) return &topo.node(c).as<Info>();
  }
  return nullptr;
}

}  // namespace

std::string_view to_string(K8sDeviceType type) {
  switch (type) {
    case K8sDeviceType::kGpu:
      return "gpu";
    case K8sDeviceType::kAccelerator:
      return "accelerator";
    case K8sDeviceType::kNic:
      return "nic";
  }
  return "nic";
}

std::string pci_vendor_short_name(std::uint16_t vendor_id) {
  switch (vendor_id) {
    case 0x10de:
      return "nvidia";
    case 0x1002:
      return "amd";
    case 0x8086:
      return "intel";
    case 0x1da3:
      return "habana";
    case 0x15b3:
      return "mellanox";
    case 0x14e4:
      return "broadcom";
    case 0x1077:
      return "qlogic";
    case 0x1137:
      return "cisco";
    case 0x1af4:
      return "virtio";
    case 0x1bcf:
      return "nec";
    case 0x1924:
      return "solarflare";
    case 0x19e5:
      return "huawei";
    case 0x1d0f:
      return "amazon";
    case 0x8088:
      return "wangxun";
    case 0x10ee:
      return "xilinx";
    case 0x1fc9:
      return "tehuti";
    case 0x177d:
      return "cavium";
    default:
      break;
  }
  return to_hex(vendor_id, 4);
}

std::vector<K8sDevice> collect_k8s_devices(const Topology& topology, std::string_view node_name) {
  const RelationIndex relations(topology);
  const auto nvlink = fabric_domains(topology, LinkKind::kNvLink, node_name);
  const auto xgmi = fabric_domains(topology, LinkKind::kXgmi, node_name);

  auto fill_common = [&](K8sDevice& d) {
    d.pci = &topology.node(d.function).as<PciFunctionInfo>();
    d.numa_node = relations.numa_affinity(d.node);
    if (const auto unit = nearest_bridge_unit(topology, d.function)) {
      if (const auto* f = topology.node(*unit).get_if<PciFunctionInfo>()) {
        d.pcie_switch = f->address.to_string();
      }
    }
  };

  std::vector<K8sDevice> accels;
  for (NodeIndex i : topology.nodes_of_kind(NodeKind::kAccelerator)) {
    const auto function = pci_function_of(topology, i);
    if (!function) continue;  // not on PCI: nothing to publish it by
    K8sDevice d;
    d.node = i;
    d.function = *function;
    d.accelerator = &topology.node(i).as<AcceleratorInfo>();
    const AcceleratorVendor v = d.accelerator->vendor;
    d.type = (v == AcceleratorVendor::kNvidia || v == AcceleratorVendor::kAmd ||
              v == AcceleratorVendor::kIntel)
                 ? K8sDeviceType::kGpu
                 : K8sDeviceType::kAccelerator;
    fill_common(d);
    d.name = std::string(d.type == K8sDeviceType::kGpu ? "gpu-" : "accel-") +
             address_label(d.pci->address);
    if (!d.accelerator->fabric_cluster_uuid.empty()) {
      d.nvlink_domain = d.accelerator->fabric_cluster_uuid + "." +
                        std::to_string(d.accelerator->fabric_clique_id.value_or(0));
    } else if (auto it = nvlink.find(i); it != nvlink.end()) {
      d.nvlink_domain = it->second;
    }
    if (auto it = xgmi.find(i); it != xgmi.end()) d.xgmi_domain = it->second;
    accels.push_back(std::move(d));
  }
  std::sort(accels.begin(), accels.end(),
            [](const K8sDevice& a, const K8sDevice& b) { return a.pci->address < b.pci->address; });

  std::vector<K8sDevice> nics;
  for (NodeIndex i = 0; i < topology.size(); ++i) {
    if (!is_nic_function(topology, i)) continue;
    K8sDevice d;
    d.type = K8sDeviceType::kNic;
    d.node = i;
    d.function = i;
    fill_common(d);
    d.name = "nic-" + address_label(d.pci->address);
    if (const auto* rdma = first_child<RdmaDeviceInfo>(topology, i, NodeKind::kRdmaDevice)) {
      d.rdma_device = rdma->name;
      for (const RdmaPort& port : rdma->ports) {
        if (d.link_layer.empty()) d.link_layer = port.link_layer;
        if (!d.speed_mbps && port.state == "ACTIVE") d.speed_mbps = rate_to_mbps(port.rate);
      }
    }
    if (const auto* net = first_child<NetDeviceInfo>(topology, i, NodeKind::kNetDevice)) {
      d.if_name = net->name;
      if (net->speed_mbps && *net->speed_mbps > 0) d.speed_mbps = net->speed_mbps;
    }
    nics.push_back(std::move(d));
  }
  std::sort(nics.begin(), nics.end(),
            [](const K8sDevice& a, const K8sDevice& b) { return a.pci->address < b.pci->address; });

  accels.insert(accels.end(), std::make_move_iterator(nics.begin()),
                std::make_move_iterator(nics.end()));
  return accels;
}

}  // namespace nodetopo::exporters
