#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include <nodetopo/probes/discovery_cache.hpp>
#include <nodetopo/probes/parsers.hpp>
#include <nodetopo/probes/pci_ids.hpp>
#include <nodetopo/probes/pci_names.hpp>
#include <nodetopo/probes/pci_probe.hpp>
#include <nodetopo/probes/sys_dir.hpp>
#include <nodetopo/topology/ids.hpp>

#include "parallel.hpp"
#include "pci/libpci_config.hpp"
#include "pci/pci_cache.hpp"
#include "pci/pci_device_path.hpp"
#include "pci/pci_dir_chain.hpp"
#include "pci/pci_function_reader.hpp"
#include "shared_reads.hpp"
#include "usable_cpus.hpp"

namespace nodetopo::probes {

namespace {

constexpr std::string_view kDevicesDir = "sys/bus/pci/devices";

// Functions one reader thread takes on before another is worth starting; and the most threads.
// Reading sysfs is system-call bound: on a 1000-function node a few threads halve the wall time,
// more only contend for the kernel's directory locks.
constexpr std::size_t kFunctionsPerThread = 128;
constexpr unsigned kMaxReaderThreads = 4;

// The part of PCI discovery that needs no earlier phase: enumerating bus/pci/devices and reading
// every function (PciProbe::prefetch, which may run while hwloc loads the platform).
class PciWalk {
 public:
  PciWalk(ProbeContext& ctx, detail::PciCache* cache)
      : ctx_(ctx), root_(ctx.root()), cache_(cache) {}

  Result<void> run(std::vector<PciEntry>& entries, std::vector<PciFunctionRead>& reads) {
    // The runner's listing when it made one (overlap_pays()), else a listing of our own.
    std::optional<SysDir> listed = std::exchange(ctx_.shared_reads().pci_devices_dir, std::nullopt);
    auto bus = listed ? Result<SysDir>(std::move(*listed))
                      : open_subsystem(root_, kDevicesDir, "no PCI bus in this root");
    if (!bus) return bus.error();
    entries = enumerate(bus.value());
    reads.assign(entries.size(), {});
    std::vector<std::size_t> to_read;
    read_now_.assign(entries.size(), 0);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (!reuse(entries[i], targets_[i], reads[i])) to_read.push_back(i);
    }
    if (auto r = read_all(entries, to_read, reads); !r.ok()) return r;
    if (cache_ != nullptr && cache_->valid) {
      if (auto r = reread_physical_functions(entries, reads); !r.ok()) return r;
    }
    if (auto r = relocate(entries, reads); !r.ok()) return r;
    if (cache_ != nullptr) remember(entries, reads);
    return {};
  }

 private:
  // Each entry of bus/pci/devices is the kernel's link into sys/devices. Its text is read through
  // the directory's descriptor and joined as a path; the reader then proves that path canonical
  // when it opens the device directory (one openat2 in all, where resolving the link walked and
  // looked up every component). Entries that are not such plain links, or whose path does not
  // open as canonical, are resolved in full, with a warning for whatever is wrong with them.
  std::vector<PciEntry> enumerate(const SysDir& bus) {
    // Listed and sorted once: a thousand names.
    const std::vector<SysDir::Entry> names = bus.entries();
    std::vector<PciEntry> entries;
    entries.reserve(names.size());
    targets_.clear();
    targets_.reserve(names.size());
    for (const auto& [entry_name, type] : names) {
      const std::string name(entry_name);
      auto addr = parse_pci_address(name);
      if (!addr) {
        ctx_.warn("skipped: entry name is not a PCI address",
                  root_.host_path(std::string(kDevicesDir) + "/" + name));
        continue;
      }
      if (type == SysDir::EntryType::kLink && root_.checks_paths_in_kernel()) {
        if (auto entry = lexical_entry(bus, name, *addr)) {
          entries.push_back(std::move(*entry));
          continue;
        }
      }
      if (auto entry = resolved_entry(name, *addr)) {
        entries.push_back(std::move(*entry));
        targets_.emplace_back();  // resolved in full: never taken from the cache
      }
    }
    return entries;
  }

  std::optional<PciEntry> lexical_entry(const SysDir& bus, const std::string& name,
                                        const PciAddress& addr) {
    auto target = bus.read_link(name);
    if (!target) return std::nullopt;
    auto path = join_plain_link(kDevicesDir, target.value());
    if (!path) return std::nullopt;
    auto entry = parse_device_path(*path);
    if (!entry || !(entry->address == addr)) return std::nullopt;
    entry->name = name;
    entry->lexical = true;
    targets_.push_back(std::move(target.value()));
    return entry;
  }

  // The full resolution of bus/pci/devices/<name>, warning about every way it can be wrong.
  std::optional<PciEntry> resolved_entry(const std::string& name, const PciAddress& addr) {
    const std::string rel = std::string(kDevicesDir) + "/" + name;
    auto resolved = root_.resolve(rel);
    if (!resolved) {
      ctx_.warn("skipped: " + resolved.error().message, resolved.error().path);
      return std::nullopt;
    }
    auto entry = parse_device_path(resolved.value());
    if (!entry && resolved.value() == rel) {
      // A plain directory instead of the kernel's symlink (trimmed captures): its place in the
      // hierarchy is unknown, so it hangs directly under the host bridge of its own bus, as
      // hwloc does with such entries.
      ctx_.warn(
          "not a symlink into sys/devices: parent bridge unknown, placed under host "
          "bridge " +
              pci_root_name(addr.domain, addr.bus),
          root_.host_path(rel));
      entry = PciEntry{};
      entry->address = addr;
      entry->sysfs_path = rel;
      entry->root_bus = pci_root_name(addr.domain, addr.bus);
      entry->pcie_root = entry->root_bus;
    }
    if (!entry || !(entry->address == addr)) {
      ctx_.warn(
          "skipped: link does not lead to a PCI device directory under sys/devices (it "
          "resolves to '" +
              resolved.value() + "')",
          root_.host_path(rel));
      return std::nullopt;
    }
    entry->name = name;
    return entry;
  }

  // Takes entry `e`'s read from the cache when its link still names the same device directory
  // and no event named it (or a relative).
  bool reuse(const PciEntry& e, const std::string& target, PciFunctionRead& read) {
    if (cache_ == nullptr || !cache_->valid || !e.lexical) return false;
    auto found = cache_->functions.find(e.name);
    if (found == cache_->functions.end() || found->second.target != target ||
        cache_->dirty(e.sysfs_path)) {
      return false;
    }
    read = found->second.read;
    ++reused_;
    return true;
  }

  // A virtual function that came or went changed its physical function's sriov_numvfs: a reused
  // physical function is read again.
  Result<void> reread_physical_functions(const std::vector<PciEntry>& entries,
                                         std::vector<PciFunctionRead>& reads) {
    std::set<PciAddress> pfs;
    std::set<std::string, std::less<>> present;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      present.insert(entries[i].name);
      const bool fresh = read_now_[i] != 0;
      if (fresh && reads[i].info && reads[i].info->physical_function) {
        pfs.insert(*reads[i].info->physical_function);
      }
    }
    for (const auto& [name, f] : cache_->functions) {
      if (!present.contains(name) && f.read.info && f.read.info->physical_function) {
        pfs.insert(*f.read.info->physical_function);
      }
    }
    if (pfs.empty()) return {};
    std::vector<std::size_t> again;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const bool fresh = read_now_[i] != 0;
      if (!fresh && pfs.contains(entries[i].address)) again.push_back(i);
    }
    reused_ -= again.size();
    return read_all(entries, again, reads);
  }

  // Entries whose joined path did not open as canonical (a symlink or a missing directory on the
  // way, in a damaged capture): resolved in full and read again, or dropped with a warning. A
  // libpci that cannot be opened for one of them fails the walk, as in read_all().
  Result<void> relocate(std::vector<PciEntry>& entries, std::vector<PciFunctionRead>& reads) {
    // The common case, every path canonical: nothing to rebuild (on a thousand functions the
    // copy alone was 400 KB of fresh pages, and their faults).
    if (std::none_of(reads.begin(), reads.end(),
                     [](const PciFunctionRead& read) { return read.not_canonical; })) {
      return {};
    }
    std::optional<PciFunctionReader> reader;
    std::vector<PciEntry> kept_entries;
    std::vector<PciFunctionRead> kept_reads;
    std::vector<std::string> kept_targets;
    kept_entries.reserve(entries.size());
    kept_reads.reserve(reads.size());
    kept_targets.reserve(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (!reads[i].not_canonical) {
        kept_entries.push_back(std::move(entries[i]));
        kept_reads.push_back(std::move(reads[i]));
        kept_targets.push_back(std::move(targets_[i]));
        continue;
      }
      auto entry = resolved_entry(entries[i].name, entries[i].address);
      if (!entry) continue;
      if (!reader) reader.emplace(root_, LibpciConfig());
      kept_reads.push_back(reader->read(*entry));
      if (const auto& error = reader->libpci_error()) return *error;  // as read_all() fails
      kept_entries.push_back(std::move(*entry));
      kept_targets.emplace_back();  // resolved: not cached
    }
    entries = std::move(kept_entries);
    reads = std::move(kept_reads);
    targets_ = std::move(kept_targets);
    return {};
  }

  // Reads the functions `which` (indexes into `entries`), one hierarchy at a time per reader
  // (hierarchies()), on several threads when there are many. Results keep the entries' order,
  // and what a reader reads depends only on its hierarchy, so the tree and the warnings do not
  // depend on thread scheduling.
  Result<void> read_all(const std::vector<PciEntry>& entries, const std::vector<std::size_t>& which,
                        std::vector<PciFunctionRead>& reads) {
    for (std::size_t i : which)
      read_now_[i] = 1;
    if (which.empty()) return {};
    const std::vector<std::vector<std::size_t>> groups = hierarchies(entries, which);
    const unsigned hardware = usable_cpus();
    const auto threads = static_cast<unsigned>(
        std::min<std::size_t>({std::size_t{hardware}, std::size_t{kMaxReaderThreads}, groups.size(),
                               (which.size() + kFunctionsPerThread - 1) / kFunctionsPerThread}));
    // Each with a decoder of its own, which opens libpci when a function's capabilities must
    // be walked (a capture's 64-byte headers never need it). A cache line each: a reader
    // writes its state at every function, which would bounce the line its neighbour reads.
    struct alignas(64) OwnLine {
      PciFunctionReader reader;
    };
    std::vector<OwnLine> readers;
    for (unsigned t = 0; t < std::max(threads, 1U); ++t)
      readers.push_back(OwnLine{PciFunctionReader(root_, LibpciConfig())});
    detail::for_each_on_threads(
        groups.size(), static_cast<unsigned>(readers.size()),
        [&](unsigned worker, std::size_t g) {
          PciFunctionReader& reader = readers[worker].reader;
          PciDirChain chain(root_);
          PciFunctionReader::LocalCpusByNode local_cpus;
          for (std::size_t i : groups[g]) {
            const PciEntry& e = entries[i];
            const SysDir* dir = e.lexical ? chain.open(e.sysfs_path) : nullptr;
            reads[i] =
                dir != nullptr ? reader.read(e, *dir, &local_cpus) : reader.read(e, &local_cpus);
          }
        },
        // Every descriptor of a group's read is closed by its end: the chain's directories, the
        // files read, libpci's (its reads outside the cache fail at a path that does not exist).
        detail::Descriptors::kPrivatePerWorker);
    for (const OwnLine& own : readers) {
      if (const auto& error = own.reader.libpci_error()) return *error;
    }
    return {};
  }

  // The entries `which`, one group per root bus in path order (parents before children): one
  // reader reads a group, opening each directory through its parent (PciDirChain) where the
  // entry's path was joined from its link, and sharing the local CPUs of a NUMA node.
  static std::vector<std::vector<std::size_t>> hierarchies(const std::vector<PciEntry>& entries,
                                                           const std::vector<std::size_t>& which) {
    std::vector<std::vector<std::size_t>> groups;
    std::map<std::string_view, std::size_t> by_root_bus;
    for (std::size_t i : which) {
      const auto [it, added] = by_root_bus.try_emplace(entries[i].root_bus, groups.size());
      if (added) groups.emplace_back();
      groups[it->second].push_back(i);
    }
    for (std::vector<std::size_t>& group : groups) {
      std::sort(group.begin(), group.end(), [&entries](std::size_t a, std::size_t b) {
        return entries[a].sysfs_path < entries[b].sysfs_path;
      });
    }
    return groups;
  }

  // Keeps every function read through a plain link for the next discovery.
  void remember(const std::vector<PciEntry>& entries, const std::vector<PciFunctionRead>& reads) {
    std::map<std::string, detail::PciCache::Function, std::less<>> kept;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (targets_[i].empty() || reads[i].not_canonical) continue;
      kept.emplace(entries[i].name, detail::PciCache::Function{targets_[i], entries[i], reads[i]});
    }
    cache_->functions = std::move(kept);
    cache_->valid = true;
    cache_->all_dirty = false;
    cache_->dirty_paths.clear();
  }

 public:
  [[nodiscard]] std::size_t reused() const { return reused_; }
  [[nodiscard]] std::size_t read() const {
    return static_cast<std::size_t>(std::count(read_now_.begin(), read_now_.end(), 1));
  }

 private:
  ProbeContext& ctx_;
  const SysRoot& root_;
  detail::PciCache* cache_;
  std::vector<std::string> targets_;  // per entry: the link's text, empty when resolved in full
  std::vector<char> read_now_;        // per entry: read from sysfs in this discovery
  std::size_t reused_ = 0;
};

// One pass over the system's pci.ids for `queries` (see pci_ids.hpp for why not libpci's lookup).
PciNames scan_pci_ids(ProbeContext& ctx, const std::vector<PciNameQuery>& queries) {
  const std::optional<PciIdsFile> ids = PciIdsFile::open_system();
  if (!ids) ctx.log().info("no pci.ids found: names only for the parts nodetopo knows itself");
  if (ctx.cache() != nullptr) ctx.cache()->mutable_stats().pci_ids_scanned = true;
  return ids ? lookup_pci_names(*ids, queries) : PciNames{};
}

PciNameQuery name_query(const PciFunctionInfo& f) {
  return {f.vendor_id, f.device_id, static_cast<std::uint16_t>(f.class_code >> 8)};
}

class PciDiscovery {
 public:
  PciDiscovery(ProbeContext& ctx, TopologyBuilder& builder)
      : ctx_(ctx), root_(ctx.root()), builder_(builder) {
    // Copied: the builder's node vector grows while the probe adds functions.
    for (NodeIndex i : builder_.nodes_of_kind(NodeKind::kNumaNode)) {
      const auto& numa = builder_.node(i).as<NumaInfo>();
      if (!numa.cpus.empty()) numa_nodes_.push_back({numa.os_index, numa.cpus});
      numa_ids_.push_back(numa.os_index);
    }
  }

  // Adds what the walk read: NUMA nodes settled against the platform, parents before children.
  // `names`: those the walk already looked up (no cache), else nullptr.
  void run(std::vector<PciEntry>& entries, std::vector<PciFunctionRead>& reads,
           const PciNames* names) {
    for (PciFunctionRead& read : reads)
      resolve_numa(root_, read, numa_nodes_, numa_ids_);
    // Parents before children: the hierarchy is a prefix order of the device paths.
    std::vector<std::size_t> order(entries.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::sort(order.begin(), order.end(), [&entries](std::size_t a, std::size_t b) {
      const PciEntry& x = entries[a];
      const PciEntry& y = entries[b];
      if (x.ancestors.size() != y.ancestors.size()) return x.ancestors.size() < y.ancestors.size();
      return x.address < y.address;
    });
    // Room for the functions, their host bridges and the OS devices the later probes hang under
    // them (accelerators, NVSwitches, net and RDMA devices: at most a few per function, most
    // have none). Growing past the capacity would copy every node (384 bytes each) to fresh
    // pages; capacity never used costs no memory, as a buffer this large is mapped, not carved
    // from the heap, and its pages are only faulted in when written.
    builder_.reserve(2 * entries.size() + 16);
    for (std::size_t i : order)
      add_function(entries[i], reads[i]);
    fill_names(names);
    place_host_bridges();
  }

 private:
  void add_function(const PciEntry& e, PciFunctionRead& read) {
    for (const Error& w : read.warnings)
      ctx_.warn(w);
    if (!read.info) return;
    NodeIndex parent = kNoNode;
    for (auto it = e.ancestors.rbegin(); it != e.ancestors.rend() && parent == kNoNode; ++it) {
      if (auto found = builder_.find(node_id::pci(*it))) parent = *found;
    }
    if (parent == kNoNode) parent = host_bridge_for(e.root_bus);
    const NodeKind kind = read.bridge ? NodeKind::kPciBridge : NodeKind::kPciDevice;
    auto added =
        builder_.add(kind, node_id::pci(e.address.to_string()), parent, std::move(*read.info));
    if (!added) ctx_.warn(added.error());
  }

  NodeIndex host_bridge_for(const std::string& root_bus) {
    const std::string id = node_id::host_bridge(root_bus);
    if (auto found = builder_.find(id)) return *found;
    HostBridgeInfo hb;
    hb.root_name = root_bus;
    // "pciDDDD:BB": parse domain and bus from the name itself.
    const std::size_t colon = root_bus.find(':');
    hb.domain = static_cast<std::uint32_t>(std::stoul(root_bus.substr(3, colon - 3), nullptr, 16));
    hb.bus = static_cast<std::uint8_t>(std::stoul(root_bus.substr(colon + 1), nullptr, 16));
    return builder_.add(NodeKind::kHostBridge, id, builder_.root(), std::move(hb)).value();
  }

  // Names for every function at once: the project's table of recent parts first, then pci.ids
  // for the rest. Without a cache the walk has scanned pci.ids already (`scanned`), beside
  // hwloc's load; with one, pci.ids is scanned only for IDs it has not been asked for, and the
  // cache keeps the names of the devices present only.
  void fill_names(const PciNames* scanned) {
    std::vector<NodeIndex> functions = builder_.nodes_of_kind(NodeKind::kPciDevice);
    for (NodeIndex i : builder_.nodes_of_kind(NodeKind::kPciBridge))
      functions.push_back(i);
    std::vector<PciNameQuery> queries;
    for (NodeIndex i : functions)
      queries.push_back(name_query(builder_.node(i).as<PciFunctionInfo>()));
    detail::PciCache* cache = ctx_.cache() != nullptr ? &ctx_.cache()->pci() : nullptr;
    PciNames fresh;
    if (cache == nullptr && scanned == nullptr) fresh = scan_pci_ids(ctx_, queries);
    const PciNames& names = cache != nullptr     ? cached_names(*cache, queries)
                            : scanned != nullptr ? *scanned
                                                 : fresh;
    for (NodeIndex i : functions) {
      auto& f = builder_.node(i).as<PciFunctionInfo>();
      f.class_name = names.class_name(static_cast<std::uint16_t>(f.class_code >> 8));
      if (auto known = find_known_pci_device(f.vendor_id, f.device_id)) {
        f.vendor_name = std::string(known->vendor_name);
        f.device_name = std::string(known->device_name);
        continue;
      }
      if (f.vendor_id == 0 && f.device_id == 0) continue;
      f.vendor_name = names.vendor(f.vendor_id);
      if (f.vendor_name.empty()) {
        if (auto v = find_known_pci_vendor(f.vendor_id)) f.vendor_name = std::string(*v);
      }
      f.device_name = names.device(f.vendor_id, f.device_id);
    }
  }

  // The cache's names, completed for IDs not asked before and trimmed to those of `queries`.
  const PciNames& cached_names(detail::PciCache& cache, const std::vector<PciNameQuery>& queries) {
    std::vector<PciNameQuery> missing;
    std::set<std::uint16_t> vendors;
    std::set<std::pair<std::uint16_t, std::uint16_t>> devices;
    std::set<std::uint16_t> classes;
    for (const PciNameQuery& q : queries) {
      vendors.insert(q.vendor_id);
      devices.insert({q.vendor_id, q.device_id});
      classes.insert(q.class_id);
      if (!cache.vendors_asked.contains(q.vendor_id) ||
          !cache.devices_asked.contains({q.vendor_id, q.device_id}) ||
          !cache.classes_asked.contains(q.class_id)) {
        missing.push_back(q);
      }
    }
    if (!missing.empty()) {
      PciNames found = scan_pci_ids(ctx_, missing);
      cache.names.vendors.merge(found.vendors);
      cache.names.devices.merge(found.devices);
      cache.names.classes.merge(found.classes);
    }
    std::erase_if(cache.names.vendors, [&](const auto& kv) { return !vendors.contains(kv.first); });
    std::erase_if(cache.names.devices, [&](const auto& kv) { return !devices.contains(kv.first); });
    std::erase_if(cache.names.classes, [&](const auto& kv) { return !classes.contains(kv.first); });
    cache.vendors_asked = std::move(vendors);
    cache.devices_asked = std::move(devices);
    cache.classes_asked = std::move(classes);
    return cache.names;
  }

  // A host bridge goes where the devices below it are local: their NUMA node, else the package
  // that holds their CPUs, else the machine.
  void place_host_bridges() {
    for (NodeIndex hb : builder_.nodes_of_kind(NodeKind::kHostBridge)) {
      std::optional<std::uint32_t> numa;
      CpuSet cpus;
      visit_functions(hb, [&](const PciFunctionInfo& f) {
        if (!numa && f.numa_node) numa = f.numa_node;
        if (cpus.empty()) cpus = f.local_cpus;
      });
      builder_.node(hb).as<HostBridgeInfo>().numa_node = numa;
      std::optional<NodeIndex> target;
      if (numa) target = builder_.find(node_id::numa(*numa));
      if (!target && !cpus.empty()) {
        for (NodeIndex p : builder_.nodes_of_kind(NodeKind::kPackage)) {
          if (cpus.is_subset_of(builder_.node(p).as<PackageInfo>().cpus)) target = p;
        }
      }
      if (target) {
        auto moved = builder_.move_under(hb, *target);
        if (!moved) ctx_.warn(moved.error());
      }
    }
  }

  template <class F>
  void visit_functions(NodeIndex index, F&& fn) {
    for (NodeIndex child : builder_.node(index).children) {
      const Node& node = builder_.node(child);
      if (const auto* f = node.get_if<PciFunctionInfo>()) {
        fn(*f);
        visit_functions(child, fn);
      }
    }
  }

  ProbeContext& ctx_;
  const SysRoot& root_;
  TopologyBuilder& builder_;
  std::vector<NumaCpus> numa_nodes_;
  std::vector<std::uint32_t> numa_ids_;  // every NUMA node the platform probe found
};

}  // namespace

struct PciProbe::Walked {
  std::vector<PciEntry> entries;
  std::vector<PciFunctionRead> reads;
  Result<void> result;
  std::optional<PciNames> names;  ///< looked up with the walk (no cache)
};

void PciProbe::prefetch(ProbeContext& ctx) {
  walked_ = std::make_unique<Walked>();
  detail::PciCache* cache = ctx.cache() != nullptr ? &ctx.cache()->pci() : nullptr;
  PciWalk walk(ctx, cache);
  walked_->result = walk.run(walked_->entries, walked_->reads);
  // The names too, while hwloc may still be loading: one pass over pci.ids (≈ 1 ms) that would
  // otherwise follow it. The agent's cache keeps names across refreshes instead (fill_names).
  if (cache == nullptr && walked_->result.ok()) {
    std::vector<PciNameQuery> queries;
    for (const PciFunctionRead& read : walked_->reads) {
      if (read.info) queries.push_back(name_query(*read.info));
    }
    walked_->names = scan_pci_ids(ctx, queries);
  }
  if (ctx.cache() != nullptr) {
    ctx.cache()->mutable_stats().pci_functions_read = walk.read();
    ctx.cache()->mutable_stats().pci_functions_reused = walk.reused();
  }
}

Result<void> PciProbe::discover(ProbeContext& ctx, TopologyBuilder& builder) {
  if (!walked_) prefetch(ctx);
  std::unique_ptr<Walked> walked = std::move(walked_);
  if (!walked->result.ok()) return walked->result;
  PciDiscovery discovery(ctx, builder);
  discovery.run(walked->entries, walked->reads, walked->names ? &*walked->names : nullptr);
  return {};
}

PciProbe::PciProbe() = default;
PciProbe::~PciProbe() = default;

}  // namespace nodetopo::probes
