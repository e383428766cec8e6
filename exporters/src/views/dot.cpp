#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <nodetopo/exporters/dot.hpp>
#include <nodetopo/exporters/matrix.hpp>
#include <nodetopo/exporters/text_tree.hpp>
#include <nodetopo/topology/relations.hpp>

namespace nodetopo::exporters {

namespace {

// DOT string literal: quotes and backslashes escaped, control characters dropped.
std::string dot_quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) >= 0x20) {
      out += c;
    }
  }
  return out + "\"";
}

bool is_shown_function(const Topology& topo, NodeIndex index) {
  const Node& node = topo.node(index);
  if (node.kind != NodeKind::kPciDevice) return false;
  for (NodeIndex c : node.children) {
    const NodeKind k = topo.node(c).kind;
    if (k == NodeKind::kAccelerator || k == NodeKind::kNvSwitch || k == NodeKind::kRdmaDevice) {
      return true;
    }
  }
  const auto& f = node.as<PciFunctionInfo>();
  if (f.is_virtual_function) return false;
  const std::uint32_t base = f.class_code >> 16;
  // Storage, network, display, processing accelerators: what matters for placement.
  return base == 0x01 || base == 0x02 || base == 0x03 || base == 0x0b || base == 0x12;
}

class DotWriter {
 public:
  explicit DotWriter(const Topology& topo) : topo_(topo), matrix_(build_device_matrix(topo)) {
    for (const MatrixDevice& d : matrix_.devices)
      device_name_[d.node] = d.name;
    mark_shown(0);
  }

  std::string render() {
    out_ += "digraph nodetopo {\n";
    out_ += "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11, nodesep=0.25];\n";
    out_ +=
        "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", "
        "fontname=\"Helvetica\", fontsize=10];\n";
    out_ += "  edge [color=\"#888888\", arrowhead=none];\n";
    emit_children(0, 1);
    emit_fabric_links();
    out_ += "}\n";
    return out_;
  }

 private:
  // A node is drawn when it leads to a shown device; containers only as clusters.
  bool mark_shown(NodeIndex index) {
    bool shown = is_shown_function(topo_, index);
    for (NodeIndex c : topo_.node(index).children)
      shown = mark_shown(c) || shown;
    if (shown) shown_.insert(index);
    return shown;
  }

  static std::string indent(int depth) {
    return std::string(static_cast<std::size_t>(depth) * 2, ' ');
  }

  // The drawn node a PCI bridge stands for: a switch's downstream ports fold into the switch.
  NodeIndex drawn(NodeIndex index) const {
    const Node& n = topo_.node(index);
    if (n.kind == NodeKind::kPciBridge) return bridge_unit(topo_, index);
    return index;
  }

  void emit_children(NodeIndex parent, int depth) {
    for (NodeIndex c : topo_.node(parent).children) {
      if (shown_.contains(c)) emit(c, depth);
    }
  }

  void emit(NodeIndex index, int depth) {
    const Node& n = topo_.node(index);
    switch (n.kind) {
      case NodeKind::kPackage: {
        const auto& p = n.as<PackageInfo>();
        out_ += indent(depth) + "subgraph " + dot_quote("cluster_" + n.id) + " {\n";
        out_ += indent(depth + 1) + "label=" +
                dot_quote("Package " + std::to_string(p.os_index) +
                          (p.cpu_model.empty() ? "" : "\n" + p.cpu_model)) +
                ";\n";
        out_ += indent(depth + 1) + "style=\"rounded\"; color=\"#555555\";\n";
        emit_children(index, depth + 1);
        out_ += indent(depth) + "}\n";
        return;
      }
      case NodeKind::kNumaNode: {
        const auto& nn = n.as<NumaInfo>();
        std::string label =
            "NUMA node " + std::to_string(nn.os_index) + " · " + format_bytes(nn.memory_bytes);
        if (!nn.cpus.empty()) label += "\ncpus " + nn.cpus.to_list();
        out_ += indent(depth) + "subgraph " + dot_quote("cluster_" + n.id) + " {\n";
        out_ += indent(depth + 1) + "label=" + dot_quote(label) + ";\n";
        out_ += indent(depth + 1) +
                "style=\"rounded,filled\"; fillcolor=\"#f3f6fa\"; color=\"#6b8db5\";\n";
        emit_children(index, depth + 1);
        out_ += indent(depth) + "}\n";
        return;
      }
      case NodeKind::kHostBridge:
        declare(index, "Host bridge\n" + n.as<HostBridgeInfo>().root_name,
                "shape=ellipse, fillcolor=\"#e8e8e8\"", depth);
        break;
      case NodeKind::kPciBridge: {
        const NodeIndex unit = drawn(index);
        if (unit == index) {
          const auto& f = n.as<PciFunctionInfo>();
          const auto role = bridge_role(topo_, index);
          const std::string what = role == PciePortType::kRootPort       ? "Root port"
                                   : role == PciePortType::kUpstreamPort ? "PCIe switch"
                                                                         : "PCI bridge";
          std::string label = what + "\n" + f.address.to_string();
          if (!f.vendor_name.empty()) label += "\n" + f.vendor_name;
          if (f.link_current.known()) label += "\n" + f.link_current.to_string();
          declare(index, label,
                  role == PciePortType::kUpstreamPort ? "fillcolor=\"#fff2cc\""
                                                      : "fillcolor=\"#f5f5f5\"",
                  depth);
        }
        break;
      }
      case NodeKind::kPciDevice:
        declare_device(index, depth);
        break;
      default:
        break;
    }
    // PCI edges: from the drawn node of the parent to this node's drawn node.
    const NodeIndex parent = n.parent;
    if (n.is_pci() || n.kind == NodeKind::kHostBridge) {
      if (n.is_pci() && parent != kNoNode) {
        const NodeIndex from = drawn(parent);
        const NodeIndex to = drawn(index);
        if (from != to && edges_.insert({from, to}).second) {
          out_ += indent(depth) + dot_quote(topo_.node(from).id) + " -> " +
                  dot_quote(topo_.node(to).id) + ";\n";
        }
      }
      emit_children(index, depth);
    }
  }

  void declare(NodeIndex index, const std::string& label, const std::string& attrs, int depth) {
    out_ += indent(depth) + dot_quote(topo_.node(index).id) + " [label=" + dot_quote(label) +
            (attrs.empty() ? "" : ", " + attrs) + "];\n";
  }

  void declare_device(NodeIndex index, int depth) {
    const auto& f = topo_.node(index).as<PciFunctionInfo>();
    std::string label;
    std::string attrs = "fillcolor=\"#ffffff\"";
    for (NodeIndex c : topo_.node(index).children) {
      const Node& child = topo_.node(c);
      if (child.kind == NodeKind::kAccelerator) {
        const auto& a = child.as<AcceleratorInfo>();
        label = (device_name_.contains(c) ? device_name_.at(c) + " " : std::string()) +
                (a.product.empty() ? f.device_name : a.product);
        if (a.memory_bytes != 0) label += "\n" + format_bytes(a.memory_bytes);
        attrs = "fillcolor=\"#d9ead3\", penwidth=2";
      } else if (child.kind == NodeKind::kNvSwitch) {
        label = "NVSwitch";
        attrs = "fillcolor=\"#cfe2f3\"";
      }
    }
    if (label.empty()) {
      const std::string nic = device_name_.contains(index) ? device_name_.at(index) + " " : "";
      label = nic + (f.device_name.empty() ? f.class_name : f.device_name);
      std::vector<std::string> names;
      for (NodeIndex c : topo_.node(index).children) {
        const Node& child = topo_.node(c);
        if (const auto* r = child.get_if<RdmaDeviceInfo>()) names.push_back(r->name);
        if (const auto* nd = child.get_if<NetDeviceInfo>()) names.push_back(nd->name);
      }
      if (!names.empty()) {
        label += "\n";
        for (std::size_t i = 0; i < names.size(); ++i)
          label += (i ? " / " : "") + names[i];
      }
      if (!nic.empty()) attrs = "fillcolor=\"#fce5cd\"";
    }
    label += "\n" + f.address.to_string();
    if (f.link_current.known()) label += " · " + f.link_current.to_string();
    declare(index, label, attrs, depth);
  }

  // NVLink/xGMI between devices: one undirected edge per pair, drawn between PCI functions.
  void emit_fabric_links() {
    std::map<std::pair<NodeIndex, NodeIndex>, std::pair<LinkKind, std::int64_t>> pairs;
    for (const Link& link : topo_.links()) {
      if (link.kind == LinkKind::kNumaDistance) continue;
      const auto a = pci_function_of(topo_, link.from);
      const auto b = pci_function_of(topo_, link.to);
      if (!a || !b || *a == *b) continue;
      const auto key = std::minmax(*a, *b);
      auto& entry = pairs[{key.first, key.second}];
      entry.first = link.kind;
      entry.second = std::max(entry.second, link.value);
    }
    for (const auto& [pair, info] : pairs) {
      const bool nvlink = info.first == LinkKind::kNvLink;
      out_ += "  " + dot_quote(topo_.node(pair.first).id) + " -> " +
              dot_quote(topo_.node(pair.second).id) +
              " [label=" + dot_quote((nvlink ? "NV" : "xGMI ") + std::to_string(info.second)) +
              ", color=" + (nvlink ? "\"#6aa84f\"" : "\"#cc0000\"") +
              ", fontcolor=" + (nvlink ? "\"#38761d\"" : "\"#990000\"") +
              ", penwidth=1.5, constraint=false];\n";
    }
  }

  const Topology& topo_;
  DeviceMatrix matrix_;
  std::map<NodeIndex, std::string> device_name_;
  std::set<NodeIndex> shown_;
  std::set<std::pair<NodeIndex, NodeIndex>> edges_;
  std::string out_;
};

}  // namespace

std::string render_dot(const Topology& topology) {
  return DotWriter(topology).render();
}

}  // namespace nodetopo::exporters
