#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include <nodetopo/probes/parsers.hpp>
#include <nodetopo/probes/pci_ids.hpp>
#include <nodetopo/probes/pci_names.hpp>
#include <nodetopo/probes/pci_probe.hpp>
#include <nodetopo/probes/sys_dir.hpp>
#include <nodetopo/topology/ids.hpp>

#include "pci/libpci_config.hpp"
#include "pci/pci_device_path.hpp"
#include "pci/pci_function_reader.hpp"

namespace nodetopo::probes {

namespace {

constexpr std::string_view kDevicesDir = "sys/bus/pci/devices";

// Functions one reader thread takes on before another is worth starting; and the most threads.
// Reading sysfs is system-call bound: on a 1000-function node a few threads halve the wall time,
// more only contend for the kernel's directory locks.
constexpr std::size_t kFunctionsPerThread = 128;
constexpr unsigned kMaxReaderThreads = 4;

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

  Result<void> run() {
    auto bus = open_subsystem(root_, kDevicesDir, "no PCI bus in this root");
    if (!bus) return bus.error();
    std::vector<PciEntry> entries = enumerate(bus.value());
    auto reads = read_all(entries);
    if (!reads) return reads.error();
    relocate(entries, reads.value());
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
    for (std::size_t i : order)
      add_function(entries[i], reads.value()[i]);
    fill_names();
    place_host_bridges();
    return {};
  }

 private:
  // Each entry of bus/pci/devices is the kernel's link into sys/devices. Its text is read through
  // the directory's descriptor and joined as a path; the reader then proves that path canonical
  // when it opens the device directory (one openat2 in all, where resolving the link walked and
  // looked up every component). Entries that are not such plain links, or whose path does not
  // open as canonical, are resolved in full, with a warning for whatever is wrong with them.
  std::vector<PciEntry> enumerate(const SysDir& bus) {
    std::vector<PciEntry> entries;
    entries.reserve(bus.entries().size());
    for (const auto& [entry_name, type] : bus.entries()) {
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
      if (auto entry = resolved_entry(name, *addr)) entries.push_back(std::move(*entry));
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

  // Entries whose joined path did not open as canonical (a symlink or a missing directory on the
  // way, in a damaged capture): resolved in full and read again, or dropped with a warning.
  void relocate(std::vector<PciEntry>& entries, std::vector<PciFunctionRead>& reads) {
    std::optional<PciFunctionReader> reader;
    std::vector<PciEntry> kept_entries;
    std::vector<PciFunctionRead> kept_reads;
    kept_entries.reserve(entries.size());
    kept_reads.reserve(reads.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (!reads[i].not_canonical) {
        kept_entries.push_back(std::move(entries[i]));
        kept_reads.push_back(std::move(reads[i]));
        continue;
      }
      auto entry = resolved_entry(entries[i].name, entries[i].address);
      if (!entry) continue;
      if (!reader) {
        auto libpci = LibpciConfig::open();
        if (!libpci) {
          ctx_.warn(libpci.error());
          continue;
        }
        reader.emplace(root_, std::move(libpci.value()), numa_nodes_, numa_ids_);
      }
      kept_reads.push_back(reader->read(*entry));
      kept_entries.push_back(std::move(*entry));
    }
    entries = std::move(kept_entries);
    reads = std::move(kept_reads);
  }

  // Reads every function, on several threads when there are many. Results keep the entries'
  // order, so the tree and the warnings do not depend on thread scheduling.
  Result<std::vector<PciFunctionRead>> read_all(const std::vector<PciEntry>& entries) {
    std::vector<PciFunctionRead> reads(entries.size());
    const unsigned hardware = std::max(1U, std::thread::hardware_concurrency());
    const auto threads = static_cast<unsigned>(
        std::min<std::size_t>({std::size_t{hardware}, std::size_t{kMaxReaderThreads},
                               (entries.size() + kFunctionsPerThread - 1) / kFunctionsPerThread}));
    std::vector<PciFunctionReader> readers;
    for (unsigned t = 0; t < std::max(threads, 1U); ++t) {
      auto libpci = LibpciConfig::open();
      if (!libpci) return libpci.error();
      readers.emplace_back(root_, std::move(libpci.value()), numa_nodes_, numa_ids_);
    }
    std::atomic<std::size_t> next{0};
    auto work = [&](PciFunctionReader& reader) {
      for (std::size_t i = next++; i < entries.size(); i = next++)
        reads[i] = reader.read(entries[i]);
    };
    if (readers.size() == 1) {
      work(readers.front());
    } else {
      std::vector<std::jthread> pool;
      for (std::size_t t = 1; t < readers.size(); ++t)
        pool.emplace_back(work, std::ref(readers[t]));
      work(readers.front());
    }  // the pool joins here
    return reads;
  }

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

  // Names for every function at once: the project's table of recent parts first, then one
  // pass over pci.ids for the rest (see pci_ids.hpp for why not libpci's lookup).
  void fill_names() {
    std::vector<NodeIndex> functions = builder_.nodes_of_kind(NodeKind::kPciDevice);
    for (NodeIndex i : builder_.nodes_of_kind(NodeKind::kPciBridge))
      functions.push_back(i);
    std::vector<PciNameQuery> queries;
    for (NodeIndex i : functions) {
      const auto& f = builder_.node(i).as<PciFunctionInfo>();
      queries.push_back({f.vendor_id, f.device_id, static_cast<std::uint16_t>(f.class_code >> 8)});
    }
    const std::optional<PciIdsFile> ids = PciIdsFile::open_system();
    if (!ids) ctx_.log().info("no pci.ids found: names only for the parts nodetopo knows itself");
    const PciNames names = ids ? lookup_pci_names(ids->text(), queries) : PciNames{};
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

Result<void> PciProbe::discover(ProbeContext& ctx, TopologyBuilder& builder) {
  PciDiscovery discovery(ctx, builder);
  return discovery.run();
}

}  // namespace nodetopo::probes
