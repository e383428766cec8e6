#include "pci/pci_function_reader.hpp"

#include <algorithm>
#include <functional>
#include <span>

#include <nodetopo/probes/parsers.hpp>

#include "pci/pci_config_sparse.hpp"

namespace nodetopo::probes {

namespace {

// Whether a function is a bridge that forwards to a secondary bus (its children nest below it).
bool is_bridge(const std::optional<DecodedConfig>& config, std::uint32_t class_code) {
  if (config) return config->header_type == 1 || config->header_type == 2;
  // Without config space (some captures have none), fall back to the class code: PCI-to-PCI
  // bridge, semi-transparent bridge.
  const std::uint32_t cls = class_code >> 8;
  return cls == 0x0604 || cls == 0x0609;
}

std::optional<std::uint32_t> narrow(std::optional<std::uint64_t> v) {
  if (!v || *v > UINT32_MAX) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

// Whether the kernel can have given the function sriov_* attributes: it creates them only for a
// PCI Express endpoint or root-complex integrated endpoint with an SR-IOV capability
// (drivers/pci/iov.c, sriov_init). A function that is not PCI Express, or whose PCIe capability
// names another type (a root or switch port, a legacy endpoint), has none; without a decoded
// capability it is asked.
bool may_have_sriov(const std::optional<DecodedConfig>& config) {
  if (!config) return true;
  if (config->pcie == false) return false;
  if (!config->port_type) return true;
  return *config->port_type == PciePortType::kEndpoint ||
         *config->port_type == PciePortType::kRootComplexEndpoint;
}

std::string attr_path(const SysRoot& root, const SysDir& dir, std::string_view attr) {
  return root.host_path(dir.rel() + "/" + std::string(attr));
}

}  // namespace

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

void resolve_numa(const SysRoot& root, PciFunctionRead& read,
                  const std::vector<NumaCpus>& numa_nodes,
                  const std::vector<std::uint32_t>& numa_ids) {
  if (!read.info) return;
  std::optional<std::optional<std::uint32_t>> numa = read.numa_attr;
  if (numa && *numa && !numa_ids.empty() &&
      std::find(numa_ids.begin(), numa_ids.end(), **numa) == numa_ids.end()) {
    // A node the platform does not have (a damaged capture): never published as a dangling
    // reference.
    const auto at =
        static_cast<std::ptrdiff_t>(std::min(read.numa_warning_at, read.warnings.size()));
    read.warnings.insert(read.warnings.begin() + at,
                         make_error(ErrorCode::kMalformed,
                                    "names NUMA node " + std::to_string(**numa) +
                                        ", which this machine does not have (attribute ignored)",
                                    root.host_path(read.info->sysfs_path + "/numa_node")));
    numa.reset();
  }
  if (numa && *numa) {
    read.info->numa_node = *numa;
  } else {
    // numa_node -1 (VMs, single-socket boards, some BIOSes): derive it from the CPUs.
    read.info->numa_node = numa_from_cpus(read.info->local_cpus, numa_nodes);
  }
}

PciFunctionReader::PciFunctionReader(const SysRoot& root, LibpciConfig libpci)
    : PciFunctionReader(root, std::move(libpci),
                        root.is_live() ? ConfigReads::kSparse : ConfigReads::kWhole) {}

PciFunctionReader::PciFunctionReader(const SysRoot& root, LibpciConfig libpci, ConfigReads reads)
    : root_(root), libpci_(std::move(libpci)), config_reads_(reads) {}

void PciFunctionReader::warn(std::string message, std::string path) {
  warnings_->push_back(make_error(ErrorCode::kMalformed, std::move(message), std::move(path)));
}

// Optional attribute: absent is normal, unreadable drops it with a warning.
std::optional<std::string> PciFunctionReader::optional_attr(const SysDir& dir,
                                                            std::string_view attr) {
  auto value = dir.read_attr(attr);
  if (value) return std::move(value.value());
  if (value.error().code == ErrorCode::kNotFound) return std::nullopt;
  warnings_->push_back(value.error());
  return std::nullopt;
}

// config is optional (some captures lack it); shorter than the 64-byte header it is unusable.
std::optional<std::string> PciFunctionReader::usable_config(const SysDir& dir,
                                                            Result<std::string> bytes) {
  if (!bytes) {
    if (bytes.error().code == ErrorCode::kNotFound) return std::nullopt;
    warnings_->push_back(bytes.error());
    return std::nullopt;
  }
  if (bytes->size() < kPciConfigHeaderSize) {
    warn("config space truncated (" + std::to_string(bytes->size()) +
             " bytes, the header has 64): bridge bus numbers and PCIe port type unknown",
         attr_path(root_, dir, "config"));
    return std::nullopt;
  }
  return std::move(bytes.value());
}

// Header type, bus numbers, revision and the PCIe port type come from config space, decoded by
// libpci from a buffer. A capture's `config` is read once: only the standard 256 bytes, as hwloc
// does, since nothing decoded lies in the extended space. Only when a capability runs past
// those 256 bytes (a damaged capture) is the whole file read and decoded again, so that the
// shorter read never changes the result. On a live root every dword read is a configuration
// cycle: read_config_sparse().
std::optional<DecodedConfig> PciFunctionReader::read_config(const SysDir& dir,
                                                            const PciAddress& address) {
  if (config_reads_ == ConfigReads::kSparse) {
    // A link or something other than a regular file is left to the whole read, which resolves
    // the one through the root and refuses the other, with its message.
    auto file = dir.open_file("config");
    if (file || file.error().code != ErrorCode::kInvalid) {
      return read_config_sparse(dir, std::move(file), address);
    }
  }
  return decode_whole(dir, address,
                      [&dir](std::size_t max_bytes) { return dir.read_file("config", max_bytes); });
}

std::optional<DecodedConfig> PciFunctionReader::decode_whole(
    const SysDir& dir, const PciAddress& address,
    const std::function<Result<std::string>(std::size_t)>& read_up_to) {
  auto bytes = usable_config(dir, read_up_to(kPciConfigStandardSize));
  if (!bytes) return std::nullopt;
  const auto decode = [&](const std::string& b) {
    const auto* data = reinterpret_cast<const std::uint8_t*>(b.data());
    return libpci_.decode(address, std::span<const std::uint8_t>(data, b.size()));
  };
  DecodedConfig config = decode(*bytes);
  if (config.past_buffer && bytes->size() == kPciConfigStandardSize) {
    if (auto whole = usable_config(dir, read_up_to(kPciConfigExtendedSize))) {
      config = decode(*whole);
    }
  }
  return config;
}

// Only the registers the decoder looks at (pci_config_sparse.hpp), decoded twice: with every
// byte not read as 0x00 and as 0xff. The same result proves the decoder (whatever libpci version
// is installed) looked at nothing that was not read, so it is the whole read's result.
// Otherwise — a failed or short read, a register past the standard space — the file is read
// whole through the same descriptor and decoded as a capture's is, with its warnings: what the
// sparse reads saw is never reported, so the output cannot depend on which path was taken.
std::optional<DecodedConfig> PciFunctionReader::read_config_sparse(const SysDir& dir,
                                                                   Result<SysFile> file,
                                                                   const PciAddress& address) {
  if (!file) {
    if (file.error().code != ErrorCode::kNotFound) warnings_->push_back(file.error());
    return std::nullopt;
  }
  const auto sparse = SparseConfig::read(
      [&file](std::size_t offset, std::span<std::uint8_t> out) -> std::optional<std::size_t> {
        auto got = file->read_at(offset, out);
        if (!got) return std::nullopt;
        return *got;
      });
  if (sparse) {
    DecodedConfig low = libpci_.decode(address, sparse->bytes(0x00));
    if (!low.past_buffer && low == libpci_.decode(address, sparse->bytes(0xff))) return low;
  }
  return decode_whole(dir, address,
                      [&file](std::size_t max_bytes) { return file->read_up_to(max_bytes); });
}

template <class T>
std::optional<T> PciFunctionReader::parsed_attr(const SysDir& dir, std::string_view attr,
                                                Result<T> (*parse)(std::string_view)) {
  auto text = optional_attr(dir, attr);
  if (!text) return std::nullopt;
  auto value = parse(*text);
  if (!value) {
    warn(value.error().message + " (attribute ignored)", attr_path(root_, dir, attr));
    return std::nullopt;
  }
  return std::move(value.value());
}

// A mandatory hex attribute (class, vendor, device): missing, unreadable or malformed is an error
// naming the file.
Result<std::uint64_t> PciFunctionReader::read_hex(const SysDir& dir, std::string_view attr,
                                                  std::uint64_t max) {
  auto text = dir.read_attr(attr);
  if (!text) return text.error();
  auto value = parse_hex(*text, max);
  if (!value) {
    return make_error(ErrorCode::kMalformed, value.error().message, attr_path(root_, dir, attr));
  }
  return value;
}

std::optional<std::uint16_t> PciFunctionReader::id_attr(const SysDir& dir, std::string_view attr) {
  auto v = parsed_attr<std::uint64_t>(
      dir, attr, +[](std::string_view t) { return parse_hex(t, 0xffff); });
  if (!v) return std::nullopt;
  return static_cast<std::uint16_t>(*v);
}

// The kernel's uevent file holds class, ids and bound driver: one read where the `class`,
// `vendor`, `device` files and the `driver` link take four. Captures keep it empty (hwloc's
// gatherer does not copy its content): then, silently, the separate files. A malformed or
// mismatched one is reported and the separate files are read instead.
std::optional<PciUevent> PciFunctionReader::optional_uevent(const SysDir& dir,
                                                            const PciAddress& address) {
  auto text = dir.read_file("uevent", 4096);
  if (!text) {
    if (text.error().code != ErrorCode::kNotFound) warnings_->push_back(text.error());
    return std::nullopt;
  }
  if (trim(*text).empty()) return std::nullopt;
  auto parsed = parse_pci_uevent(*text);
  if (!parsed) {
    warn(parsed.error().message + " (read the class, vendor and device files instead)",
         attr_path(root_, dir, "uevent"));
    return std::nullopt;
  }
  if (!parsed->slot_name.empty() && parsed->slot_name != address.to_string()) {
    warn("names PCI function " + parsed->slot_name + ", not " + address.to_string() +
             " (read the class, vendor and device files instead)",
         attr_path(root_, dir, "uevent"));
    return std::nullopt;
  }
  return std::move(parsed.value());
}

// Class code, vendor and device ids, subsystem ids when uevent has them, and the driver. False
// when the function cannot be placed (class code unreadable): it is skipped with one warning.
bool PciFunctionReader::read_identity(const SysDir& dir, const PciAddress& address,
                                      PciFunctionInfo& f) {
  if (auto uevent = optional_uevent(dir, address)) {
    f.class_code = uevent->class_code;
    f.vendor_id = uevent->vendor_id;
    f.device_id = uevent->device_id;
    if (uevent->subsystem_vendor_id && uevent->subsystem_device_id) {
      f.subsystem_vendor_id = *uevent->subsystem_vendor_id;
      f.subsystem_device_id = *uevent->subsystem_device_id;
      subsystem_read_ = true;
    }
    f.driver = std::move(uevent->driver);
    return true;
  }
  // One warning per damaged function, naming the file at fault.
  auto cls = read_hex(dir, "class", 0xffffff);
  if (!cls) {
    warn("skipped: class code unreadable: " + cls.error().message, cls.error().path);
    return false;
  }
  f.class_code = static_cast<std::uint32_t>(*cls);
  auto vendor = read_hex(dir, "vendor", 0xffff);
  auto device = vendor ? read_hex(dir, "device", 0xffff) : vendor;
  if (!vendor || !device) {
    const Error& err = !vendor ? vendor.error() : device.error();
    warn("vendor/device ids unreadable, reported as 0000:0000: " + err.message, err.path);
  } else {
    f.vendor_id = static_cast<std::uint16_t>(*vendor);
    f.device_id = static_cast<std::uint16_t>(*device);
  }
  if (auto driver = dir.link_if_present("driver")) {
    const std::string& target = *driver;
    f.driver = target.substr(target.rfind('/') + 1);
  }
  return true;
}

PciFunctionRead PciFunctionReader::read(const PciEntry& e, LocalCpusByNode* memo) {
  PciFunctionRead out;
  warnings_ = &out.warnings;
  subsystem_read_ = false;
  std::optional<SysDir> opened;
  if (e.lexical) {
    opened = root_.open_canonical_dir(e.sysfs_path);
    if (!opened) {
      out.not_canonical = true;
      return out;
    }
  } else {
    auto dir = root_.open_dir(e.sysfs_path);
    if (!dir) {
      warn("skipped: " + dir.error().message, dir.error().path);
      return out;
    }
    opened.emplace(std::move(dir.value()));
  }
  return read(e, *opened, memo);
}

// The local CPUs: on a NUMA kernel local_cpulist (and local_cpus) is the CPU mask of the node that
// numa_node names, or every online CPU for -1 (drivers/pci/pci-sysfs.c, pci_dev_show_local_cpu),
// so the functions of one hierarchy that name the same node read it once. A function whose
// numa_node is absent or unusable reads its own; so does the next one when a read found nothing
// usable.
CpuSet PciFunctionReader::local_cpus(const SysDir& dir,
                                     const std::optional<std::optional<std::uint32_t>>& numa,
                                     LocalCpusByNode* memo) {
  if (memo != nullptr && numa) {
    for (const auto& [node, cpus] : *memo) {
      if (node == *numa) return cpus;
    }
  }
  CpuSet cpus;
  if (auto list = parsed_attr<CpuSet>(dir, "local_cpulist", parse_cpulist)) {
    cpus = std::move(*list);
  } else if (auto mask = parsed_attr<CpuSet>(dir, "local_cpus", parse_cpumask)) {
    cpus = std::move(*mask);  // kernels and captures without the list form
  }
  if (memo != nullptr && numa && !cpus.empty()) memo->emplace_back(*numa, cpus);
  return cpus;
}

PciFunctionRead PciFunctionReader::read(const PciEntry& e, const SysDir& dir,
                                        LocalCpusByNode* memo) {
  PciFunctionRead out;
  warnings_ = &out.warnings;
  subsystem_read_ = false;
  PciFunctionInfo f;
  f.address = e.address;
  f.sysfs_path = e.sysfs_path;
  f.pcie_root = e.pcie_root;
  if (!read_identity(dir, e.address, f)) return out;

  const std::optional<DecodedConfig> config = read_config(dir, e.address);
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
  } else if (!subsystem_read_) {  // not in uevent either
    if (auto v = id_attr(dir, "subsystem_vendor")) f.subsystem_vendor_id = *v;
    if (auto d = id_attr(dir, "subsystem_device")) f.subsystem_device_id = *d;
  }
  if (config && config->port_type) {
    f.link_current = config->link_current;
    f.link_max = config->link_max;
  } else if (!config || config->pcie != false) {
    // The kernel shows the *_link_* attributes of PCI Express functions only
    // (drivers/pci/pci-sysfs.c, pcie_dev_attrs_are_visible): not asked of a conventional one.
    f.link_current.speed_mts =
        parsed_attr<std::uint32_t>(dir, "current_link_speed", parse_link_speed).value_or(0);
    f.link_current.width =
        parsed_attr<std::uint32_t>(dir, "current_link_width", parse_link_width).value_or(0);
    f.link_max.speed_mts =
        parsed_attr<std::uint32_t>(dir, "max_link_speed", parse_link_speed).value_or(0);
    f.link_max.width =
        parsed_attr<std::uint32_t>(dir, "max_link_width", parse_link_width).value_or(0);
  }

  // numa_node before the local CPUs, which the kernel derives from it; their warnings keep the
  // place they had when the CPUs were read first.
  const std::size_t cpus_warnings_at = out.warnings.size();
  // Which node it names is checked against the platform later (resolve_numa).
  out.numa_attr = parsed_attr<std::optional<std::uint32_t>>(dir, "numa_node", parse_numa_node);
  const std::size_t numa_warnings_at = out.warnings.size();
  f.local_cpus = local_cpus(dir, out.numa_attr, memo);
  std::rotate(out.warnings.begin() + static_cast<std::ptrdiff_t>(cpus_warnings_at),
              out.warnings.begin() + static_cast<std::ptrdiff_t>(numa_warnings_at),
              out.warnings.end());
  out.numa_warning_at = out.warnings.size();
  if (auto physfn = dir.link_if_present("physfn")) {
    const std::string& target = *physfn;
    if (auto pf = parse_pci_address(target.substr(target.rfind('/') + 1))) {
      f.is_virtual_function = true;
      f.physical_function = *pf;
    }
  }
  // Only a physical function can have virtual functions of its own: the kernel creates the
  // sriov_* attributes for functions with an SR-IOV capability, which a VF never has. Not
  // asked of a VF, it saves a failed open per VF (512 on synthetic-64), nor of a bridge.
  if (!f.is_virtual_function && may_have_sriov(config)) {
    f.sriov_total_vfs = narrow(parsed_attr<std::uint64_t>(dir, "sriov_totalvfs", parse_uint));
    if (f.sriov_total_vfs) {
      f.sriov_num_vfs = narrow(parsed_attr<std::uint64_t>(dir, "sriov_numvfs", parse_uint));
    }
  }
  out.bridge = is_bridge(config, f.class_code);
  out.info = std::move(f);
  return out;
}

}  // namespace nodetopo::probes
