#include <algorithm>

#include <nodetopo/exporters/matrix.hpp>

#include "views/matrix_json.hpp"

namespace nodetopo::exporters {

namespace {

bool is_nic_function(const Topology& topo, NodeIndex index) {
  const Node& node = topo.node(index);
  if (node.kind != NodeKind::kPciDevice) return false;
  const auto& f = node.as<PciFunctionInfo>();
  if (f.is_virtual_function) return false;
  bool rdma = false;
  for (NodeIndex c : node.children) {
    const NodeKind kind = topo.node(c).kind;
    // An accelerator with its own network ports (Gaudi) is listed once, as an accelerator.
    if (kind == NodeKind::kAccelerator || kind == NodeKind::kNvSwitch) return false;
    rdma = rdma || kind == NodeKind::kRdmaDevice;
  }
  return rdma || (f.class_code >> 16) == 0x02;  // network controller (Ethernet, InfiniBand...)
}

template <class Info>
std::string first_child_name(const Topology& topo, NodeIndex index, NodeKind kind) {
  for (NodeIndex c : topo.node(index).children) {
    if (topo.node(c).kind == kind) return topo.node(c).as<Info>().name;
  }
  return {};
}

std::string legend_name(const MatrixDevice& d) {
  if (!d.rdma.empty()) return d.rdma;
  if (!d.netdev.empty()) return d.netdev;
  return d.pci;
}

}  // namespace

DeviceMatrix build_device_matrix(const Topology& topology) {
  DeviceMatrix m;
  std::vector<std::pair<PciAddress, NodeIndex>> gpus;
  for (NodeIndex i : topology.nodes_of_kind(NodeKind::kAccelerator)) {
    if (const auto f = pci_function_of(topology, i)) {
      gpus.emplace_back(topology.node(*f).as<PciFunctionInfo>().address, i);
    }
  }
  std::sort(gpus.begin(), gpus.end());
  std::vector<std::pair<PciAddress, NodeIndex>> nics;
  for (NodeIndex i = 0; i < topology.size(); ++i) {
    if (is_nic_function(topology, i)) {
      nics.emplace_back(topology.node(i).as<PciFunctionInfo>().address, i);
    }
  }
  std::sort(nics.begin(), nics.end());

  const RelationIndex relations(topology);
  std::unordered_map<std::string, std::uint32_t> gpu_memory_numa;
  for (NodeIndex i : topology.nodes_of_kind(NodeKind::kNumaNode)) {
    const auto& numa = topology.node(i).as<NumaInfo>();
    if (numa.device) gpu_memory_numa[numa.device->to_string()] = numa.os_index;
  }
  auto add = [&](const std::string& prefix, std::size_t n, NodeIndex node, const PciAddress& addr) {
    MatrixDevice d;
    d.name = prefix + std::to_string(n);
    d.kind = prefix == "GPU" ? "gpu" : "nic";
    d.node = node;
    d.pci = addr.to_string();
    if (const auto* a = topology.node(node).get_if<AcceleratorInfo>()) d.product = a->product;
    if (const auto* f = topology.node(node).get_if<PciFunctionInfo>()) {
      d.product = f->device_name;
      d.rdma = first_child_name<RdmaDeviceInfo>(topology, node, NodeKind::kRdmaDevice);
      d.netdev = first_child_name<NetDeviceInfo>(topology, node, NodeKind::kNetDevice);
    }
    d.cpu_affinity = relations.cpu_affinity(node).to_list();
    d.numa_affinity = relations.numa_affinity(node);
    if (d.kind == "gpu") {
      if (auto it = gpu_memory_numa.find(d.pci); it != gpu_memory_numa.end()) {
        d.gpu_numa_id = it->second;
      }
    }
    m.devices.push_back(std::move(d));
  };
  for (std::size_t i = 0; i < gpus.size(); ++i)
    add("GPU", i, gpus[i].second, gpus[i].first);
  for (std::size_t i = 0; i < nics.size(); ++i)
    add("NIC", i, nics[i].second, nics[i].first);

  m.cells.assign(m.devices.size(), std::vector<Relation>(m.devices.size()));
  for (std::size_t i = 0; i < m.devices.size(); ++i) {
    for (std::size_t j = 0; j < m.devices.size(); ++j) {
      m.cells[i][j] = relations.between(m.devices[i].node, m.devices[j].node);
    }
  }
  return m;
}

std::string render_matrix_text(const DeviceMatrix& m) {
  std::string out;
  for (const MatrixDevice& d : m.devices)
    out += "\t" + d.name;
  out += "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n";
  for (std::size_t i = 0; i < m.devices.size(); ++i) {
    const MatrixDevice& d = m.devices[i];
    out += d.name;
    for (const Relation& r : m.cells[i]) {
      const std::string label = r.label();
      out += "\t" + (label == "X" ? std::string(" X ") : label);
    }
    out += "\t" + (d.cpu_affinity.empty() ? std::string("N/A") : d.cpu_affinity);
    out += "\t" + (d.numa_affinity ? std::to_string(*d.numa_affinity) : std::string("N/A"));
    out += "\t\t" + (d.gpu_numa_id ? std::to_string(*d.gpu_numa_id) : std::string("N/A"));
    out += "\n";
  }
  out += R"(
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
  XGMI = Connection traversing AMD xGMI (Infinity Fabric) links
)";
  bool nic_header = false;
  for (const MatrixDevice& d : m.devices) {
    if (d.kind != "nic") continue;
    if (!nic_header) {
      out += "\nNIC Legend:\n\n";
      nic_header = true;
    }
    out += "  " + d.name + ": " + legend_name(d) + "\n";
  }
  return out;
}

void write_matrix_json(detail::JsonWriter& j, const DeviceMatrix& m) {
  j.begin_object();
  j.key("devices");
  j.begin_array();
  for (const MatrixDevice& d : m.devices) {
    j.begin_object();
    j.field("name", d.name);
    j.field("kind", d.kind);
    j.field("pci", d.pci);
    if (!d.product.empty()) j.field("product", d.product);
    if (d.kind == "nic") {
      if (!d.rdma.empty()) j.field("rdma", d.rdma);
      if (!d.netdev.empty()) j.field("netdev", d.netdev);
    }
    j.end_object();
  }
  j.end_array();
  // N^2 cells keyed by the same N names, with a handful of distinct labels: each name and
  // label is escaped once, not once per cell.
  std::vector<detail::JsonLiteral> names;
  names.reserve(m.devices.size());
  for (const MatrixDevice& d : m.devices)
    names.emplace_back(d.name);
  std::vector<std::pair<Relation, detail::JsonLiteral>> labels;
  // The reference is used at once: a later emplace_back may move the literals.
  auto label = [&labels](const Relation& r) -> const detail::JsonLiteral& {
    for (const auto& [relation, literal] : labels) {
      if (relation == r) return literal;
    }
    return labels.emplace_back(r, detail::JsonLiteral(r.label())).second;
  };
  j.key("cells");
  j.begin_object();
  for (std::size_t i = 0; i < m.devices.size(); ++i) {
    j.key(names[i]);
    j.begin_object();
    for (std::size_t k = 0; k < m.devices.size(); ++k)
      j.field(names[k], label(m.cells[i][k]));
    j.end_object();
  }
  j.end_object();
  j.key("cpu_affinity");
  j.begin_object();
  for (const MatrixDevice& d : m.devices)
    j.field(d.name, d.cpu_affinity);
  j.end_object();
  j.key("numa_affinity");
  j.begin_object();
  for (const MatrixDevice& d : m.devices) {
    j.field(d.name, d.numa_affinity ? std::to_string(*d.numa_affinity) : std::string("N/A"));
  }
  j.end_object();
  j.end_object();
}

std::string render_matrix_json(const DeviceMatrix& matrix) {
  detail::JsonWriter j;
  write_matrix_json(j, matrix);
  return j.take_with_newline();
}

}  // namespace nodetopo::exporters
