#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include <nodetopo/probes/kfd_probe.hpp>
#include <nodetopo/topology/ids.hpp>

#include "kfd/kfd_topology.hpp"

namespace nodetopo::probes {

namespace {

// xGMI links of one ordered pair of physical GPUs, gathered over all their partitions.
struct PairLinks {
  // io_links per (source KFD node, target KFD node): partitions share the physical link, so the
  // pair's link count is what one partition pair sees, not the sum over partitions.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t> per_partition_pair;
  std::uint64_t bandwidth = 0;
};

class KfdDiscovery {
 public:
  KfdDiscovery(ProbeContext& ctx, TopologyBuilder& builder, const KfdTopology& topology)
      : ctx_(ctx), root_(ctx.root()), builder_(builder), kfd_(topology) {}

  void run() {
    for (const Error& problem : kfd_.problems)
      ctx_.warn(problem.message + " (skipped)", problem.path);
    const KfdGpuMap map = map_kfd_gpus(kfd_, [this](const PciAddress& addr) {
      return builder_.find(node_id::accelerator(addr.to_string())).has_value();
    });
    report_unmatched(map.unmatched);
    for (const auto& [address, gpu] : map.gpus) {
      const NodeIndex accel = *builder_.find(node_id::accelerator(address.to_string()));
      auto& info = builder_.node(accel).as<AcceleratorInfo>();
      info.partitions = gpu.nodes.size() > 1 ? static_cast<std::uint32_t>(gpu.nodes.size()) : 0;
      for (const KfdNode* node : gpu.nodes)
        accelerator_of_[node->id] = accel;
    }
    for (const auto& [address, gpu] : map.gpus) {
      for (const KfdNode* node : gpu.nodes)
        collect_links(*node);
    }
    emit_links();
  }

 private:
  // One warning per physical GPU (function 0 of the nodes' addresses: partitions share it),
  // naming its KFD nodes; other reasons one warning per node.
  void report_unmatched(const std::vector<KfdUnmatched>& unmatched) {
    std::map<PciAddress, std::vector<const KfdNode*>> by_device;
    for (const KfdUnmatched& u : unmatched) {
      if (!u.reason.empty()) {
        ctx_.warn("KFD GPU node " + std::to_string(u.node->id) + " skipped: " + u.reason,
                  root_.host_path(u.node->dir + "/properties"));
        continue;
      }
      PciAddress device = *u.node->address;
      device.function = 0;
      by_device[device].push_back(u.node);
    }
    for (const auto& [device, nodes] : by_device) {
      std::string ids;
      for (const KfdNode* node : nodes)
        ids += (ids.empty() ? "" : ", ") + std::to_string(node->id);
      ctx_.warn((nodes.size() == 1 ? "KFD GPU node " : "KFD GPU nodes ") + ids +
                    " skipped: no accelerator at PCI address " +
                    (nodes.size() == 1 ? nodes.front()->address->to_string()
                                       : device.to_string() + " (function bits: partitions)") +
                    ", the address KFD gives in domain + location_id",
                root_.host_path(nodes.front()->dir + "/properties"));
    }
  }

  void collect_links(const KfdNode& node) {
    const NodeIndex from = accelerator_of_.at(node.id);
    for (const KfdIoLink& link : node.io_links) {
      if (link.type != kKfdIoLinkXgmi) continue;  // PCIe and CPU interconnects are not xGMI
      const KfdNode* peer = kfd_.find(link.node_to);
      if (peer == nullptr) {
        // A node left out for a malformed file was reported already.
        if (!kfd_.skipped(link.node_to)) {
          ctx_.warn("xGMI link to KFD node " + std::to_string(link.node_to) +
                        ", which does not exist (link ignored)",
                    root_.host_path(link.file));
        }
        continue;
      }
      if (!peer->gpu) continue;  // GPU-CPU xGMI (MI250X on Trento, MI300A): not a GPU pair
      const auto to = accelerator_of_.find(peer->id);
      if (to == accelerator_of_.end()) continue;  // unmatched GPU: reported once already
      if (to->second == from) continue;           // between partitions of one GPU
      PairLinks& pair = pairs_[{from, to->second}];
      pair.per_partition_pair[{node.id, peer->id}] += 1;
      pair.bandwidth = std::max(pair.bandwidth, link.max_bandwidth);
    }
  }

  void emit_links() {
    std::vector<std::pair<std::pair<NodeIndex, NodeIndex>, const PairLinks*>> ordered;
    for (const auto& [ends, links] : pairs_)
      ordered.emplace_back(ends, &links);
    // Deterministic order: by the ends' PCI addresses (node indices depend on insertion order).
    // By reference: a copy of both ids per comparison was most of this sort on 32 GPUs.
    const auto key = [this](NodeIndex n) -> const std::string& { return builder_.node(n).id; };
    std::sort(ordered.begin(), ordered.end(), [&](const auto& a, const auto& b) {
      return std::tie(key(a.first.first), key(a.first.second)) <
             std::tie(key(b.first.first), key(b.first.second));
    });
    for (const auto& [ends, links] : ordered) {
      std::int64_t count = 0;
      for (const auto& [partitions, n] : links->per_partition_pair)
        count = std::max(count, n);
      Link link;
      link.kind = LinkKind::kXgmi;
      link.from = ends.first;
      link.to = ends.second;
      link.value = count;
      link.bandwidth_mbps = links->bandwidth;
      builder_.add_link(link);
    }
  }

  ProbeContext& ctx_;
  const SysRoot& root_;
  TopologyBuilder& builder_;
  const KfdTopology& kfd_;  // the discovery's shared reading (shared_kfd_topology())
  std::unordered_map<std::uint32_t, NodeIndex> accelerator_of_;
  std::map<std::pair<NodeIndex, NodeIndex>, PairLinks> pairs_;
};

}  // namespace

Result<void> KfdProbe::discover(ProbeContext& ctx, TopologyBuilder& builder) {
  const Result<KfdTopology>& topology = shared_kfd_topology(ctx);
  if (!topology) {
    if (topology.error().code == ErrorCode::kNotFound) {
      return make_error(ErrorCode::kUnavailable, "no AMD KFD topology in this root",
                        ctx.root().host_path(kKfdNodesDir));
    }
    return topology.error();
  }
  KfdDiscovery discovery(ctx, builder, topology.value());
  discovery.run();
  return {};
}

}  // namespace nodetopo::probes
