// Pass 3: devices in address order, their names and ordinals, and the identities the profile
// leaves out (serial numbers, UUIDs), derived from the seed so that every build of a profile is
// the same host (written by render/write_accelerators.cpp and the NVML fixture).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "plan/identity.hpp"
#include "plan/plan_state.hpp"

namespace nodetopo::mock::detail {

// Address order is the order the kernel enumerates devices in, and with it the order of NVML
// indexes, DRM cards and automatic names; the profile's order must not leak into any of them.
void Planner::sort_devices() {
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

// Names: either the profile's (checked: link entries and the manifest refer to them) or
// TYPE<k> by address order within the type. Mixing both within a type is
// refused when an automatic name would equal a given one, since links could then mean either.
// Ordinals count per vendor (NVML, ROCm and Habana number their own devices from 0) and NVMe
// controllers count on their own.
void Planner::name_devices() {
  std::map<std::string, const Origin*> taken;
  for (const PlanDevice& d : plan_.devices) {
    if (d.spec->name.empty()) continue;
    const std::string& name = d.spec->name;
    const bool valid = name.size() <= 63 && std::all_of(name.begin(), name.end(), [](char c) {
                         return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
                       });
    if (!valid) {
      fail(d.spec->origin, "name", "'" + name + "' must be 1-63 letters, digits, '_', '-' or '.'");
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

// Serial numbers in each vendor's shape, so that parsers and labels see realistic text; the key
// is the first function's address, which does not change when other devices are added.
std::string Planner::default_serial(const PlanDevice& d, const std::string& key) const {
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

}  // namespace nodetopo::mock::detail
