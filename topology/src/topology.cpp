#include <algorithm>
#include <cctype>
#include <tuple>

#include <nodetopo/topology/ids.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo {

namespace {

// Sibling order: containers first, then PCI functions interleaved by address (bridges and devices
// on one bus sort together, as lspci lists them), then OS devices.
int kind_rank(NodeKind kind) {
  switch (kind) {
    case NodeKind::kMachine:
      return 0;
    case NodeKind::kPackage:
      return 1;
    case NodeKind::kNumaNode:
      return 2;
    case NodeKind::kHostBridge:
      return 3;
    case NodeKind::kPciBridge:
    case NodeKind::kPciDevice:
      return 4;
    case NodeKind::kAccelerator:
      return 5;
    case NodeKind::kNvSwitch:
      return 6;
    case NodeKind::kNetDevice:
      return 7;
    case NodeKind::kRdmaDevice:
      return 8;
  }
  return 9;
}

// Hardware order inside one kind: OS index, bus number or PCI address.
struct HardwareOrder {
  std::uint64_t operator()(const PackageInfo& p) const { return p.os_index; }
  std::uint64_t operator()(const NumaInfo& n) const { return n.os_index; }
  std::uint64_t operator()(const HostBridgeInfo& h) const {
    return (std::uint64_t{h.domain} << 8) | h.bus;
  }
  std::uint64_t operator()(const PciFunctionInfo& f) const { return f.address.sort_key(); }
  std::uint64_t operator()(const AcceleratorInfo& a) const { return a.index.value_or(0); }
  template <class Other>
  std::uint64_t operator()(const Other& /*payload*/) const {
    return 0;
  }
};

std::uint64_t hardware_order(const Node& node) {
  return std::visit(HardwareOrder{}, node.payload);
}

}  // namespace

bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t ie = i;
      std::size_t je = j;
      while (ie < a.size() && is_digit(a[ie]))
        ++ie;
      while (je < b.size() && is_digit(b[je]))
        ++je;
      // Compare digit runs by value: strip leading zeros, then by length, then lexically.
      std::string_view da = a.substr(i, ie - i);
      std::string_view db = b.substr(j, je - j);
      while (da.size() > 1 && da.front() == '0')
        da.remove_prefix(1);
      while (db.size() > 1 && db.front() == '0')
        db.remove_prefix(1);
      if (da.size() != db.size()) return da.size() < db.size();
      if (da != db) return da < db;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  if ((a.size() - i) != (b.size() - j)) return (a.size() - i) < (b.size() - j);
  return a < b;  // equal under natural order: fall back to a total order
}

// ---------------------------------------------------------------------------------------------
// Topology

namespace {

// The lookups the builder and the frozen model share: both keep nodes in a vector and ids in a
// map, the builder in insertion order, the model in canonical order.
std::optional<NodeIndex> find_by_id(const NodeIdMap& by_id, std::string_view id) {
  auto it = by_id.find(id);
  if (it == by_id.end()) return std::nullopt;
  return it->second;
}

std::vector<NodeIndex> indexes_of_kind(const std::vector<Node>& nodes, NodeKind kind) {
  std::vector<NodeIndex> out;
  for (NodeIndex i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind == kind) out.push_back(i);
  }
  return out;
}

}  // namespace

Topology::Topology() {
  Node machine;
  machine.kind = NodeKind::kMachine;
  machine.id = "machine";
  machine.payload = MachineInfo{};
  nodes_.push_back(std::move(machine));
  by_id_.emplace("machine", 0);
}

std::optional<NodeIndex> Topology::find(std::string_view id) const {
  return find_by_id(by_id_, id);
}

std::vector<NodeIndex> Topology::nodes_of_kind(NodeKind kind) const {
  return indexes_of_kind(nodes_, kind);
}

std::optional<NodeIndex> Topology::ancestor_of_kind(NodeIndex index, NodeKind kind) const {
  NodeIndex cur = nodes_.at(index).parent;
  while (cur != kNoNode) {
    if (nodes_[cur].kind == kind) return cur;
    cur = nodes_[cur].parent;
  }
  return std::nullopt;
}

std::optional<std::uint32_t> Topology::numa_of(NodeIndex index) const {
  NodeIndex cur = index;
  while (cur != kNoNode) {
    const Node& n = nodes_[cur];
    if (const auto* f = n.get_if<PciFunctionInfo>(); f != nullptr && f->numa_node) {
      return f->numa_node;
    }
    if (const auto* h = n.get_if<HostBridgeInfo>(); h != nullptr && h->numa_node) {
      return h->numa_node;
    }
    if (const auto* numa = n.get_if<NumaInfo>(); numa != nullptr) return numa->os_index;
    cur = n.parent;
  }
  return std::nullopt;
}

std::optional<std::int64_t> Topology::numa_distance(std::uint32_t from, std::uint32_t to) const {
  const auto a = find(node_id::numa(from));
  const auto b = find(node_id::numa(to));
  if (!a || !b) return std::nullopt;
  for (const Link& link : links_) {
    if (link.kind == LinkKind::kNumaDistance && link.from == *a && link.to == *b) {
      return link.value;
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// TopologyBuilder

TopologyBuilder::TopologyBuilder() {
  Node machine;
  machine.kind = NodeKind::kMachine;
  machine.id = "machine";
  machine.payload = MachineInfo{};
  nodes_.push_back(std::move(machine));
  by_id_.emplace("machine", 0);
}

Result<NodeIndex> TopologyBuilder::add(NodeKind kind, std::string id, NodeIndex parent,
                                       NodePayload payload) {
  if (parent >= nodes_.size()) {
    return make_error(ErrorCode::kInvalid, "parent node does not exist", id);
  }
  if (!payload_matches(kind, payload)) {
    return make_error(ErrorCode::kInvalid,
                      "payload does not match node kind " + std::string(to_string(kind)), id);
  }
  if (by_id_.contains(id)) {
    return make_error(ErrorCode::kInvalid, "duplicate node id", id);
  }
  const auto index = static_cast<NodeIndex>(nodes_.size());
  Node node;
  node.kind = kind;
  node.id = id;
  node.parent = parent;
  node.payload = std::move(payload);
  nodes_.push_back(std::move(node));
  nodes_[parent].children.push_back(index);
  by_id_.emplace(std::move(id), index);
  return index;
}

Result<void> TopologyBuilder::move_under(NodeIndex index, NodeIndex new_parent) {
  if (index == 0 || index >= nodes_.size() || new_parent >= nodes_.size()) {
    return make_error(ErrorCode::kInvalid, "cannot move: node does not exist");
  }
  for (NodeIndex cur = new_parent; cur != kNoNode; cur = nodes_[cur].parent) {
    if (cur == index) {
      return make_error(ErrorCode::kInvalid, "cannot move a node under its own subtree",
                        nodes_[index].id);
    }
  }
  auto& siblings = nodes_[nodes_[index].parent].children;
  siblings.erase(std::remove(siblings.begin(), siblings.end(), index), siblings.end());
  nodes_[index].parent = new_parent;
  nodes_[new_parent].children.push_back(index);
  return {};
}

void TopologyBuilder::add_link(const Link& link) {
  links_.push_back(link);
}

void TopologyBuilder::reserve(std::size_t more) {
  nodes_.reserve(nodes_.size() + more);
  by_id_.reserve(by_id_.size() + more);
}

std::optional<NodeIndex> TopologyBuilder::find(std::string_view id) const {
  return find_by_id(by_id_, id);
}

std::vector<NodeIndex> TopologyBuilder::nodes_of_kind(NodeKind kind) const {
  return indexes_of_kind(nodes_, kind);
}

Topology TopologyBuilder::freeze() && {
  // Sort each child list, then renumber in depth-first pre-order so that indexes, like ids, depend
  // only on the hardware.
  const std::size_t n = nodes_.size();
  std::vector<std::uint64_t> order_key(n);
  for (std::size_t i = 0; i < n; ++i)
    order_key[i] = hardware_order(nodes_[i]);
  auto less = [&](NodeIndex a, NodeIndex b) {
    const Node& x = nodes_[a];
    const Node& y = nodes_[b];
    const int rx = kind_rank(x.kind);
    const int ry = kind_rank(y.kind);
    if (rx != ry) return rx < ry;
    if (order_key[a] != order_key[b]) return order_key[a] < order_key[b];
    return natural_less(x.id, y.id);
  };
  for (Node& node : nodes_)
    std::sort(node.children.begin(), node.children.end(), less);

  std::vector<NodeIndex> new_index(n, kNoNode);
  std::vector<NodeIndex> preorder;
  preorder.reserve(n);
  std::vector<NodeIndex> stack{0};
  while (!stack.empty()) {
    const NodeIndex cur = stack.back();
    stack.pop_back();
    new_index[cur] = static_cast<NodeIndex>(preorder.size());
    preorder.push_back(cur);
    const auto& kids = nodes_[cur].children;
    for (auto it = kids.rbegin(); it != kids.rend(); ++it)
      stack.push_back(*it);
  }

  // The nodes are put in pre-order where they are (each cycle of the permutation walked once)
  // and the vector and the id map handed over, not copied: on a thousand-function machine a
  // second array of nodes is a megabyte of fresh pages, and re-inserting every id as many
  // allocations. A node not reachable from the machine (add() and move_under() make none; the
  // permutation must be whole all the same) goes to the end and is dropped.
  std::vector<NodeIndex> source = preorder;  // source[k]: the old index of what lands at k
  for (NodeIndex old = 0; old < n; ++old) {
    if (new_index[old] == kNoNode) source.push_back(old);
  }
  std::vector<bool> placed(n, false);
  for (std::size_t start = 0; start < n; ++start) {
    if (placed[start] || source[start] == start) continue;
    Node held = std::move(nodes_[start]);
    std::size_t at = start;
    while (source[at] != start) {
      nodes_[at] = std::move(nodes_[source[at]]);
      placed[at] = true;
      at = source[at];
    }
    nodes_[at] = std::move(held);
    placed[at] = true;
  }
  nodes_.resize(preorder.size());
  for (Node& node : nodes_) {
    node.parent = node.parent == kNoNode ? kNoNode : new_index[node.parent];
    for (NodeIndex& child : node.children)
      child = new_index[child];
  }
  for (auto it = by_id_.begin(); it != by_id_.end();) {
    const NodeIndex moved_to = it->second < n ? new_index[it->second] : kNoNode;
    if (moved_to == kNoNode) {
      it = by_id_.erase(it);
    } else {
      it->second = moved_to;
      ++it;
    }
  }

  Topology topo;
  topo.nodes_ = std::move(nodes_);
  topo.by_id_ = std::move(by_id_);

  for (Link link : links_) {
    if (link.from >= n || link.to >= n) continue;
    link.from = new_index[link.from];
    link.to = new_index[link.to];
    if (link.from == kNoNode || link.to == kNoNode) continue;
    topo.links_.push_back(link);
  }
  std::sort(topo.links_.begin(), topo.links_.end(), [](const Link& a, const Link& b) {
    return std::tie(a.kind, a.from, a.to, a.value) < std::tie(b.kind, b.from, b.to, b.value);
  });
  return topo;
}

}  // namespace nodetopo
