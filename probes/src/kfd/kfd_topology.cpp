#include "kfd/kfd_topology.hpp"

#include <algorithm>
#include <unordered_map>

#include <nodetopo/probes/parsers.hpp>

namespace nodetopo::probes {

namespace {

// KFD heap types (HSA_MEM_HEAP_TYPE_FB_PUBLIC / _FB_PRIVATE): the GPU's own memory.
constexpr std::uint64_t kHeapFbPublic = 1;
constexpr std::uint64_t kHeapFbPrivate = 2;

using Properties = std::unordered_map<std::string, std::string>;

// One `properties` file: "key value" lines. The error names the file.
Result<Properties> read_properties(const SysRoot& root, const std::string& rel) {
  auto text = root.read_file(rel);
  if (!text) return text.error();
  auto lines = parse_key_value_lines(text.value());
  if (!lines) {
    return make_error(ErrorCode::kMalformed, lines.error().message, root.host_path(rel));
  }
  Properties props;
  for (auto& [key, value] : lines.value()) {
    if (props.contains(key)) {
      return make_error(ErrorCode::kMalformed, "'" + key + "' appears twice", root.host_path(rel));
    }
    props.emplace(std::move(key), std::move(value));
  }
  return props;
}

// A numeric property: nullopt when absent, an error naming the file when not a number.
Result<std::optional<std::uint64_t>> number(const SysRoot& root, const std::string& rel,
                                            const Properties& props, const std::string& key) {
  const auto it = props.find(key);
  if (it == props.end()) return std::optional<std::uint64_t>{};
  auto value = parse_uint(it->second);
  if (!value) {
    return make_error(ErrorCode::kMalformed, key + ": " + value.error().message,
                      root.host_path(rel));
  }
  return std::optional<std::uint64_t>{*value};
}

Error missing(const SysRoot& root, const std::string& rel, const std::string& key) {
  return make_error(ErrorCode::kMalformed, "no '" + key + "' line", root.host_path(rel));
}

// Reads the numbers `keys` of one properties file into `out` (0 when absent), or fails.
Result<std::unordered_map<std::string, std::uint64_t>> numbers(
    const SysRoot& root, const std::string& rel, const Properties& props,
    std::initializer_list<const char*> keys) {
  std::unordered_map<std::string, std::uint64_t> out;
  for (const char* key : keys) {
    auto v = number(root, rel, props, key);
    if (!v) return v.error();
    if (v.value()) out.emplace(key, **v);
  }
  return out;
}

Result<KfdIoLink> read_io_link(const SysRoot& root, const std::string& rel, std::uint32_t node_id) {
  auto props = read_properties(root, rel);
  if (!props) return props.error();
  auto n = numbers(root, rel, props.value(), {"type", "node_from", "node_to", "max_bandwidth"});
  if (!n) return n.error();
  const auto& v = n.value();
  if (!v.contains("type")) return missing(root, rel, "type");
  if (!v.contains("node_to")) return missing(root, rel, "node_to");
  if (v.contains("node_from") && v.at("node_from") != node_id) {
    return make_error(ErrorCode::kMalformed,
                      "node_from " + std::to_string(v.at("node_from")) +
                          " is not the node the link belongs to (" + std::to_string(node_id) + ")",
                      root.host_path(rel));
  }
  if (v.at("type") > UINT32_MAX || v.at("node_to") > UINT32_MAX) {
    return make_error(ErrorCode::kMalformed, "type or node_to out of range", root.host_path(rel));
  }
  KfdIoLink link;
  link.type = static_cast<std::uint32_t>(v.at("type"));
  link.node_to = static_cast<std::uint32_t>(v.at("node_to"));
  if (v.contains("max_bandwidth")) link.max_bandwidth = v.at("max_bandwidth");
  link.file = rel;
  return link;
}

Result<KfdNode> read_node(const SysRoot& root, const std::string& dir, std::uint32_t id) {
  const std::string rel = dir + "/properties";
  auto props = read_properties(root, rel);
  if (!props) return props.error();
  auto n = numbers(root, rel, props.value(),
                   {"simd_count", "location_id", "domain", "vendor_id", "device_id", "unique_id",
                    "hive_id", "gfx_target_version"});
  if (!n) return n.error();
  const auto& v = n.value();
  const auto get = [&v](const char* key) { return v.contains(key) ? v.at(key) : 0; };
  if (!v.contains("simd_count")) return missing(root, rel, "simd_count");
  KfdNode node;
  node.id = id;
  node.dir = dir;
  node.gpu = get("simd_count") > 0;
  if (node.gpu) {
    if (!v.contains("location_id")) return missing(root, rel, "location_id");
    const std::uint64_t location = get("location_id");
    if (location > 0xffff || get("domain") > UINT32_MAX) {
      return make_error(ErrorCode::kMalformed, "location_id or domain out of range",
                        root.host_path(rel));
    }
    PciAddress addr;
    addr.domain = static_cast<std::uint32_t>(get("domain"));
    addr.bus = static_cast<std::uint8_t>(location >> 8);
    addr.device = static_cast<std::uint8_t>((location >> 3) & 0x1f);
    addr.function = static_cast<std::uint8_t>(location & 0x7);
    node.address = addr;
  }
  node.vendor_id = static_cast<std::uint32_t>(get("vendor_id") & 0xffffffff);
  node.device_id = static_cast<std::uint32_t>(get("device_id") & 0xffffffff);
  node.unique_id = get("unique_id");
  node.hive_id = get("hive_id");
  node.gfx_target_version = static_cast<std::uint32_t>(get("gfx_target_version") & 0xffffffff);
  return node;
}

// Sorted numeric entries of a directory; other names are reported.
std::vector<std::pair<std::uint32_t, std::string>> numbered_entries(const SysRoot& root,
                                                                    const std::string& dir,
                                                                    std::vector<Error>& problems) {
  std::vector<std::pair<std::uint32_t, std::string>> out;
  auto names = root.list_dir(dir);
  if (!names) {
    if (names.error().code != ErrorCode::kNotFound) problems.push_back(names.error());
    return out;
  }
  for (const std::string& name : names.value()) {
    auto id = parse_uint(name);
    if (!id || *id > UINT32_MAX) {
      problems.push_back(make_error(ErrorCode::kMalformed, "not a KFD node or link number",
                                    root.host_path(dir + "/" + name)));
      continue;
    }
    out.emplace_back(static_cast<std::uint32_t>(*id), name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void read_mem_banks(const SysRoot& root, KfdNode& node, std::vector<Error>& problems) {
  const std::string dir = node.dir + "/mem_banks";
  for (const auto& [index, name] : numbered_entries(root, dir, problems)) {
    const std::string rel = dir + "/" + name + "/properties";
    auto props = read_properties(root, rel);
    if (!props) {
      problems.push_back(props.error());
      continue;
    }
    auto n = numbers(root, rel, props.value(), {"heap_type", "size_in_bytes"});
    if (!n) {
      problems.push_back(n.error());
      continue;
    }
    const auto& v = n.value();
    const std::uint64_t heap = v.contains("heap_type") ? v.at("heap_type") : 0;
    if (heap == kHeapFbPublic || heap == kHeapFbPrivate) {
      node.frame_buffer_bytes += v.contains("size_in_bytes") ? v.at("size_in_bytes") : 0;
    }
  }
}

}  // namespace

const KfdNode* KfdTopology::find(std::uint32_t id) const {
  const auto it = std::lower_bound(nodes.begin(), nodes.end(), id,
                                   [](const KfdNode& n, std::uint32_t v) { return n.id < v; });
  return it != nodes.end() && it->id == id ? &*it : nullptr;
}

bool KfdTopology::skipped(std::uint32_t id) const {
  return std::find(skipped_nodes.begin(), skipped_nodes.end(), id) != skipped_nodes.end();
}

Result<KfdTopology> read_kfd_topology(const SysRoot& root, const KfdReadOptions& options) {
  const std::string nodes_dir(kKfdNodesDir);
  auto listed = root.list_dir(nodes_dir);
  if (!listed) return listed.error();
  KfdTopology topo;
  for (const auto& [id, name] : numbered_entries(root, nodes_dir, topo.problems)) {
    const std::string dir = nodes_dir + "/" + name;
    auto node = read_node(root, dir, id);
    if (!node) {
      topo.problems.push_back(node.error());
      topo.skipped_nodes.push_back(id);
      continue;
    }
    if (options.io_links) {
      const std::string links_dir = dir + "/io_links";
      for (const auto& [index, link_name] : numbered_entries(root, links_dir, topo.problems)) {
        auto link = read_io_link(root, links_dir + "/" + link_name + "/properties", id);
        if (link) {
          node->io_links.push_back(std::move(link.value()));
        } else {
          topo.problems.push_back(link.error());
        }
      }
    }
    if (options.mem_banks) read_mem_banks(root, node.value(), topo.problems);
    topo.nodes.push_back(std::move(node.value()));
  }
  return topo;
}

KfdGpuMap map_kfd_gpus(const KfdTopology& topology,
                       const std::function<bool(const PciAddress&)>& is_gpu) {
  KfdGpuMap out;
  for (const KfdNode& node : topology.nodes) {
    if (!node.gpu || !node.address) continue;
    PciAddress target = *node.address;
    if (!is_gpu(target)) {
      PciAddress base = target;
      base.function = 0;
      if (target.function == 0 || !is_gpu(base)) {
        out.unmatched.push_back({&node, {}});
        continue;
      }
      target = base;
    }
    KfdGpu& gpu = out.gpus[target];
    gpu.address = target;
    if (!gpu.nodes.empty() && node.unique_id != 0 && gpu.primary().unique_id != 0 &&
        node.unique_id != gpu.primary().unique_id) {
      out.unmatched.push_back({&node, "its unique_id differs from that of KFD node " +
                                          std::to_string(gpu.primary().id) + " at " +
                                          target.to_string() +
                                          ", so it is not a partition of that GPU"});
      continue;
    }
    gpu.nodes.push_back(&node);  // nodes are read in id order, so the first is the primary
  }
  return out;
}

}  // namespace nodetopo::probes
