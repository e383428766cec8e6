#include "plan/plan.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <set>
#include <utility>

#include "plan/identity.hpp"
#include "plan/net_names.hpp"

namespace nodetopo::mock::detail {

namespace {

std::string hex2(unsigned v) {
  std::array<char, 8> buf{};
  std::snprintf(buf.data(), buf.size(), "0x%02x", v);
  return buf.data();
}

// Identity of a bridge port (root port or switch port).
struct BridgeIds {
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  std::uint16_t subsystem_vendor = 0;
  std::uint16_t subsystem_device = 0;
  std::uint8_t revision = 0;
  PcieLink link;
};

BridgeIds ids_of(const BridgeModel& m) {
  return {m.vendor, m.device, m.subsystem_vendor, m.subsystem_device, m.revision, m.link};
}

// Fills the unknown parts of `link` from `fallback`.
PcieLink complete(PcieLink link, const PcieLink& fallback) {
  if (link.speed_mts == 0) link.speed_mts = fallback.speed_mts;
  if (link.width == 0) link.width = fallback.width;
  return link;
}

// One root complex's bus span, for the overlap check.
struct BusSpan {
  std::uint32_t domain = 0;
  std::uint32_t first = 0;
  std::uint32_t last = 0;
  const RootComplexSpec* rc = nullptr;
};

class Planner {
 public:
  explicit Planner(const Profile& profile) : p_(profile) { plan_.profile = &profile; }

  Result<Plan> run() {
    plan_cpus();
    if (!error_) plan_pci();
    if (!error_) sort_devices();
    if (!error_) name_devices();
    if (!error_) plan_network();
    if (!error_) plan_links();
    if (error_) return *error_;
    if (p_.nvidia.fabric) {
      plan_.fabric_cluster_uuid = identity_uuid(p_.seed, "nvlink-fabric", "cluster");
    }
    return std::move(plan_);
  }

 private:
  void fail(const Origin& origin, std::string_view subfield, const std::string& message) {
    if (error_) return;
    const std::string where = origin.at(subfield);
    error_ =
        make_error(ErrorCode::kInvalid, (where.empty() ? "" : where + ": ") + message, p_.source);
  }

  // ---------------------------------------------------------------- CPUs and NUMA nodes
  void plan_cpus() {
    const CpuSpec& c = p_.cpu;
    const std::uint64_t total = std::uint64_t{c.sockets} * c.cores_per_socket * c.threads_per_core;
    if (total > 8192) {
      fail(c.origin, "cores_per_socket",
           std::to_string(total) + " CPUs in all; the mock supports at most 8192");
      return;
    }
    const std::size_t n = p_.numa.size();
    if (n == 0) {
      fail({"numa", 0}, "", "at least one NUMA node is required");
      return;
    }
    std::vector<std::vector<std::uint32_t>> of_socket(c.sockets);
    for (std::size_t i = 0; i < n; ++i) {
      const NumaSpec& node = p_.numa[i];
      if (node.id != i) {
        fail(node.origin, "id",
             "NUMA ids must be 0, 1, 2, ... in order: expected " + std::to_string(i) + ", got " +
                 std::to_string(node.id));
        return;
      }
      if (node.socket && *node.socket >= c.sockets) {
        fail(node.origin, "socket",
             "socket " + std::to_string(*node.socket) + " does not exist (cpu.sockets is " +
                 std::to_string(c.sockets) + ")");
        return;
      }
      if (node.memory_bytes == 0 || node.memory_bytes % 4096 != 0) {
        fail(node.origin, "memory",
             "must be a positive multiple of the 4 KiB page size (got " +
                 std::to_string(node.memory_bytes) + " bytes)");
        return;
      }
      if (node.socket) of_socket[*node.socket].push_back(node.id);
    }
    for (std::uint32_t s = 0; s < c.sockets; ++s) {
      if (of_socket[s].empty()) {
        fail(c.origin, "sockets",
             "socket " + std::to_string(s) +
                 " has no NUMA node: add a numa entry with socket: " + std::to_string(s));
        return;
      }
      if (c.cores_per_socket % of_socket[s].size() != 0) {
        fail(p_.numa[of_socket[s].front()].origin, "socket",
             "the " + std::to_string(c.cores_per_socket) + " cores of socket " + std::to_string(s) +
                 " do not split evenly over its " + std::to_string(of_socket[s].size()) +
                 " NUMA nodes");
        return;
      }
    }
    if (c.caches && c.caches->l3_cores != 0 &&
        (c.caches->l3_cores > c.cores_per_socket || c.cores_per_socket % c.caches->l3_cores != 0)) {
      fail(c.origin, "caches.l3_cores",
           std::to_string(c.caches->l3_cores) + " does not divide the " +
               std::to_string(c.cores_per_socket) + " cores of a socket");
      return;
    }
    plan_.numa_cpus.assign(n, CpuSet{});
    plan_.cpus.resize(total);
    const std::uint32_t per_socket = c.cores_per_socket;
    for (std::uint32_t t = 0; t < c.threads_per_core; ++t) {
      for (std::uint32_t s = 0; s < c.sockets; ++s) {
        const auto nodes = static_cast<std::uint32_t>(of_socket[s].size());
        for (std::uint32_t core = 0; core < per_socket; ++core) {
          const std::uint32_t cpu = (t * c.sockets + s) * per_socket + core;
          const std::uint32_t numa = of_socket[s][core / (per_socket / nodes)];
          plan_.cpus[cpu] = {s, core, t, numa};
          plan_.numa_cpus[numa].insert(cpu);
          plan_.all_cpus.insert(cpu);
        }
      }
    }
    plan_distances();
  }

  void plan_distances() {
    const std::size_t n = p_.numa.size();
    std::size_t given = 0;
    for (const NumaSpec& node : p_.numa)
      given += node.distances.empty() ? 0 : 1;
    if (given != 0 && given != n) {
      for (const NumaSpec& node : p_.numa) {
        if (node.distances.empty()) {
          fail(node.origin, "distances", "give distances for every NUMA node or for none");
          return;
        }
      }
    }
    if (given == 0) {
      // Defaults like common firmware: 10 local, 12 same socket, 21 (Intel) or 32 (AMD) across
      // sockets, 30 to and from memory-only nodes.
      const std::uint32_t remote = p_.cpu.vendor == "AuthenticAMD" ? 32 : 21;
      plan_.distances.assign(n, std::vector<std::uint32_t>(n, 0));
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
          const auto& a = p_.numa[i].socket;
          const auto& b = p_.numa[j].socket;
          std::uint32_t d = 30;
          if (i == j) {
            d = 10;
          } else if (a && b) {
            d = *a == *b ? 12 : remote;
          }
          plan_.distances[i][j] = d;
        }
      }
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const NumaSpec& node = p_.numa[i];
      if (node.distances.size() != n) {
        fail(node.origin, "distances",
             "has " + std::to_string(node.distances.size()) + " entries; expected " +
                 std::to_string(n) + " (one per NUMA node)");
        return;
      }
      for (std::size_t j = 0; j < n; ++j) {
        const std::uint32_t d = node.distances[j];
        const std::string field = "distances[" + std::to_string(j) + "]";
        if (i == j && d != 10) {
          fail(node.origin, field, "the distance of a node to itself must be 10");
          return;
        }
        if (i != j && d <= 10) {
          fail(node.origin, field, "the distance to another node must be more than 10");
          return;
        }
        if (p_.numa[j].distances.size() == n && p_.numa[j].distances[i] != d) {
          fail(node.origin, field,
               std::to_string(d) + " differs from numa[" + std::to_string(j) + "].distances[" +
                   std::to_string(i) + "] (" + std::to_string(p_.numa[j].distances[i]) +
                   "): distances are symmetric");
          return;
        }
      }
      plan_.distances.push_back(node.distances);
    }
  }

  void check_numa(const Origin& origin, std::string_view subfield, int numa) {
    if (numa == -1) return;
    const std::size_t n = plan_.numa_cpus.size();
    if (numa < 0 || static_cast<std::size_t>(numa) >= n) {
      fail(origin, subfield,
           "NUMA node " + std::to_string(numa) + " does not exist (nodes: " +
               (n == 1 ? std::string("0") : "0-" + std::to_string(n - 1)) + ")");
      return;
    }
    if (plan_.numa_cpus[static_cast<std::size_t>(numa)].empty()) {
      fail(origin, subfield,
           "NUMA node " + std::to_string(numa) +
               " has no CPUs; PCI devices are local to a node with CPUs (or -1)");
    }
  }

  // ---------------------------------------------------------------- PCI tree
  void plan_pci() {
    std::vector<BusSpan> spans;
    for (const RootComplexSpec& rc : p_.pci) {
      check_numa(rc.origin, "numa", rc.numa);
      std::string port_model = rc.port_model;
      if (port_model.empty()) {
        port_model = p_.cpu.vendor == "AuthenticAMD" ? "amd-genoa" : "intel-spr";
      }
      const BridgeModel* root_port = find_root_port_model(port_model);
      if (root_port == nullptr) {
        fail(
            rc.origin, "port_model",
            "unknown root port model '" + port_model + "' (known: " + root_port_model_keys() + ")");
      }
      for (const BusSpan& span : spans) {
        if (span.domain == rc.domain && span.first == rc.bus) {
          fail(rc.origin, "bus",
               "root bus " + pci_root_name(rc.domain, rc.bus) + " is already " +
                   span.rc->origin.field);
        }
      }
      if (error_) return;
      domain_ = rc.domain;
      numa_ = rc.numa;
      rc_ = &rc;
      next_bus_ = std::uint32_t{rc.bus} + 1;
      const std::string root_dir = "sys/devices/" + pci_root_name(rc.domain, rc.bus);
      plan_.root_buses.push_back(pci_root_name(rc.domain, rc.bus));
      for (const DeviceSpec& d : rc.devices) {
        add_device(d, rc.bus, *d.slot, d.function.value_or(0), root_dir, PcieLink{}, PcieLink{},
                   true);
        if (error_) return;
      }
      for (std::size_t i = 0; i < rc.ports.size(); ++i) {
        const PortSpec& port = rc.ports[i];
        const std::uint8_t dev = port.slot.value_or(static_cast<std::uint8_t>(i + 1));
        if (dev > 31) {
          fail(port.origin, "address", "no device number left on the root bus (00-1f)");
          return;
        }
        add_port(port, FunctionRole::kRootPort, rc.bus, dev, port.function.value_or(0), root_dir,
                 ids_of(*root_port));
        if (error_) return;
      }
      spans.push_back({rc.domain, rc.bus, next_bus_ - 1, &rc});
    }
    // Root complexes of one domain own disjoint bus ranges.
    std::sort(spans.begin(), spans.end(), [](const BusSpan& a, const BusSpan& b) {
      return std::pair(a.domain, a.first) < std::pair(b.domain, b.first);
    });
    for (std::size_t i = 1; i < spans.size(); ++i) {
      const BusSpan& prev = spans[i - 1];
      const BusSpan& cur = spans[i];
      if (prev.domain == cur.domain && cur.first <= prev.last) {
        fail(cur.rc->origin, "bus",
             "root bus " + hex2(cur.first) + " lies inside buses " + hex2(prev.first) + "-" +
                 hex2(prev.last) + " used by " + prev.rc->origin.field +
                 " (pick a root bus above " + hex2(prev.last) + " or move the other one)");
        return;
      }
    }
    std::sort(plan_.root_buses.begin(), plan_.root_buses.end());
    plan_.function_order.resize(plan_.functions.size());
    for (std::size_t i = 0; i < plan_.functions.size(); ++i)
      plan_.function_order[i] = i;
    std::sort(plan_.function_order.begin(), plan_.function_order.end(),
              [&](std::size_t a, std::size_t b) {
                return plan_.functions[a].address < plan_.functions[b].address;
              });
  }

  // Records that `addr` is taken; a second use is a duplicate bus address.
  bool claim(const PciAddress& addr, const Origin& origin, std::string_view subfield) {
    auto [it, inserted] = used_.emplace(addr.sort_key(), origin.field);
    if (!inserted) {
      fail(origin, subfield,
           "duplicate bus address " + addr.to_string() + " (already used by " + it->second + ")");
      return false;
    }
    return true;
  }

  // Secondary bus of a bridge on `primary`: the explicit one or the next free one.
  std::optional<std::uint8_t> take_bus(const std::optional<std::uint8_t>& wanted,
                                       std::uint8_t primary, const Origin& origin) {
    std::uint32_t bus = next_bus_;
    if (wanted) {
      if (*wanted <= primary) {
        fail(origin, "bus",
             "bus " + hex2(*wanted) + " must be above the bridge's own bus " + hex2(primary));
        return std::nullopt;
      }
      if (*wanted < next_bus_) {
        fail(origin, "bus",
             "bus " + hex2(*wanted) + " is already used under " + rc_->origin.field +
                 " (buses are numbered depth-first; the next free one is " + hex2(next_bus_) + ")");
        return std::nullopt;
      }
      bus = *wanted;
    }
    if (bus > 0xff) {
      fail(origin, "", "out of bus numbers: " + rc_->origin.field + " needs more than bus 0xff");
      return std::nullopt;
    }
    next_bus_ = bus + 1;
    return static_cast<std::uint8_t>(bus);
  }

  PcieLink negotiate(const PcieLink& a, const PcieLink& b, const std::optional<PcieLink>& forced,
                     const Origin& origin) {
    PcieLink link{std::min(a.speed_mts, b.speed_mts), std::min(a.width, b.width)};
    if (!forced) return link;
    if (forced->speed_mts > link.speed_mts || forced->width > link.width) {
      fail(origin, "current_link",
           forced->to_string() + " is more than both ends support (" + link.to_string() + ")");
      return link;
    }
    if (forced->speed_mts != 0) link.speed_mts = forced->speed_mts;
    if (forced->width != 0) link.width = forced->width;
    return link;
  }

  PcieLink device_cap(const DeviceSpec& d) {
    const Model* model = find_model(d.model);
    PcieLink cap = d.link;
    if (model != nullptr) cap = complete(cap, model->link);
    if (cap.speed_mts == 0 || cap.width == 0) {
      fail(d.origin, "link", "required field is missing (give speed and width, e.g. gen4 x16)");
    }
    return cap;
  }

  BridgeIds switch_ids(const SwitchSpec& sw) {
    std::string key = sw.model;
    if (key.empty())
      key = sw.link.speed_mts != 0 && sw.link.speed_mts < 32000 ? "pex88000" : "pex89000";
    const BridgeModel* model = find_switch_model(key);
    BridgeIds ids = ids_of(*model);  // parse_profile() refused unknown switch models
    if (sw.vendor) ids.vendor = *sw.vendor;
    if (sw.device) ids.device = *sw.device;
    ids.link = complete(sw.link, model->link);
    return ids;
  }

  std::size_t push(PlanFunction f) {
    plan_.functions.push_back(std::move(f));
    return plan_.functions.size() - 1;
  }

  void add_port(const PortSpec& port, FunctionRole role, std::uint8_t bus, std::uint8_t dev,
                std::uint8_t fn, const std::string& parent_dir, const BridgeIds& ids) {
    const PciAddress addr{domain_, bus, dev, fn};
    if (!claim(addr, port.origin, "address")) return;
    const auto secondary = take_bus(port.bus, bus, port.origin);
    if (!secondary) return;

    // The port's capability: explicit, else the model's speed with the child's width.
    PcieLink child_cap;
    std::optional<PcieLink> forced;
    Origin child_origin;
    std::optional<BridgeIds> sw_ids;
    if (port.below_switch) {
      sw_ids = switch_ids(*port.below_switch);
      child_cap = sw_ids->link;
      forced = port.below_switch->current_link;
      child_origin = port.below_switch->origin;
    } else if (port.device) {
      child_cap = device_cap(*port.device);
      forced = port.device->current_link;
      child_origin = port.device->origin;
    }
    if (error_) return;
    PcieLink cap = port.link;
    if (cap.speed_mts == 0) cap.speed_mts = ids.link.speed_mts;
    if (cap.width == 0) cap.width = child_cap.width != 0 ? child_cap.width : ids.link.width;

    PlanFunction f;
    f.address = addr;
    f.dir = parent_dir + "/" + addr.to_string();
    f.role = role;
    f.vendor = ids.vendor;
    f.device = ids.device;
    f.subsystem_vendor = ids.subsystem_vendor;
    f.subsystem_device = ids.subsystem_device;
    f.class_code = 0x060400;
    f.revision = ids.revision;
    f.driver = "pcieport";
    f.cap = cap;
    f.bridge = true;
    f.primary = bus;
    f.secondary = *secondary;
    f.numa = numa_;
    f.physical_slot = port.physical_slot;
    f.port_number = role == FunctionRole::kRootPort ? static_cast<std::uint8_t>(dev + 1) : dev;
    const bool has_child = port.below_switch || port.device;
    f.link_up = has_child;
    f.current = has_child ? negotiate(cap, child_cap, forced, child_origin) : PcieLink{2500, 0};
    const PcieLink current = f.current;
    const std::string dir = f.dir;
    const std::size_t index = push(std::move(f));
    if (error_) return;

    if (port.below_switch) {
      add_switch(*port.below_switch, *sw_ids, *secondary, dir, current);
    } else if (port.device) {
      add_device(*port.device, *secondary, 0, 0, dir, child_cap, current, false);
    }
    plan_.functions[index].subordinate = static_cast<std::uint8_t>(next_bus_ - 1);
  }

  void add_switch(const SwitchSpec& sw, const BridgeIds& ids, std::uint8_t bus,
                  const std::string& parent_dir, const PcieLink& upstream_current) {
    const PciAddress addr{domain_, bus, 0, 0};
    if (!claim(addr, sw.origin, "")) return;
    const auto internal = take_bus(sw.bus, bus, sw.origin);
    if (!internal) return;
    PlanFunction up;
    up.address = addr;
    up.dir = parent_dir + "/" + addr.to_string();
    up.role = FunctionRole::kUpstreamPort;
    up.vendor = ids.vendor;
    up.device = ids.device;
    up.subsystem_vendor = ids.subsystem_vendor;
    up.subsystem_device = ids.subsystem_device;
    up.class_code = 0x060400;
    up.revision = ids.revision;
    up.driver = "pcieport";
    up.cap = ids.link;
    up.current = upstream_current;
    up.bridge = true;
    up.primary = bus;
    up.secondary = *internal;
    up.numa = numa_;
    const std::string dir = up.dir;
    const std::size_t index = push(std::move(up));
    for (std::size_t i = 0; i < sw.ports.size(); ++i) {
      const PortSpec& port = sw.ports[i];
      add_port(port, FunctionRole::kDownstreamPort, *internal,
               port.slot.value_or(static_cast<std::uint8_t>(i)), 0, dir, ids);
      if (error_) return;
    }
    plan_.functions[index].subordinate = static_cast<std::uint8_t>(next_bus_ - 1);
  }

  void add_device(const DeviceSpec& d, std::uint8_t bus, std::uint8_t dev, std::uint8_t fn_base,
                  const std::string& parent_dir, const PcieLink& cap, const PcieLink& current,
                  bool integrated) {
    const Model* model = d.model.empty() ? nullptr : find_model(d.model);
    PlanDevice pd;
    pd.spec = &d;
    pd.model = model;
    pd.type = d.type;
    pd.numa = d.numa.value_or(numa_);
    if (d.numa) check_numa(d.origin, "numa", *d.numa);
    pd.product = d.product.value_or(model != nullptr ? std::string(model->product) : "");
    pd.memory_bytes =
        d.memory_bytes != 0 ? d.memory_bytes : (model != nullptr ? model->memory_bytes : 0);
    pd.capacity_bytes =
        d.capacity_bytes != 0 ? d.capacity_bytes : (model != nullptr ? model->capacity_bytes : 0);
    pd.serial = d.serial;
    pd.uuid = d.uuid;
    check_device_fields(d, model, pd);
    if (error_) return;

    const bool port_functions =
        d.type == DeviceType::kNic && (model == nullptr || model->port_per_function);
    std::uint32_t nfunc = d.functions != 0 ? d.functions : 1;
    if (port_functions)
      nfunc = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(d.ports.size()));
    if (fn_base + nfunc > 8) {
      fail(d.origin, port_functions ? "ports" : "functions",
           "a PCI device has at most 8 functions (" + std::to_string(fn_base) + " + " +
               std::to_string(nfunc) + " asked)");
      return;
    }
    bool infiniband = !d.ports.empty();
    for (const NetPortSpec& port : d.ports) {
      const std::string layer = !port.link_layer.empty() ? port.link_layer
                                : model != nullptr       ? std::string(model->default_link_layer)
                                                         : "Ethernet";
      infiniband = infiniband && layer == "InfiniBand";
    }
    if (d.ports.empty() && d.type == DeviceType::kNic) {
      infiniband = model != nullptr && model->default_link_layer == "InfiniBand";
    }
    std::uint32_t class_code = 0;
    if (d.class_code) {
      class_code = *d.class_code;
    } else if (model != nullptr) {
      class_code = nic_class(*model, infiniband);
    }
    const std::size_t device_index = plan_.devices.size();
    std::uint32_t next_rid = (std::uint32_t{dev} << 3) + fn_base + nfunc;
    for (std::uint32_t i = 0; i < nfunc; ++i) {
      const PciAddress addr{domain_, bus, dev, static_cast<std::uint8_t>(fn_base + i)};
      if (!claim(addr, d.origin, integrated ? "address" : "")) return;
      PlanFunction f;
      f.address = addr;
      f.dir = parent_dir + "/" + addr.to_string();
      f.role = integrated ? FunctionRole::kIntegratedEndpoint : FunctionRole::kEndpoint;
      f.vendor = d.vendor.value_or(model != nullptr ? model->vendor : 0);
      f.device = d.device.value_or(model != nullptr ? model->device : 0);
      f.subsystem_vendor =
          d.subsystem_vendor.value_or(model != nullptr ? model->subsystem_vendor : f.vendor);
      f.subsystem_device =
          d.subsystem_device.value_or(model != nullptr ? model->subsystem_device : 0);
      f.class_code = class_code;
      f.revision = d.revision.value_or(model != nullptr ? model->revision : 0);
      f.driver = d.driver.value_or(model != nullptr ? std::string(model->driver) : "");
      f.cap = cap;
      f.current = current;
      f.numa = pd.numa;
      f.multifunction = nfunc > 1;
      f.device_index = device_index;
      f.function_index = i;
      const std::size_t pf_index = push(std::move(f));
      pd.functions.push_back(pf_index);
      if (d.sriov.total_vfs == 0) continue;
      // VFs follow all physical functions: VF routing IDs = PF's + offset + stride * n.
      PlanFunction& pf = plan_.functions[pf_index];
      const std::uint32_t pf_rid = (std::uint32_t{dev} << 3) + fn_base + i;
      pf.total_vfs = d.sriov.total_vfs;
      pf.num_vfs = d.sriov.num_vfs;
      pf.vf_offset = static_cast<std::uint16_t>(next_rid - pf_rid);
      pf.vf_stride = 1;
      pf.vf_device = model != nullptr ? model->vf_device : 0;
      if (pf.vf_device == 0) {
        fail(d.origin, "sriov",
             "SR-IOV needs a model with virtual functions (cx7, cx6, bf3); this device has "
             "none");
        return;
      }
      if (next_rid + d.sriov.total_vfs > 256) {
        fail(d.origin, "sriov.total_vfs",
             "the VFs do not fit on bus " + hex2(bus) + " (at most 256 functions per bus)");
        return;
      }
      const std::uint16_t vf_device = pf.vf_device;
      for (std::uint32_t v = 0; v < d.sriov.num_vfs; ++v) {
        const std::uint32_t rid = next_rid + v;
        const PciAddress vaddr{domain_, bus, static_cast<std::uint8_t>(rid >> 3),
                               static_cast<std::uint8_t>(rid & 7)};
        if (!claim(vaddr, d.origin, "sriov")) return;
        PlanFunction vf = plan_.functions[pf_index];
        vf.address = vaddr;
        vf.dir = parent_dir + "/" + vaddr.to_string();
        vf.role = FunctionRole::kVirtualFunction;
        vf.device = vf_device;
        vf.cap = {};
        vf.current = {};
        vf.multifunction = false;
        vf.total_vfs = 0;
        vf.num_vfs = 0;
        vf.vf_offset = 0;
        vf.vf_device = 0;
        vf.pf = pf_index;
        const std::size_t vf_index = push(std::move(vf));
        plan_.functions[pf_index].vfs.push_back(vf_index);
      }
      next_rid += d.sriov.total_vfs;
    }
    plan_.devices.push_back(std::move(pd));
  }

  // Field checks that depend on the type and the model.
  void check_device_fields(const DeviceSpec& d, const Model* model, const PlanDevice& pd) {
    const bool compute = d.type == DeviceType::kGpu || d.type == DeviceType::kAccelerator;
    if (compute && pd.memory_bytes == 0) {
      fail(d.origin, "memory", "required field is missing (no model gives it)");
    }
    if (d.sharing && !compute) {
      fail(d.origin, "sharing", "only gpus and accelerators are shared");
    }
    if (!d.ports.empty() && d.type != DeviceType::kNic && d.type != DeviceType::kAccelerator) {
      fail(d.origin, "ports", "only nics and accelerators have network ports");
    }
    if (d.sriov.total_vfs != 0 && d.type != DeviceType::kNic) {
      fail(d.origin, "sriov", "only nics have SR-IOV virtual functions here");
    }
    const bool port_functions =
        d.type == DeviceType::kNic && (model == nullptr || model->port_per_function);
    if (!d.rdma.empty() && port_functions) {
      fail(d.origin, "rdma", "each port of this NIC is its own function: set rdma on the ports");
    }
    if (d.functions > 1 && d.type != DeviceType::kOther) {
      fail(d.origin, "functions", "only `other` devices take a function count");
    }
    if (d.type == DeviceType::kNvme && pd.capacity_bytes == 0) {
      fail(d.origin, "capacity", "required field is missing (no model gives it)");
    }
    if (!d.nvml_fail.empty() &&
        !(d.type == DeviceType::kGpu && vendor_of(d, model) == pci_vendor::kNvidia)) {
      fail(d.origin, "nvml_fail", "only NVIDIA GPUs are NVML devices");
    }
  }

  static std::uint16_t vendor_of(const DeviceSpec& d, const Model* model) {
    return d.vendor.value_or(model != nullptr ? model->vendor : 0);
  }

  // ---------------------------------------------------------------- devices
  void sort_devices() {
    std::vector<std::size_t> order(plan_.devices.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    auto first = [&](std::size_t i) {
      return plan_.functions[plan_.devices[i].functions.front()].address;
    };
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return first(a) < first(b); });
    std::vector<PlanDevice> sorted;
    std::vector<std::size_t> new_index(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      new_index[order[i]] = i;
      sorted.push_back(std::move(plan_.devices[order[i]]));
    }
    plan_.devices = std::move(sorted);
    for (PlanFunction& f : plan_.functions) {
      if (f.device_index) f.device_index = new_index[*f.device_index];
    }
  }

  void name_devices() {
    std::map<std::string, const Origin*> taken;
    for (const PlanDevice& d : plan_.devices) {
      if (d.spec->name.empty()) continue;
      const std::string& name = d.spec->name;
      const bool valid = name.size() <= 63 && std::all_of(name.begin(), name.end(), [](char c) {
                           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                  (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
                         });
      if (!valid) {
        fail(d.spec->origin, "name",
             "'" + name + "' must be 1-63 letters, digits, '_', '-' or '.'");
        return;
      }
      auto [it, inserted] = taken.emplace(name, &d.spec->origin);
      if (!inserted) {
        fail(d.spec->origin, "name", "'" + name + "' is already the name of " + it->second->field);
        return;
      }
    }
    std::map<DeviceType, std::size_t> counters;
    std::size_t nvidia = 0;
    std::size_t amd = 0;
    std::size_t habana = 0;
    std::size_t nvme = 0;
    for (PlanDevice& d : plan_.devices) {
      const std::size_t k = counters[d.type]++;
      if (d.spec->name.empty()) {
        static const std::map<DeviceType, std::string> kPrefix{
            {DeviceType::kGpu, "GPU"},           {DeviceType::kNvSwitch, "NVSWITCH"},
            {DeviceType::kNic, "NIC"},           {DeviceType::kNvme, "NVME"},
            {DeviceType::kAccelerator, "ACCEL"}, {DeviceType::kOther, "DEV"}};
        d.name = kPrefix.at(d.type) + std::to_string(k);
        if (auto it = taken.find(d.name); it != taken.end()) {
          fail(*it->second, "name",
               "'" + d.name + "' is also the automatic name of the " +
                   std::string(to_string(d.type)) + " at " +
                   plan_.functions[d.functions.front()].address.to_string() +
                   "; name all devices of a type or none");
          return;
        }
        taken.emplace(d.name, &d.spec->origin);
      } else {
        d.name = d.spec->name;
      }
      const std::uint16_t vendor = plan_.functions[d.functions.front()].vendor;
      if (d.type == DeviceType::kGpu && vendor == pci_vendor::kNvidia) d.ordinal = nvidia++;
      if (d.type == DeviceType::kGpu && vendor == pci_vendor::kAmd) d.ordinal = amd++;
      if (vendor == pci_vendor::kHabana) d.ordinal = habana++;
      if (d.type == DeviceType::kNvme) d.ordinal = nvme++;
      const std::string key = plan_.functions[d.functions.front()].address.to_string();
      if (d.serial.empty()) d.serial = default_serial(d, key);
      if (d.uuid.empty() && (d.type == DeviceType::kGpu || d.type == DeviceType::kAccelerator)) {
        d.uuid = identity_uuid(p_.seed, "uuid", key);
        if (vendor == pci_vendor::kNvidia) d.uuid = "GPU-" + d.uuid;
      }
    }
  }

  std::string default_serial(const PlanDevice& d, const std::string& key) const {
    switch (d.type) {
      case DeviceType::kGpu:
      case DeviceType::kNvSwitch:
        // NVIDIA board serials are 13 digits starting 16...
        return "16" + identity_digits(p_.seed, "serial", key, 11);
      case DeviceType::kNvme:
        return "S6" + identity_digits(p_.seed, "serial", key, 6) + "NA0" +
               identity_digits(p_.seed, "serial2", key, 3);
      case DeviceType::kNic:
        return "MT" + identity_digits(p_.seed, "serial", key, 4) + "X" +
               identity_digits(p_.seed, "serial2", key, 5);
      default:
        return "MOCK" + identity_digits(p_.seed, "serial", key, 10);
    }
  }

  // ---------------------------------------------------------------- network
  void plan_network() {
    // Name -> field that took it (copied: default ports live only during this loop).
    std::map<std::string, std::string> netdevs{{"lo", "the loopback interface"}};
    std::map<std::string, std::string> rdma_names;
    std::map<std::string, std::size_t> rdma_counters;
    std::uint32_t ifindex = 2;
    for (std::size_t di = 0; di < plan_.devices.size(); ++di) {
      PlanDevice& d = plan_.devices[di];
      const DeviceSpec& spec = *d.spec;
      std::vector<NetPortSpec> ports = spec.ports;
      if (ports.empty() && d.type == DeviceType::kNic) {
        NetPortSpec one;
        one.link_layer.clear();
        one.origin = spec.origin;
        ports.push_back(one);
      }
      if (ports.empty()) continue;
      const Model* model = d.model;
      const bool port_functions =
          d.type == DeviceType::kNic && (model == nullptr || model->port_per_function);
      const std::string prefix = model != nullptr ? std::string(model->rdma_prefix) : "";
      std::optional<std::size_t> shared_rdma;
      for (std::uint32_t pi = 0; pi < ports.size(); ++pi) {
        const NetPortSpec& port = ports[pi];
        const std::size_t fi = d.functions[port_functions ? pi : 0];
        const PlanFunction& f = plan_.functions[fi];
        PlanNetPort np;
        np.function = fi;
        np.dev_port = port_functions ? 0 : pi;
        const std::string layer = !port.link_layer.empty() ? port.link_layer
                                  : model != nullptr       ? std::string(model->default_link_layer)
                                                           : "Ethernet";
        np.infiniband = layer == "InfiniBand";
        np.rate_gbps = port.rate_gbps != 0 ? port.rate_gbps
                                           : (model != nullptr ? model->default_rate_gbps : 0);
        if (np.rate_gbps == 0) {
          fail(port.origin, "rate", "required field is missing (no model gives it)");
          return;
        }
        if (np.infiniband && infiniband_rate_name(np.rate_gbps).empty()) {
          fail(port.origin, "rate",
               std::to_string(np.rate_gbps) + " Gb/s is not an InfiniBand rate (" +
                   infiniband_rates() + ")");
          return;
        }
        np.up = port.up;
        np.mtu = port.mtu != 0 ? port.mtu : (np.infiniband ? 4092 : 1500);
        np.driver = model != nullptr && !model->netdev_driver.empty()
                        ? std::string(model->netdev_driver)
                        : f.driver;
        // ConnectX Ethernet uplinks report phys_port_name p<port>, which systemd appends.
        if (port_functions && f.vendor == pci_vendor::kMellanox && !np.infiniband) {
          np.phys_port_name = "p" + std::to_string(f.function_index);
        }
        np.netdev =
            !port.netdev.empty()
                ? port.netdev
                : predictable_name(f.address, np.infiniband, f.multifunction,
                                   port_functions ? std::nullopt : std::optional<std::uint32_t>(pi),
                                   np.phys_port_name);
        if (auto problem = netdev_name_problem(np.netdev); !problem.empty()) {
          fail(port.origin, "netdev", "'" + np.netdev + "' " + problem);
          return;
        }
        if (auto [it, inserted] = netdevs.emplace(np.netdev, port.origin.field); !inserted) {
          fail(port.origin, "netdev",
               "interface name '" + np.netdev + "' is already used by " + it->second);
          return;
        }
        const std::uint32_t oui =
            f.vendor == pci_vendor::kMellanox ? 0xb83fd2U : 0x02dd00U | (f.vendor & 0xffU);
        const auto tail =
            identity_bytes3(p_.seed, "mac", f.address.to_string() + "/" + std::to_string(pi));
        np.port_guid = guid_from(oui, tail);
        np.mac = np.infiniband ? ipoib_address(np.port_guid) : format_mac(oui, tail);
        np.ifindex = ifindex++;

        // RDMA: ConnectX gives each function its own device, Gaudi one device for all ports.
        const bool wants_rdma = !prefix.empty() || !port.rdma.empty() || !spec.rdma.empty();
        if (wants_rdma) {
          if (port_functions || !shared_rdma) {
            std::string name = port_functions ? port.rdma : spec.rdma;
            const Origin& where = port_functions ? port.origin : spec.origin;
            if (name.empty()) {
              const std::string pre = prefix.empty() ? "rdma" : prefix;
              name = pre + std::to_string(rdma_counters[pre]++);
            }
            if (auto [it, inserted] = rdma_names.emplace(name, where.field); !inserted) {
              fail(where, "rdma",
                   "RDMA device name '" + name + "' is already used by " + it->second);
              return;
            }
            PlanRdma rd;
            rd.name = name;
            rd.function = fi;
            rd.model = model;
            rd.node_guid =
                port_functions
                    ? np.port_guid
                    : guid_from(oui, identity_bytes3(p_.seed, "node-guid", f.address.to_string()));
            plan_.rdma.push_back(rd);
            if (!port_functions) shared_rdma = plan_.rdma.size() - 1;
            np.rdma = plan_.rdma.size() - 1;
          } else {
            np.rdma = shared_rdma;
          }
          PlanRdma& rd = plan_.rdma[*np.rdma];
          np.rdma_port = static_cast<std::uint32_t>(rd.ports.size()) + 1;
          if (!port_functions) np.port_guid = rd.node_guid + np.rdma_port;
          rd.ports.push_back(plan_.net_ports.size());
          plan_.functions[fi].dsn = rd.node_guid;
        }
        d.net_ports.push_back(plan_.net_ports.size());
        plan_.net_ports.push_back(np);
      }
    }
    for (const std::string& name : p_.virtual_netdevs) {
      static const Origin kVirtual{"network.virtual", 0};
      if (auto problem = netdev_name_problem(name); !problem.empty()) {
        fail(kVirtual, "", "'" + name + "' " + problem);
        return;
      }
      if (auto [it, inserted] = netdevs.emplace(name, kVirtual.field); !inserted) {
        fail(kVirtual, "", "interface name '" + name + "' is already used by " + it->second);
        return;
      }
      plan_.virtual_netdevs.push_back(name);
    }
  }

  // ---------------------------------------------------------------- NVLink and xGMI
  std::vector<std::size_t> resolve(const std::vector<std::string>& names, const Origin& origin,
                                   std::string_view subfield, bool& wildcard) {
    std::vector<std::size_t> out;
    wildcard = false;
    for (const std::string& name : names) {
      const bool prefix = !name.empty() && name.back() == '*';
      wildcard = wildcard || prefix;
      const std::string stem = prefix ? name.substr(0, name.size() - 1) : name;
      const std::size_t before = out.size();
      for (std::size_t i = 0; i < plan_.devices.size(); ++i) {
        const std::string& n = plan_.devices[i].name;
        if (prefix ? n.starts_with(stem) : n == stem) out.push_back(i);
      }
      if (out.size() == before) {
        std::string known;
        for (std::size_t i = 0; i < plan_.devices.size() && i < 24; ++i) {
          known += (i == 0 ? "" : ", ") + plan_.devices[i].name;
        }
        if (plan_.devices.size() > 24) known += ", ...";
        fail(origin, subfield,
             prefix ? "'" + name + "' matches no device (devices: " + known + ")"
                    : "no device named '" + name + "' (devices: " + known + ")");
        return {};
      }
    }
    return out;
  }

  void plan_links() {
    for (std::size_t i = 0; i < plan_.devices.size(); ++i) {
      const PlanDevice& d = plan_.devices[i];
      if (d.type == DeviceType::kGpu &&
          plan_.functions[d.functions.front()].vendor == pci_vendor::kNvidia) {
        plan_.nvlinks[i];  // every NVIDIA GPU answers NVLink queries
      }
    }
    std::map<std::pair<std::size_t, std::size_t>, std::string> wired;
    std::map<std::size_t, std::uint32_t> switch_ports;
    std::map<std::size_t, const LinkSpec*> last_entry;
    for (const LinkSpec& link : p_.links) {
      bool wild_from = false;
      bool wild_to = false;
      const auto from = resolve(link.from, link.origin, "from", wild_from);
      const auto to = resolve(link.to, link.origin, "to", wild_to);
      if (error_) return;
      std::set<std::pair<std::size_t, std::size_t>> this_entry;
      for (std::size_t a : from) {
        for (std::size_t b : to) {
          if (a == b) {
            if (!wild_from && !wild_to) {
              fail(link.origin, "to", "'" + plan_.devices[a].name + "' cannot be linked to itself");
              return;
            }
            continue;
          }
          const auto pair = std::minmax(a, b);
          if (!this_entry.insert(pair).second) continue;  // GPU* to GPU*: each pair once
          if (auto it = wired.find(pair); it != wired.end()) {
            fail(link.origin, "",
                 plan_.devices[pair.first].name + " and " + plan_.devices[pair.second].name +
                     " are already linked by " + it->second);
            return;
          }
          wired.emplace(pair, link.origin.field);
          if (link.kind == FabricKind::kNvlink) {
            wire_nvlink(link, a, b, switch_ports, last_entry);
          } else {
            wire_xgmi(link, a, b);
          }
          if (error_) return;
        }
      }
    }
    for (auto& [gpu, links] : plan_.nvlinks) {
      const PlanDevice& d = plan_.devices[gpu];
      const std::uint32_t max = d.model != nullptr && d.model->nvlinks != 0 ? d.model->nvlinks : 18;
      if (links.size() > max) {
        fail(last_entry.at(gpu)->origin, "count",
             d.name + " would have " + std::to_string(links.size()) + " NVLinks; " +
                 (d.model != nullptr ? std::string(d.model->key) : std::string("a GPU")) + " has " +
                 std::to_string(max));
        return;
      }
      if (d.model != nullptr) links.resize(std::max<std::size_t>(links.size(), d.model->nvlinks));
    }
  }

  void wire_nvlink(const LinkSpec& link, std::size_t a, std::size_t b,
                   std::map<std::size_t, std::uint32_t>& switch_ports,
                   std::map<std::size_t, const LinkSpec*>& last_entry) {
    for (std::size_t x : {a, b}) {
      const PlanDevice& d = plan_.devices[x];
      const std::uint16_t vendor = plan_.functions[d.functions.front()].vendor;
      if (vendor != pci_vendor::kNvidia ||
          (d.type != DeviceType::kGpu && d.type != DeviceType::kNvSwitch)) {
        fail(link.origin, x == a ? "from" : "to",
             "'" + d.name + "' is a " + std::string(to_string(d.type)) +
                 "; NVLink connects NVIDIA GPUs and NVSwitches");
        return;
      }
    }
    if (plan_.devices[a].type == DeviceType::kNvSwitch &&
        plan_.devices[b].type == DeviceType::kNvSwitch) {
      fail(link.origin, "", "NVLink trunks between NVSwitches are not modelled");
      return;
    }
    for (auto [self, other] : {std::pair{a, b}, std::pair{b, a}}) {
      const PlanDevice& d = plan_.devices[self];
      if (d.type == DeviceType::kNvSwitch) {
        const std::uint32_t used = switch_ports[self] += link.count;
        const std::uint32_t max = d.model != nullptr ? d.model->nvlinks : 64;
        if (used > max) {
          fail(link.origin, "count",
               d.name + " has " + std::to_string(max) + " NVLink ports; the links so far need " +
                   std::to_string(used));
          return;
        }
        continue;
      }
      auto& slots = plan_.nvlinks[self];
      for (std::uint32_t k = 0; k < link.count; ++k) {
        slots.push_back({other, k < link.count - link.down});
      }
      last_entry[self] = &link;
    }
  }

  void wire_xgmi(const LinkSpec& link, std::size_t a, std::size_t b) {
    for (std::size_t x : {a, b}) {
      const PlanDevice& d = plan_.devices[x];
      if (d.type != DeviceType::kGpu ||
          plan_.functions[d.functions.front()].vendor != pci_vendor::kAmd) {
        fail(link.origin, x == a ? "from" : "to",
             "'" + d.name + "' is not an AMD GPU; xGMI connects AMD GPUs");
        return;
      }
    }
    if (link.down != 0) {
      fail(link.origin, "down", "inactive links are modelled for NVLink only");
      return;
    }
    plan_.xgmi.push_back({std::min(a, b), std::max(a, b), link.count});
  }

  const Profile& p_;
  Plan plan_;
  std::optional<Error> error_;
  std::map<std::uint64_t, std::string> used_;  // PCI address sort key -> field that took it
  std::uint32_t next_bus_ = 0;
  std::uint32_t domain_ = 0;
  int numa_ = -1;
  const RootComplexSpec* rc_ = nullptr;
};

}  // namespace

Result<Plan> make_plan(const Profile& profile) {
  return Planner(profile).run();
}

const CpuSet& locality(const Plan& plan, int numa) {
  if (numa < 0 || static_cast<std::size_t>(numa) >= plan.numa_cpus.size()) return plan.all_cpus;
  return plan.numa_cpus[static_cast<std::size_t>(numa)];
}

}  // namespace nodetopo::mock::detail
