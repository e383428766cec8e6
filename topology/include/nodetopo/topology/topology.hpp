// Topology: the immutable, canonically ordered tree of one machine plus its link list; and the
// TopologyBuilder that probes fill before freeze().
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/topology/link.hpp>
#include <nodetopo/topology/node.hpp>

namespace nodetopo {

/// Node ids to indexes, looked up by string_view: a find() builds no std::string (PCI ids are
/// longer than the small-string buffer, and the probes look up thousands).
struct NodeIdHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view id) const noexcept {
    return std::hash<std::string_view>{}(id);
  }
};
using NodeIdMap = std::unordered_map<std::string, NodeIndex, NodeIdHash, std::equal_to<>>;

/// A frozen topology. Nodes are stored in depth-first pre-order with every node's children sorted
/// (by kind, then hardware order: OS index, PCI address, natural name order), so two discoveries
/// of the same hardware produce identical node order whatever order the probes inserted them in.
/// Index 0 is the Machine.
class Topology {
 public:
  Topology();  ///< an empty machine

  [[nodiscard]] const Node& root() const { return nodes_.front(); }
  [[nodiscard]] const Node& node(NodeIndex index) const { return nodes_.at(index); }
  [[nodiscard]] std::span<const Node> nodes() const { return nodes_; }
  [[nodiscard]] std::size_t size() const { return nodes_.size(); }
  [[nodiscard]] std::span<const Link> links() const { return links_; }

  /// Node with this id, if any.
  [[nodiscard]] std::optional<NodeIndex> find(std::string_view id) const;
  /// All nodes of one kind, in canonical order.
  [[nodiscard]] std::vector<NodeIndex> nodes_of_kind(NodeKind kind) const;
  /// Nearest ancestor (not the node itself) of the given kind.
  [[nodiscard]] std::optional<NodeIndex> ancestor_of_kind(NodeIndex index, NodeKind kind) const;
  /// The NUMA node os index a node belongs to: its own NUMA attribute (PCI, host bridge), else the
  /// nearest NUMA-node ancestor. nullopt when unknown.
  [[nodiscard]] std::optional<std::uint32_t> numa_of(NodeIndex index) const;
  /// SLIT distance between two NUMA nodes given by os index, when the platform reported it.
  [[nodiscard]] std::optional<std::int64_t> numa_distance(std::uint32_t from,
                                                          std::uint32_t to) const;

 private:
  friend class TopologyBuilder;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  NodeIdMap by_id_;
};

/// Collects nodes and links from the probes. Starts with the Machine root (id "machine").
/// Not thread-safe; probes run one after the other.
class TopologyBuilder {
 public:
  TopologyBuilder();

  [[nodiscard]] NodeIndex root() const { return 0; }

  /// Adds a node under `parent`. Fails when the id is taken, the parent does not exist or the
  /// payload does not fit the kind.
  Result<NodeIndex> add(NodeKind kind, std::string id, NodeIndex parent, NodePayload payload);
  /// Moves a node (with its subtree) under another parent; fails if that would create a cycle.
  Result<void> move_under(NodeIndex index, NodeIndex new_parent);
  void add_link(const Link& link);
  /// Makes room for `more` nodes beyond those added so far: a probe that adds a thousand nodes
  /// at once (the PCI walk) then moves none of the earlier ones while the builder grows.
  void reserve(std::size_t more);

  [[nodiscard]] std::optional<NodeIndex> find(std::string_view id) const;
  [[nodiscard]] Node& node(NodeIndex index) { return nodes_.at(index); }
  [[nodiscard]] const Node& node(NodeIndex index) const { return nodes_.at(index); }
  [[nodiscard]] std::size_t size() const { return nodes_.size(); }
  [[nodiscard]] std::vector<NodeIndex> nodes_of_kind(NodeKind kind) const;
  [[nodiscard]] std::span<const Link> links() const { return links_; }

  /// Sorts, renumbers and seals the tree. The builder is consumed.
  [[nodiscard]] Topology freeze() &&;

 private:
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  NodeIdMap by_id_;
};

/// Compares names with digit runs compared as numbers ("eth2" < "eth10").
bool natural_less(std::string_view a, std::string_view b);

}  // namespace nodetopo
