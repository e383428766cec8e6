// The publish policy as pure functions over the node's slices (see publish_policy.hpp).
#include <algorithm>
#include <cctype>

#include <nodetopo/base/strings.hpp>
#include <nodetopo/kubelet/publish_policy.hpp>

namespace nodetopo::kubelet {

namespace {

/// An attribute key names a PCI bus id: the standard one, or a driver's own spelling.
bool is_bus_id_key(const std::string& key) {
  if (key == "resource.kubernetes.io/pciBusID") return true;
  const std::size_t slash = key.rfind('/');
  const std::string local = ascii_lower(slash == std::string::npos ? key : key.substr(slash + 1));
  return local == "pcibusid" || local == "pci_bus_id" || local == "pciaddress" ||
         local == "pci-bus-id" || local == "busid";
}

}  // namespace

std::set<std::string> foreign_pci_bus_ids(const std::vector<nlohmann::json>& node_slices,
                                          const std::string& driver) {
  std::set<std::string> out;
  for (const nlohmann::json& slice : node_slices) {
    const auto spec = slice.find("spec");
    if (spec == slice.end() || !spec->is_object()) continue;
    if (spec->value("driver", "") == driver) continue;
    const auto devices = spec->find("devices");
    if (devices == spec->end() || !devices->is_array()) continue;
    for (const nlohmann::json& device : *devices) {
      const auto attrs = device.find("attributes");
      if (attrs == device.end() || !attrs->is_object()) continue;
      for (const auto& [key, value] : attrs->items()) {
        if (!is_bus_id_key(key) || !value.is_object() || !value.contains("string")) continue;
        if (!value["string"].is_string()) continue;
        std::string id = ascii_lower(value["string"].get<std::string>());
        if (id.size() == 7) id = "0000:" + id;  // "1b:00.0" without its domain
        out.insert(id);
      }
    }
  }
  return out;
}

std::set<std::string> devices_to_publish(const std::vector<NodeDevice>& devices,
                                         const std::map<DeviceKind, PublishPolicy>& policy,
                                         const std::set<std::string>& foreign) {
  std::set<std::string> out;
  for (const NodeDevice& d : devices) {
    const auto p = policy.find(d.kind);
    const PublishPolicy rule = p == policy.end() ? PublishPolicy::kAuto : p->second;
    if (rule == PublishPolicy::kNever) continue;
    if (rule == PublishPolicy::kAuto && foreign.count(ascii_lower(d.pci_bus_id)) != 0) continue;
    out.insert(d.name);
  }
  return out;
}

std::vector<nlohmann::json> filter_slices(const std::vector<nlohmann::json>& slices,
                                          const std::set<std::string>& keep) {
  std::vector<nlohmann::json> out;
  for (nlohmann::json slice : slices) {
    auto& spec = slice["spec"];
    if (!spec.contains("devices")) {
      out.push_back(std::move(slice));  // shared counters: kept as they are
      continue;
    }
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& d : spec["devices"])
      if (keep.count(d.value("name", "")) != 0) kept.push_back(d);
    if (kept.empty()) continue;
    spec["devices"] = kept;
    out.push_back(std::move(slice));
  }
  if (out.empty() && !slices.empty()) {
    nlohmann::json empty = slices.front();
    empty["spec"]["devices"] = nlohmann::json::array();
    out.push_back(std::move(empty));
  }
  return out;
}

}  // namespace nodetopo::kubelet
