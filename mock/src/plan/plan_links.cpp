// Pass 5: NVLink and xGMI wiring between the devices named in pass 3 (served by the mock NVML
// fixture, render/write_fixtures.cpp, and by KFD io_links, render/write_accelerators.cpp).
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plan/plan_state.hpp"

namespace nodetopo::mock::detail {

// A link entry names devices, or name prefixes ending in '*' ("GPU*"), on each side. An exact
// name that matches nothing is an error (a typo would silently drop links); the message lists
// the first devices so the author sees the names the planner gave.
std::vector<std::size_t> Planner::resolve(const std::vector<std::string>& names,
                                          const Origin& origin, std::string_view subfield,
                                          bool& wildcard) {
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

// Every pair is wired once: a pair named by two entries is refused rather than added up, so a
// profile says each GPU pair's link count in one place. NVLink slots are filled in entry order,
// which is NVML's link index order; a GPU model's NVLink count bounds the list and pads it with
// unwired links, so every link index the model has answers.
void Planner::plan_links() {
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

// NVLinks between a GPU and an NVSwitch take `count` of the GPU's slots, `down` of them (the
// last ones) inactive; the switch side only counts the ports against its total, because the
// fixture lists links per GPU. Switch-to-switch trunks are not modelled.
void Planner::wire_nvlink(const LinkSpec& link, std::size_t a, std::size_t b,
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

// xGMI joins AMD GPUs only, one entry per pair with its link count; inactive links are modelled
// for NVLink only.
void Planner::wire_xgmi(const LinkSpec& link, std::size_t a, std::size_t b) {
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

}  // namespace nodetopo::mock::detail
