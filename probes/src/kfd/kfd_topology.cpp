#include "kfd/kfd_topology.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <nodetopo/probes/discovery_cache.hpp>
#include <nodetopo/probes/parsers.hpp>
#include <nodetopo/probes/sys_dir.hpp>

#include "kfd/kfd_cache.hpp"
#include "parallel.hpp"
#include "shared_reads.hpp"

namespace nodetopo::probes {

namespace {

// KFD heap types (HSA_MEM_HEAP_TYPE_FB_PUBLIC / _FB_PRIVATE): the GPU's own memory.
constexpr std::uint64_t kHeapFbPublic = 1;
constexpr std::uint64_t kHeapFbPrivate = 2;

// One directory of the tree: its root-relative path as the tree names it (under
// sys/class/kfd/kfd, behind the class link), which messages name, and its descriptor when it
// could be opened as a plain subdirectory of an open parent. Files are read through the
// descriptor (one openat of one component; an io_link's or memory bank's properties one openat2
// of two, read_below()): read by path, every properties file walked the
// nine components behind the class link again and met the link, four system calls each (30 ms
// for the 1,100 files of 32 MI300X GPUs wired all-to-all). What the descriptor cannot read, or a
// directory that is not a plain subdirectory (a link planted in a capture), is read by path as
// before, so that its message is worded as before.
class TreeDir {
 public:
  TreeDir(const SysRoot& root, std::string rel, std::optional<SysDir> opened)
      : root_(&root), rel_(std::move(rel)), opened_(std::move(opened)) {}

  [[nodiscard]] const SysRoot& root() const { return *root_; }
  [[nodiscard]] const std::string& rel() const { return rel_; }
  [[nodiscard]] std::string path(std::string_view name) const {
    std::string out;
    out.reserve(rel_.size() + 1 + name.size());
    out.append(rel_).append("/").append(name);
    return out;
  }

  [[nodiscard]] TreeDir child(std::string_view name) const {
    std::optional<SysDir> sub;
    if (opened_) sub = opened_->open_subdir(name);
    return TreeDir(*root_, path(name), std::move(sub));
  }

  [[nodiscard]] Result<std::string> read(std::string_view name) const {
    if (opened_) {
      if (auto text = opened_->read_file(name)) return text;
    }
    return root_->read_file(path(name));
  }

  // read() of file `name` of subdirectory `sub`: one open below this directory (an io_link's
  // properties), not the subdirectory's open and close around it, when the kernel checks paths.
  [[nodiscard]] Result<std::string> read_below(std::string_view sub, std::string_view name) const {
    if (opened_) {
      std::string rel;
      rel.reserve(sub.size() + 1 + name.size());
      rel.append(sub).append("/").append(name);
      if (auto text = opened_->read_file_below(rel)) return std::move(*text);
    }
    return child(sub).read(name);
  }

  // Sorted names, as SysRoot::list_dir() gives them.
  [[nodiscard]] Result<std::vector<std::string>> list() const {
    if (!opened_) return root_->list_dir(rel_);
    std::vector<std::string> names;
    for (const SysDir::Entry& entry : opened_->entries())
      names.emplace_back(entry.name);
    return names;
  }

 private:
  const SysRoot* root_;
  std::string rel_;
  std::optional<SysDir> opened_;
};

// The numbers asked for of one properties file, by key; keys the file lacks are not held.
class Numbers {
 public:
  static constexpr std::size_t kMaxKeys = 8;

  void set(std::string_view key, std::uint64_t value) {
    // The keys are each caller's literal list; more than kMaxKeys is a programming error.
    if (size_ == values_.size()) throw std::logic_error("Numbers: more than kMaxKeys keys");
    values_[size_++] = {key, value};
  }
  [[nodiscard]] bool contains(std::string_view key) const { return find(key) != nullptr; }
  /// The value of `key`, 0 when the file lacks it.
  [[nodiscard]] std::uint64_t get(std::string_view key) const {
    const auto* found = find(key);
    return found != nullptr ? found->second : 0;
  }

 private:
  [[nodiscard]] const std::pair<std::string_view, std::uint64_t>* find(std::string_view key) const {
    for (std::size_t i = 0; i < size_; ++i) {
      if (values_[i].first == key) return &values_[i];
    }
    return nullptr;
  }
  std::array<std::pair<std::string_view, std::uint64_t>, kMaxKeys> values_{};
  std::size_t size_ = 0;
};

// Lines up to which first_repeated_key() compares every pair: a KFD properties file has 12 (an
// io_link) to some 40 (a node) lines, whose keys mostly differ in length, so that most pairs are
// told apart without a memcmp(); sorting them cost a memcmp() per comparison (3 % of a
// partitioned MI300X's dump). A longer (hostile) file is sorted.
constexpr std::size_t kPairwiseKeyCheckMax = 48;

// The index of the first line, in file order, whose key an earlier line has, or nullopt. Pairs
// or sorted by key, not a map of the keys: a KFD tree holds thousands of these files.
std::optional<std::size_t> first_repeated_key(
    const std::vector<std::pair<std::string_view, std::string_view>>& lines) {
  if (lines.size() <= kPairwiseKeyCheckMax) {
    for (std::size_t i = 1; i < lines.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (lines[j].first == lines[i].first) return i;
      }
    }
    return std::nullopt;
  }
  std::vector<std::uint32_t> order(lines.size());
  for (std::uint32_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&lines](std::uint32_t a, std::uint32_t b) {
    return lines[a].first != lines[b].first ? lines[a].first < lines[b].first : a < b;
  });
  std::optional<std::size_t> first;
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (lines[order[i]].first == lines[order[i - 1]].first && (!first || order[i] < *first)) {
      first = order[i];
    }
  }
  return first;
}

// The numbers `keys` of a `properties` file read as `text` ("key value" lines, `rel` its path). The
// error names the file: a line that is not "key value", a key given twice (the first such line), a
// value of `keys` that is not a number (the first key of `keys` that is not).
Result<Numbers> read_numbers(const SysRoot& root, const Result<std::string>& text,
                             const std::string& rel, std::initializer_list<std::string_view> keys) {
  if (!text) return text.error();
  auto lines = parse_key_value_lines(text.value());
  if (!lines) {
    return make_error(ErrorCode::kMalformed, lines.error().message, root.host_path(rel));
  }
  if (const auto repeated = first_repeated_key(lines.value())) {
    return make_error(ErrorCode::kMalformed,
                      "'" + std::string(lines.value()[*repeated].first) + "' appears twice",
                      root.host_path(rel));
  }
  Numbers out;
  for (const std::string_view key : keys) {
    const auto line = std::find_if(lines.value().begin(), lines.value().end(),
                                   [key](const auto& kv) { return kv.first == key; });
    if (line == lines.value().end()) continue;
    auto value = parse_uint(line->second);
    if (!value) {
      return make_error(ErrorCode::kMalformed, std::string(key) + ": " + value.error().message,
                        root.host_path(rel));
    }
    out.set(key, *value);
  }
  return out;
}

Error missing(const SysRoot& root, const std::string& rel, const std::string& key) {
  return make_error(ErrorCode::kMalformed, "no '" + key + "' line", root.host_path(rel));
}

// io_link `name` of directory `links`.
Result<KfdIoLink> read_io_link(const TreeDir& links, const std::string& name,
                               std::uint32_t node_id) {
  const SysRoot& root = links.root();
  const std::string rel = links.path(name + "/properties");
  auto n = read_numbers(root, links.read_below(name, "properties"), rel,
                        {"type", "node_from", "node_to", "max_bandwidth"});
  if (!n) return n.error();
  const auto& v = n.value();
  if (!v.contains("type")) return missing(root, rel, "type");
  if (!v.contains("node_to")) return missing(root, rel, "node_to");
  if (v.contains("node_from") && v.get("node_from") != node_id) {
    return make_error(ErrorCode::kMalformed,
                      "node_from " + std::to_string(v.get("node_from")) +
                          " is not the node the link belongs to (" + std::to_string(node_id) + ")",
                      root.host_path(rel));
  }
  if (v.get("type") > UINT32_MAX || v.get("node_to") > UINT32_MAX) {
    return make_error(ErrorCode::kMalformed, "type or node_to out of range", root.host_path(rel));
  }
  KfdIoLink link;
  link.type = static_cast<std::uint32_t>(v.get("type"));
  link.node_to = static_cast<std::uint32_t>(v.get("node_to"));
  if (v.contains("max_bandwidth")) link.max_bandwidth = v.get("max_bandwidth");
  link.file = rel;
  return link;
}

Result<KfdNode> read_node(const TreeDir& dir, std::uint32_t id) {
  const SysRoot& root = dir.root();
  const std::string rel = dir.path("properties");
  auto n = read_numbers(root, dir.read("properties"), rel,
                        {"simd_count", "location_id", "domain", "vendor_id", "device_id",
                         "unique_id", "hive_id", "gfx_target_version"});
  if (!n) return n.error();
  const auto& v = n.value();
  if (!v.contains("simd_count")) return missing(root, rel, "simd_count");
  KfdNode node;
  node.id = id;
  node.dir = dir.rel();
  node.gpu = v.get("simd_count") > 0;
  if (node.gpu) {
    if (!v.contains("location_id")) return missing(root, rel, "location_id");
    const std::uint64_t location = v.get("location_id");
    if (location > 0xffff || v.get("domain") > UINT32_MAX) {
      return make_error(ErrorCode::kMalformed, "location_id or domain out of range",
                        root.host_path(rel));
    }
    PciAddress addr;
    addr.domain = static_cast<std::uint32_t>(v.get("domain"));
    addr.bus = static_cast<std::uint8_t>(location >> 8);
    addr.device = static_cast<std::uint8_t>((location >> 3) & 0x1f);
    addr.function = static_cast<std::uint8_t>(location & 0x7);
    node.address = addr;
  }
  node.vendor_id = static_cast<std::uint32_t>(v.get("vendor_id") & 0xffffffff);
  node.device_id = static_cast<std::uint32_t>(v.get("device_id") & 0xffffffff);
  node.unique_id = v.get("unique_id");
  node.hive_id = v.get("hive_id");
  node.gfx_target_version = static_cast<std::uint32_t>(v.get("gfx_target_version") & 0xffffffff);
  return node;
}

// Sorted numeric entries of directory `dir` listed as `names`; other names are reported.
std::vector<std::pair<std::uint32_t, std::string>> numbered_entries(
    const TreeDir& dir, const std::vector<std::string>& names, std::vector<Error>& problems) {
  std::vector<std::pair<std::uint32_t, std::string>> out;
  for (const std::string& name : names) {
    auto id = parse_uint(name);
    if (!id || *id > UINT32_MAX) {
      problems.push_back(make_error(ErrorCode::kMalformed, "not a KFD node or link number",
                                    dir.root().host_path(dir.path(name))));
      continue;
    }
    out.emplace_back(static_cast<std::uint32_t>(*id), name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// numbered_entries() of a subdirectory that may be absent (a node without io_links).
std::vector<std::pair<std::uint32_t, std::string>> numbered_entries(const TreeDir& dir,
                                                                    std::vector<Error>& problems) {
  auto names = dir.list();
  if (!names) {
    if (names.error().code != ErrorCode::kNotFound) problems.push_back(names.error());
    return {};
  }
  return numbered_entries(dir, names.value(), problems);
}

void read_mem_banks(const TreeDir& node_dir, KfdNode& node, std::vector<Error>& problems) {
  const TreeDir banks = node_dir.child("mem_banks");
  for (const auto& [index, name] : numbered_entries(banks, problems)) {
    const std::string rel = banks.path(name + "/properties");
    auto n = read_numbers(banks.root(), banks.read_below(name, "properties"), rel,
                          {"heap_type", "size_in_bytes"});
    if (!n) {
      problems.push_back(n.error());
      continue;
    }
    const auto& v = n.value();
    const std::uint64_t heap = v.get("heap_type");
    if (heap == kHeapFbPublic || heap == kHeapFbPrivate) {
      node.frame_buffer_bytes += v.get("size_in_bytes");
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

namespace {

// A node directory as read: the node, or nullopt when its properties are unusable (the first
// problem says why), and the problems of its links and memory banks in the order met.
struct NodeRead {
  std::optional<KfdNode> node;
  std::vector<Error> problems;
};

NodeRead read_node_tree(const TreeDir& nodes, std::uint32_t id, const std::string& name) {
  NodeRead out;
  const TreeDir dir = nodes.child(name);
  auto node = read_node(dir, id);
  if (!node) {
    out.problems.push_back(node.error());
    return out;
  }
  const TreeDir links = dir.child("io_links");
  for (const auto& [index, link_name] : numbered_entries(links, out.problems)) {
    auto link = read_io_link(links, link_name, id);
    if (link) {
      node->io_links.push_back(std::move(link.value()));
    } else {
      out.problems.push_back(link.error());
    }
  }
  read_mem_banks(dir, node.value(), out.problems);
  out.node = std::move(node.value());
  return out;
}

// Nodes per reader thread: a partitioned MI300X has 64 GPU nodes of some 64 io_links each, four
// files a link (10 µs per link on the benchmark VM, 40 ms in all); an MI210 box has 10 nodes of
// five, read in 0.5 ms by one thread, less than a thread's start costs.
constexpr std::size_t kNodesPerThread = 8;
constexpr unsigned kMaxReaderThreads = 8;

// Reads every node of `numbered` into `reads` (same order), on several threads when there are
// many: the kernel serves sysfs reads of different files side by side. What each read returns
// depends on its node alone, so the result does not depend on scheduling.
void read_node_trees(const TreeDir& nodes,
                     const std::vector<std::pair<std::uint32_t, std::string>>& numbered,
                     std::vector<NodeRead>& reads) {
  reads.resize(numbered.size());
  detail::for_each_on_threads(
      numbered.size(), detail::reader_threads(numbered.size(), kNodesPerThread, kMaxReaderThreads),
      [&](unsigned /*worker*/, std::size_t i) {
        reads[i] = read_node_tree(nodes, numbered[i].first, numbered[i].second);
      },
      // A node's directories and files are closed by the end of its read (`nodes` was opened
      // before).
      detail::Descriptors::kPrivatePerWorker);
}

}  // namespace

Result<KfdTopology> read_kfd_topology(const SysRoot& root, std::optional<SysDir> nodes_dir_open) {
  const std::string nodes_dir(kKfdNodesDir);
  // The class link resolved once; a directory that cannot be opened is listed by path, which
  // words the error.
  if (!nodes_dir_open) {
    if (auto opened = root.open_dir(nodes_dir)) nodes_dir_open.emplace(std::move(opened.value()));
  }
  const TreeDir nodes(root, nodes_dir, std::move(nodes_dir_open));
  auto listed = nodes.list();
  if (!listed) return listed.error();
  KfdTopology topo;
  const auto numbered = numbered_entries(nodes, listed.value(), topo.problems);
  std::vector<NodeRead> reads;
  read_node_trees(nodes, numbered, reads);
  for (std::size_t i = 0; i < numbered.size(); ++i) {
    NodeRead& read = reads[i];
    topo.problems.insert(topo.problems.end(), std::make_move_iterator(read.problems.begin()),
                         std::make_move_iterator(read.problems.end()));
    if (read.node) {
      topo.nodes.push_back(std::move(*read.node));
    } else {
      topo.skipped_nodes.push_back(numbered[i].first);
    }
  }
  return topo;
}

const Result<KfdTopology>& shared_kfd_topology(ProbeContext& ctx) {
  std::shared_ptr<const Result<KfdTopology>>& kept = ctx.shared_reads().kfd_topology;
  if (kept) return *kept;
  DiscoveryCache* cache = ctx.cache();
  if (cache == nullptr) {
    kept = std::make_shared<const Result<KfdTopology>>(read_kfd_topology(
        ctx.root(), std::exchange(ctx.shared_reads().kfd_nodes_dir, std::nullopt)));
    return *kept;
  }
  // An agent's refresh: the tree (a thousand files and more on a partitioned MI300X) is read
  // again only when the kernel's count of its changes moved. Read before the tree: a change made
  // while it is read moves the count past what is kept, and the next refresh reads it again. So
  // the runner's listing of the nodes directory (made before the count) is not used here.
  auto generation = ctx.root().read_file(kKfdGenerationFile);
  detail::KfdCache& kfd = cache->kfd();
  if (generation && kfd.topology && kfd.generation == generation.value()) {
    kept = kfd.topology;
    cache->mutable_stats().kfd_reused = true;
    return *kept;
  }
  kept = std::make_shared<const Result<KfdTopology>>(read_kfd_topology(ctx.root()));
  if (generation) {
    kfd.topology = kept;
    kfd.generation = std::move(generation.value());
  } else {
    kfd.clear();
  }
  return *kept;
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
