#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include <nodetopo/base/hex.hpp>
#include <nodetopo/base/sha256.hpp>
#include <nodetopo/topology/shape.hpp>

namespace nodetopo {

namespace {

// ---------------------------------------------------------------------------------------------
// Normalised description

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out + "\"";
}

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// Firmware and the kernel reserve a few percent of DRAM, and how much varies between boots and
// kernels; rounding the reported size UP to an 8 GiB step recovers the installed DIMM total
// (itself a multiple of 8 GiB on servers) far from any rounding boundary.
std::uint64_t dram_gib(std::uint64_t bytes) {
  if (bytes == 0) return 0;
  const std::uint64_t gib = (bytes + kGiB - 1) / kGiB;
  if (gib <= 8) return gib;
  return (gib + 7) / 8 * 8;
}

std::uint64_t device_gib(std::uint64_t bytes) {
  return (bytes + kGiB - 1) / kGiB;
}

std::string link_text(const PcieLink& link) {
  if (!link.known()) return {};
  std::string out = " link=";
  const int gen = link.generation();
  out += gen > 0 ? "gen" + std::to_string(gen) : "gen?";
  if (link.width != 0) out += "x" + std::to_string(link.width);
  return out;
}

class ShapeWriter {
 public:
  explicit ShapeWriter(const Topology& topo) : topo_(topo), key_(topo.size()) {
    for (const Link& link : topo.links()) {
      if (link.kind != LinkKind::kNumaDistance) {
        linked_.insert(link.from);
        linked_.insert(link.to);
      }
    }
    compute_key(0);
  }

  std::string describe() {
    std::string out(kShapeFormat);
    out += '\n';
    assign_tags(0);
    write_tree(0, 0, out);
    write_distances(out);
    write_links(out);
    return out;
  }

 private:
  // Nodes that say nothing about the hardware's shape: SR-IOV virtual functions (a software
  // setting) and virtual network interfaces.
  [[nodiscard]] bool included(NodeIndex i) const {
    const Node& n = topo_.node(i);
    if (const auto* f = n.get_if<PciFunctionInfo>()) return !f->is_virtual_function;
    if (const auto* net = n.get_if<NetDeviceInfo>()) return !net->is_virtual;
    return true;
  }

  [[nodiscard]] std::string label(NodeIndex i) const {
    const Node& n = topo_.node(i);
    switch (n.kind) {
      case NodeKind::kMachine:
        return "machine arch=" + n.as<MachineInfo>().architecture;
      case NodeKind::kPackage: {
        const auto& p = n.as<PackageInfo>();
        return "package pus=" + std::to_string(p.cpus.count()) + " cpu=" + quote(p.cpu_model);
      }
      case NodeKind::kNumaNode: {
        const auto& m = n.as<NumaInfo>();
        std::string out =
            "numa " + std::to_string(m.os_index) + " pus=" + std::to_string(m.cpus.count()) +
            " mem=" +
            std::to_string(m.device ? device_gib(m.memory_bytes) : dram_gib(m.memory_bytes)) +
            "GiB";
        if (!m.subtype.empty()) out += " type=" + quote(m.subtype);
        if (m.device) out += " device-memory";
        return out;
      }
      case NodeKind::kHostBridge:
        return "hostbridge";
      case NodeKind::kPciBridge:
      case NodeKind::kPciDevice: {
        const auto& f = n.as<PciFunctionInfo>();
        return std::string(n.kind == NodeKind::kPciBridge ? "bridge " : "device ") +
               to_hex(f.vendor_id, 4) + ":" + to_hex(f.device_id, 4) +
               " class=" + to_hex(f.class_code >> 8, 4) + link_text(f.link_max);
      }
      case NodeKind::kAccelerator:
      case NodeKind::kNvSwitch: {
        const auto& a = n.as<AcceleratorInfo>();
        std::string out = n.kind == NodeKind::kAccelerator ? "accelerator " : "nvswitch ";
        out += std::string(to_string(a.vendor)) + " " + quote(a.product);
        if (a.memory_bytes != 0)
          out += " mem=" + std::to_string(device_gib(a.memory_bytes)) + "GiB";
        if (a.partitions != 0) out += " partitions=" + std::to_string(a.partitions);
        return out;
      }
      case NodeKind::kNetDevice:
        return "net type=" + n.as<NetDeviceInfo>().link_type;
      case NodeKind::kRdmaDevice: {
        const auto& r = n.as<RdmaDeviceInfo>();
        std::string out = "rdma ports=" + std::to_string(r.ports.size());
        for (const RdmaPort& p : r.ports)
          out += " " + p.link_layer;
        return out;
      }
    }
    return "unknown";
  }

  // Structural key of a subtree: its label and its children's keys in sorted order. Used only to
  // order siblings independently of bus numbers.
  const std::string& compute_key(NodeIndex i) {
    std::vector<NodeIndex> kids;
    for (NodeIndex c : topo_.node(i).children) {
      if (included(c)) kids.push_back(c);
    }
    for (NodeIndex c : kids)
      compute_key(c);
    // Stable: equal subtrees keep the model's (hardware) order.
    std::stable_sort(kids.begin(), kids.end(),
                     [&](NodeIndex a, NodeIndex b) { return key_[a] < key_[b]; });
    std::string key = label(i) + "{";
    for (NodeIndex c : kids)
      key += key_[c] + ";";
    key += "}";
    key_[i] = std::move(key);
    children_[i] = std::move(kids);
    return key_[i];
  }

  void assign_tags(NodeIndex i) {
    const NodeKind kind = topo_.node(i).kind;
    if (kind == NodeKind::kAccelerator) {
      tags_[i] = "gpu" + std::to_string(accel_count_++);
    } else if (kind == NodeKind::kNvSwitch) {
      tags_[i] = "sw" + std::to_string(switch_count_++);
    } else if (linked_.contains(i)) {
      tags_[i] = "n" + std::to_string(other_count_++);
    }
    for (NodeIndex c : children_[i])
      assign_tags(c);
  }

  void write_tree(NodeIndex i, std::size_t depth, std::string& out) const {
    out.append(depth * 2, ' ');
    out += label(i);
    if (auto it = tags_.find(i); it != tags_.end()) out += " #" + it->second;
    out += '\n';
    for (NodeIndex c : children_.at(i))
      write_tree(c, depth + 1, out);
  }

  void write_distances(std::string& out) const {
    std::vector<std::uint32_t> numa;
    for (NodeIndex i : topo_.nodes_of_kind(NodeKind::kNumaNode)) {
      numa.push_back(topo_.node(i).as<NumaInfo>().os_index);
    }
    std::sort(numa.begin(), numa.end());
    std::string rows;
    for (std::uint32_t from : numa) {
      std::string row;
      bool any = false;
      for (std::uint32_t to : numa) {
        const auto d = topo_.numa_distance(from, to);
        row += " " + (d ? std::to_string(*d) : std::string("-"));
        any = any || d.has_value();
      }
      if (any) rows += "  numa " + std::to_string(from) + ":" + row + "\n";
    }
    if (!rows.empty()) out += "distances\n" + rows;
  }

  void write_links(std::string& out) const {
    // Undirected, one entry per pair and kind: both ends of a GPU-GPU link report it.
    std::map<std::tuple<std::string, std::string, std::string>, std::int64_t> edges;
    for (const Link& link : topo_.links()) {
      if (link.kind == LinkKind::kNumaDistance) continue;
      const auto a = tags_.find(link.from);
      const auto b = tags_.find(link.to);
      if (a == tags_.end() || b == tags_.end()) continue;
      std::string x = a->second;
      std::string y = b->second;
      if (natural_less(y, x)) std::swap(x, y);
      auto& count = edges[{std::string(to_string(link.kind)), x, y}];
      count = std::max(count, link.value);
    }
    if (edges.empty()) return;
    std::vector<std::pair<std::tuple<std::string, std::string, std::string>, std::int64_t>> sorted(
        edges.begin(), edges.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& l, const auto& r) {
      const auto& [lk, la, lb] = l.first;
      const auto& [rk, ra, rb] = r.first;
      if (lk != rk) return lk < rk;
      if (la != ra) return natural_less(la, ra);
      return natural_less(lb, rb);
    });
    out += "links\n";
    for (const auto& [edge, count] : sorted) {
      const auto& [kind, x, y] = edge;
      out += "  " + kind + " " + x + " " + y + " x" + std::to_string(count) + "\n";
    }
  }

  const Topology& topo_;
  std::vector<std::string> key_;
  std::unordered_map<NodeIndex, std::vector<NodeIndex>> children_;
  std::unordered_map<NodeIndex, std::string> tags_;
  std::set<NodeIndex> linked_;
  int accel_count_ = 0;
  int switch_count_ = 0;
  int other_count_ = 0;
};

}  // namespace

ShapeFingerprint compute_shape(const Topology& topology) {
  ShapeFingerprint shape;
  shape.description = ShapeWriter(topology).describe();
  shape.sha256 = sha256_hex(shape.description);
  shape.hash = shape.sha256.substr(0, 12);
  return shape;
}

}  // namespace nodetopo
