#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include <nodetopo/probes/parsers.hpp>
#include <nodetopo/probes/pci_ids.hpp>
#include <nodetopo/probes/pci_names.hpp>
#include <nodetopo/probes/pci_probe.hpp>
#include <nodetopo/probes/sys_dir.hpp>

#include "libpci_config.hpp"

namespace nodetopo::probes {

namespace {

constexpr std::string_view kDevicesDir = "sys/bus/pci/devices";

// "pci0000:17", "pci10000:00": the kernel's name for a PCI root bus directory.
bool is_root_bus_name(std::string_view name) {
  if (!name.starts_with("pci")) return false;
  const std::size_t colon = name.find(':');
  if (colon == std::string_view::npos || colon < 7 || colon > 11 || name.size() != colon + 3) {
    return false;
  }
  // Hex digits on both sides of the one colon ("pci0000::0" has the length but no bus).
  const auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  return std::all_of(name.begin() + 3, name.begin() + static_cast<std::ptrdiff_t>(colon), hex) &&
         std::all_of(name.begin() + static_cast<std::ptrdiff_t>(colon) + 1, name.end(), hex);
}

// One enumerated function before it becomes a node.
struct Entry {
  PciAddress address;
  std::string name;                   // directory name under bus/pci/devices
  std::string sysfs_path;             // resolved, root-relative
  std::string root_bus;               // "pci0000:17": the root bus the function's domain hangs from
  std::string pcie_root;              // the first root bus on the path (Kubernetes' pcieRoot)
  std::vector<PciAddress> ancestors;  // PCI functions on the path, outermost first
};

// Splits a resolved device path into its root bus and PCI ancestors. Path components before the
// root bus (ARM SoCs put root complexes under platform/...) are ignored. A root bus may nest
// inside a PCI function: Intel VMD puts its domain's root bus in the VMD endpoint
// (pci0000:00/0000:00:0e.0/pci10000:00/10000:00:02.0); the function then belongs to the inner
// root bus, as the kernel's bus hierarchy and lspci have it, and keeps the outer one as its PCIe
// root.
std::optional<Entry> parse_device_path(std::string_view resolved) {
  if (!resolved.starts_with("sys/devices/")) return std::nullopt;
  Entry entry;
  std::size_t start = std::string_view("sys/devices/").size();
  bool in_pci = false;
  while (start < resolved.size()) {
    const std::size_t end = std::min(resolved.find('/', start), resolved.size());
    const std::string_view part = resolved.substr(start, end - start);
    start = end + 1;
    if (!in_pci) {
      if (is_root_bus_name(part)) {
        entry.root_bus = std::string(part);
        entry.pcie_root = entry.root_bus;
        in_pci = true;
      }
      continue;
    }
    if (is_root_bus_name(part) && !entry.ancestors.empty()) {
      entry.root_bus = std::string(part);
      entry.ancestors.clear();
      continue;
    }
    auto addr = parse_pci_address(part);
    if (!addr) return std::nullopt;  // a non-PCI component inside a PCI path is not a device dir
    entry.ancestors.push_back(*addr);
  }
  if (!in_pci || entry.ancestors.empty()) return std::nullopt;
  entry.address = entry.ancestors.back();
  entry.ancestors.pop_back();
  entry.sysfs_path = std::string(resolved);
  return entry;
}

// Whether a function is a bridge that forwards to a secondary bus (its children nest below it).
bool is_bridge(const std::optional<DecodedConfig>& config, std::uint32_t class_code) {
  if (config) return config->header_type == 1 || config->header_type == 2;
  // Without config space (some captures have none), fall back to the class code: PCI-to-PCI
  // bridge, semi-transparent bridge.
  const std::uint32_t cls = class_code >> 8;
  return cls == 0x0604 || cls == 0x0609;
}

// The one NUMA node whose CPUs contain `cpus`; nullopt when none or several.
struct NumaCpus {
  std::uint32_t os_index;
  CpuSet cpus;
};

// The one NUMA node whose CPUs contain all of `cpus`; nullopt when they span several or none.
std::optional<std::uint32_t> numa_from_cpus(const CpuSet& cpus,
                                            const std::vector<NumaCpus>& numa_nodes) {
  if (cpus.empty()) return std::nullopt;
  std::optional<std::uint32_t> found;
  for (const NumaCpus& numa : numa_nodes) {
    if (!numa.cpus.intersects(cpus)) continue;
    if (found || !cpus.is_subset_of(numa.cpus)) return std::nullopt;
    found = numa.os_index;
  }
  return found;
}

class PciDiscovery {
 public:
  PciDiscovery(ProbeContext& ctx, TopologyBuilder& builder, LibpciConfig& libpci)
      : ctx_(ctx), root_(ctx.root()), builder_(builder), libpci_(libpci) {
    // Copied: the builder's node vector grows while the probe adds functions.
    for (NodeIndex i : builder_.nodes_of_kind(NodeKind::kNumaNode)) {
      const auto& numa = builder_.node(i).as<NumaInfo>();
      if (!numa.cpus.empty()) numa_nodes_.push_back({numa.os_index, numa.cpus});
      numa_ids_.push_back(numa.os_index);
    }
  }

  Result<void> run() {
    auto names = root_.list_dir(kDevicesDir);
    if (!names) {
      if (names.error().code == ErrorCode::kNotFound) {
        return make_error(ErrorCode::kUnavailable, "no PCI bus in this root",
                          root_.host_path(kDevicesDir));
      }
      return names.error();
    }
    std::vector<Entry> entries = enumerate(names.value());
    // Parents before children: the hierarchy is a prefix order of the resolved paths.
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      if (a.ancestors.size() != b.ancestors.size()) return a.ancestors.size() < b.ancestors.size();
      return a.address < b.address;
    });
    for (const Entry& entry : entries)
      add_function(entry);
    fill_names();
    place_host_bridges();
    return {};
  }

 private:
  std::vector<Entry> enumerate(const std::vector<std::string>& names) {
    std::vector<Entry> entries;
    entries.reserve(names.size());
    for (const std::string& name : names) {
      const std::string rel = std::string(kDevicesDir) + "/" + name;
      auto addr = parse_pci_address(name);
      if (!addr) {
        ctx_.warn("skipped: entry name is not a PCI address", root_.host_path(rel));
        continue;
      }
      auto resolved = root_.resolve(rel);
      if (!resolved) {
        ctx_.warn("skipped: " + resolved.error().message, resolved.error().path);
        continue;
      }
      auto entry = parse_device_path(resolved.value());
      if (!entry && resolved.value() == rel) {
        // A plain directory instead of the kernel's symlink (trimmed captures): its place in the
        // hierarchy is unknown, so it hangs directly under the host bridge of its own bus, as
        // hwloc does with such entries.
        ctx_.warn(
            "not a symlink into sys/devices: parent bridge unknown, placed under host "
            "bridge " +
                pci_root_name(addr->domain, addr->bus),
            root_.host_path(rel));
        entry = Entry{};
        entry->address = *addr;
        entry->sysfs_path = rel;
        entry->root_bus = pci_root_name(addr->domain, addr->bus);
        entry->pcie_root = entry->root_bus;
      }
      if (!entry || !(entry->address == *addr)) {
        ctx_.warn(
            "skipped: link does not lead to a PCI device directory under sys/devices (it "
            "resolves to '" +
                resolved.value() + "')",
            root_.host_path(rel));
        continue;
      }
      entry->name = name;
      entries.push_back(std::move(*entry));
    }
    return entries;
  }

  // Optional attribute: absent is normal, unreadable or malformed drops it with a warning.
  std::optional<std::string> optional_attr(const SysDir& dir, std::string_view attr) {
    if (!dir.has(attr)) return std::nullopt;
    auto value = dir.read_attr(attr);
    if (value) return std::move(value.value());
    ctx_.warn(value.error());
    return std::nullopt;
  }

  template <class T>
  std::optional<T> parsed_attr(const SysDir& dir, std::string_view attr,
                               Result<T> (*parse)(std::string_view)) {
    auto text = optional_attr(dir, attr);
    if (!text) return std::nullopt;
    auto value = parse(*text);
    if (!value) {
      ctx_.warn(value.error().message + " (attribute ignored)",
                root_.host_path(dir.rel() + "/" + std::string(attr)));
      return std::nullopt;
    }
    return std::move(value.value());
  }

  // A mandatory hex attribute (class, vendor, device): missing, unreadable or malformed is an error
  // naming the file.
  Result<std::uint64_t> read_hex(const SysDir& dir, std::string_view attr, std::uint64_t max) {
    auto text = dir.read_attr(attr);
    if (!text) return text.error();
    auto value = parse_hex(*text, max);
    if (!value) {
      return make_error(ErrorCode::kMalformed, value.error().message,
                        root_.host_path(dir.rel() + "/" + std::string(attr)));
    }
    return value;
  }

  std::optional<std::uint16_t> id_attr(const SysDir& dir, std::string_view attr) {
    auto v = parsed_attr<std::uint64_t>(
        dir, attr, +[](std::string_view t) { return parse_hex(t, 0xffff); });
    if (!v) return std::nullopt;
    return static_cast<std::uint16_t>(*v);
  }

  NodeIndex host_bridge_for(const std::string& root_bus) {
    const std::string id = "hostbridge/" + root_bus;
    if (auto found = builder_.find(id)) return *found;
    HostBridgeInfo hb;
    hb.root_name = root_bus;
    // "pciDDDD:BB": parse domain and bus from the name itself.
    const std::size_t colon = root_bus.find(':');
    hb.domain = static_cast<std::uint32_t>(std::stoul(root_bus.substr(3, colon - 3), nullptr, 16));
    hb.bus = static_cast<std::uint8_t>(std::stoul(root_bus.substr(colon + 1), nullptr, 16));
    return builder_.add(NodeKind::kHostBridge, id, builder_.root(), std::move(hb)).value();
  }

  void add_function(const Entry& e) {
    auto opened = root_.open_dir(e.sysfs_path);
    if (!opened) {
      ctx_.warn("skipped: " + opened.error().message, opened.error().path);
      return;
    }
    const SysDir& dir = opened.value();
    // One warning per damaged function, naming the file at fault.
    auto cls = read_hex(dir, "class", 0xffffff);
    if (!cls) {
      ctx_.warn("skipped: class code unreadable: " + cls.error().message, cls.error().path);
      return;
    }
    PciFunctionInfo f;
    f.address = e.address;
    f.class_code = static_cast<std::uint32_t>(*cls);
    f.sysfs_path = e.sysfs_path;
    f.pcie_root = e.pcie_root;
    auto vendor = read_hex(dir, "vendor", 0xffff);
    auto device = vendor ? read_hex(dir, "device", 0xffff) : vendor;
    if (!vendor || !device) {
      const Error& err = !vendor ? vendor.error() : device.error();
      ctx_.warn("vendor/device ids unreadable, reported as 0000:0000: " + err.message, err.path);
    } else {
      f.vendor_id = static_cast<std::uint16_t>(*vendor);
      f.device_id = static_cast<std::uint16_t>(*device);
    }

    // Header type, bus numbers, revision and the PCIe port type come from config space, read
    // once here and decoded by libpci from that buffer.
    std::optional<DecodedConfig> config;
    if (auto bytes = optional_config(dir)) {
      const auto* data = reinterpret_cast<const std::uint8_t*>(bytes->data());
      config = libpci_.decode(e.address, std::span<const std::uint8_t>(data, bytes->size()));
    }
    // Config space, when readable, already holds what sysfs also exports as files (revision,
    // subsystem ids, link state): read those files only when it does not, so that each fact is
    // read once.
    if (config) {
      f.revision = config->revision;
      f.secondary_bus = config->secondary_bus;
      f.subordinate_bus = config->subordinate_bus;
      f.port_type = config->port_type;
    } else if (auto rev = id_attr(dir, "revision")) {
      f.revision = static_cast<std::uint8_t>(*rev);
    }
    if (config && config->subsystem_known) {
      f.subsystem_vendor_id = config->subsystem_vendor_id;
      f.subsystem_device_id = config->subsystem_device_id;
    } else {
      if (auto v = id_attr(dir, "subsystem_vendor")) f.subsystem_vendor_id = *v;
      if (auto d = id_attr(dir, "subsystem_device")) f.subsystem_device_id = *d;
    }
    if (config && config->port_type) {
      f.link_current = config->link_current;
      f.link_max = config->link_max;
    } else {
      f.link_current.speed_mts =
          parsed_attr<std::uint32_t>(dir, "current_link_speed", parse_link_speed).value_or(0);
      f.link_current.width =
          parsed_attr<std::uint32_t>(dir, "current_link_width", parse_link_width).value_or(0);
      f.link_max.speed_mts =
          parsed_attr<std::uint32_t>(dir, "max_link_speed", parse_link_speed).value_or(0);
      f.link_max.width =
          parsed_attr<std::uint32_t>(dir, "max_link_width", parse_link_width).value_or(0);
    }

    if (auto driver = dir.read_link("driver")) {
      const std::string& target = driver.value();
      f.driver = target.substr(target.rfind('/') + 1);
    }
    if (auto cpus = parsed_attr<CpuSet>(dir, "local_cpulist", parse_cpulist)) {
      f.local_cpus = std::move(*cpus);
    } else if (auto mask = parsed_attr<CpuSet>(dir, "local_cpus", parse_cpumask)) {
      f.local_cpus = std::move(*mask);  // kernels and captures without the list form
    }
    auto numa = parsed_attr<std::optional<std::uint32_t>>(dir, "numa_node", parse_numa_node);
    if (numa && *numa && !numa_ids_.empty() &&
        std::find(numa_ids_.begin(), numa_ids_.end(), **numa) == numa_ids_.end()) {
      // A node the platform does not have (a damaged capture): never published as a dangling
      // reference.
      ctx_.warn("names NUMA node " + std::to_string(**numa) +
                    ", which this machine does not have (attribute ignored)",
                root_.host_path(dir.rel() + "/numa_node"));
      numa.reset();
    }
    if (numa && *numa) {
      f.numa_node = *numa;
    } else {
      // numa_node -1 (VMs, single-socket boards, some BIOSes): derive it from the CPUs.
      f.numa_node = numa_from_cpus(f.local_cpus, numa_nodes_);
    }
    f.sriov_total_vfs = narrow(parsed_attr<std::uint64_t>(dir, "sriov_totalvfs", parse_uint));
    if (f.sriov_total_vfs) {
      f.sriov_num_vfs = narrow(parsed_attr<std::uint64_t>(dir, "sriov_numvfs", parse_uint));
    }
    if (auto physfn = dir.read_link("physfn")) {
      const std::string& target = physfn.value();
      if (auto pf = parse_pci_address(target.substr(target.rfind('/') + 1))) {
        f.is_virtual_function = true;
        f.physical_function = *pf;
      }
    }

    NodeIndex parent = kNoNode;
    for (auto it = e.ancestors.rbegin(); it != e.ancestors.rend() && parent == kNoNode; ++it) {
      if (auto found = builder_.find("pci/" + it->to_string())) parent = *found;
    }
    if (parent == kNoNode) parent = host_bridge_for(e.root_bus);

    const NodeKind kind =
        is_bridge(config, f.class_code) ? NodeKind::kPciBridge : NodeKind::kPciDevice;
    auto added = builder_.add(kind, "pci/" + e.address.to_string(), parent, std::move(f));
    if (!added) ctx_.warn(added.error());
  }

  static std::optional<std::uint32_t> narrow(std::optional<std::uint64_t> v) {
    if (!v || *v > UINT32_MAX) return std::nullopt;
    return static_cast<std::uint32_t>(*v);
  }

  // config is optional (some captures lack it); shorter than the 64-byte header it is unusable.
  std::optional<std::string> optional_config(const SysDir& dir) {
    auto bytes = optional_attr_raw(dir, "config", 4096);
    if (!bytes) return std::nullopt;
    if (bytes->size() < kPciConfigHeaderSize) {
      ctx_.warn("config space truncated (" + std::to_string(bytes->size()) +
                    " bytes, the header has 64): bridge bus numbers and PCIe port type unknown",
                root_.host_path(dir.rel() + "/config"));
      return std::nullopt;
    }
    return bytes;
  }

  std::optional<std::string> optional_attr_raw(const SysDir& dir, std::string_view attr,
                                               std::size_t max) {
    if (!dir.has(attr)) return std::nullopt;
    auto value = dir.read_file(attr, max);
    if (value) return std::move(value.value());
    ctx_.warn(value.error());
    return std::nullopt;
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
      if (numa) target = builder_.find("numa/" + std::to_string(*numa));
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
  LibpciConfig& libpci_;
  std::vector<NumaCpus> numa_nodes_;
  std::vector<std::uint32_t> numa_ids_;  // every NUMA node the platform probe found
};

}  // namespace

Result<void> PciProbe::discover(ProbeContext& ctx, TopologyBuilder& builder) {
  auto libpci = LibpciConfig::open();
  if (!libpci) return libpci.error();
  PciDiscovery discovery(ctx, builder, libpci.value());
  return discovery.run();
}

}  // namespace nodetopo::probes
