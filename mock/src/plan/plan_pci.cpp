// Pass 2: the PCI tree above the endpoints — root complexes, root ports, switches and their
// downstream ports: addresses, bus numbers, link capability and status (written by
// render/write_pci.cpp). The endpoints a port leads to are planned by plan_endpoints.cpp.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plan/plan_state.hpp"

namespace nodetopo::mock::detail {

namespace {

BridgeIds ids_of(const BridgeModel& m) {
  return {m.vendor, m.device, m.subsystem_vendor, m.subsystem_device, m.revision, m.link};
}

// One root complex's bus span, for the overlap check.
struct BusSpan {
  std::uint32_t domain = 0;
  std::uint32_t first = 0;
  std::uint32_t last = 0;
  const RootComplexSpec* rc = nullptr;
};

}  // namespace

// Bus numbers are given out depth-first below each root bus, the order in which firmware
// enumerates (root bus, then each port's secondary bus, then everything under it before the
// next port), so every bridge's secondary..subordinate range is contiguous and a profile that
// names no bus gets the numbering a real BIOS would. Root ports default to devices 1, 2, ... on
// the root bus; the root port model defaults to the CPU vendor's current server part.
void Planner::plan_pci() {
  std::vector<BusSpan> spans;
  for (const RootComplexSpec& rc : p_.pci) {
    check_numa(rc.origin, "numa", rc.numa);
    std::string port_model = rc.port_model;
    if (port_model.empty()) {
      port_model = p_.cpu.vendor == "AuthenticAMD" ? "amd-genoa" : "intel-spr";
    }
    const BridgeModel* root_port = find_root_port_model(port_model);
    if (root_port == nullptr) {
      fail(rc.origin, "port_model",
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
               hex2(prev.last) + " used by " + prev.rc->origin.field + " (pick a root bus above " +
               hex2(prev.last) + " or move the other one)");
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
// Records that `addr` is taken; a second use is a duplicate bus address.
bool Planner::claim(const PciAddress& addr, const Origin& origin, std::string_view subfield) {
  auto [it, inserted] = used_.emplace(addr.sort_key(), origin.field);
  if (!inserted) {
    fail(origin, subfield,
         "duplicate bus address " + addr.to_string() + " (already used by " + it->second + ")");
    return false;
  }
  return true;
}

// Secondary bus of a bridge on `primary`: the explicit one or the next free one.
// Secondary bus of a bridge on `primary`: the explicit one or the next free one. An explicit
// bus may skip numbers (firmware reserves ranges for hot-plug) but never go back, which would
// break the depth-first ranges above.
std::optional<std::uint8_t> Planner::take_bus(const std::optional<std::uint8_t>& wanted,
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

// The trained link of a port and what it leads to: the lower speed and width of both ends, as
// PCIe link training settles, or a slower state the profile forces (a degraded link is a test
// case) — never a faster one.
PcieLink Planner::negotiate(const PcieLink& a, const PcieLink& b,
                            const std::optional<PcieLink>& forced, const Origin& origin) {
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

// A device's link capability: the profile's, completed from its model.
PcieLink Planner::device_cap(const DeviceSpec& d) {
  const Model* model = find_model(d.model);
  PcieLink cap = d.link;
  if (model != nullptr) cap = complete(cap, model->link);
  if (cap.speed_mts == 0 || cap.width == 0) {
    fail(d.origin, "link", "required field is missing (give speed and width, e.g. gen4 x16)");
  }
  return cap;
}

// A switch without a model is a Broadcom PEX89000 (Gen5) unless its link is slower than Gen5,
// then a PEX88000 (Gen4): the parts HGX boards carry.
BridgeIds Planner::switch_ids(const SwitchSpec& sw) {
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

std::size_t Planner::push(PlanFunction f) {
  plan_.functions.push_back(std::move(f));
  return plan_.functions.size() - 1;
}

// A root or downstream port and what hangs below it. Its capability defaults to the model's
// speed and the child's width, so a profile need not repeat a link on both ends. A port with
// nothing attached reports link down at 2.5 GT/s and width 0, the Link Status of an empty slot.
// The port number (Link Capabilities) is the device number on a switch's internal bus and
// device + 1 on a root bus.
void Planner::add_port(const PortSpec& port, FunctionRole role, std::uint8_t bus, std::uint8_t dev,
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

// A switch is its upstream port on `bus` (device 0) and an internal bus holding one downstream
// port per entry; the upstream port's current link is the one its parent port negotiated.
void Planner::add_switch(const SwitchSpec& sw, const BridgeIds& ids, std::uint8_t bus,
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

}  // namespace nodetopo::mock::detail
