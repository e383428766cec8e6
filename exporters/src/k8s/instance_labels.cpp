// The reservation and instance labels by precedence (instance_labels.hpp, docs/labels.md).
#include <exception>

#include <nlohmann/json.hpp>

#include <nodetopo/base/str_cat.hpp>
#include <nodetopo/exporters/instance_labels.hpp>
#include <nodetopo/exporters/k8s_names.hpp>
#include <nodetopo/exporters/node_labels.hpp>

namespace nodetopo::exporters {

namespace {

using Json = nlohmann::json;

// A Node label and how its value maps onto ours (empty result: this label says nothing).
struct NodeLabelRule {
  std::string_view label;  // "instance-type", ...
  std::string_view key;    // the Node's label key
  std::string (*map)(std::string_view value);
};

std::string as_is(std::string_view v) {
  return std::string(v);
}

// karpenter.sh/capacity-type: on-demand, spot, reserved (Karpenter's well-known labels).
std::string karpenter_capacity(std::string_view v) {
  return v == "on-demand" || v == "spot" || v == "reserved" ? std::string(v) : std::string();
}
// eks.amazonaws.com/capacityType on EKS managed node groups: ON_DEMAND, SPOT, CAPACITY_BLOCK.
std::string eks_capacity(std::string_view v) {
  if (v == "ON_DEMAND") return "on-demand";
  if (v == "SPOT") return "spot";
  if (v == "CAPACITY_BLOCK") return "reserved";
  return {};
}
// cloud.google.com/gke-spot, cloud.google.com/gke-preemptible: "true" on such nodes.
std::string gke_spot(std::string_view v) {
  return v == "true" ? "spot" : "";
}
// kubernetes.azure.com/scalesetpriority: "spot" on AKS spot node pools.
std::string aks_priority(std::string_view v) {
  return v == "spot" ? "spot" : "";
}

constexpr NodeLabelRule kNodeRules[] = {
    {kInstanceTypeLabel, "node.kubernetes.io/instance-type", as_is},
    {kInstanceTypeLabel, "beta.kubernetes.io/instance-type", as_is},
    {kCapacityTypeLabel, "karpenter.sh/capacity-type", karpenter_capacity},
    {kCapacityTypeLabel, "eks.amazonaws.com/capacityType", eks_capacity},
    {kCapacityTypeLabel, "cloud.google.com/gke-spot", gke_spot},
    {kCapacityTypeLabel, "cloud.google.com/gke-preemptible", gke_spot},
    {kCapacityTypeLabel, "kubernetes.azure.com/scalesetpriority", aks_priority},
    {kReservationLabel, "karpenter.k8s.aws/capacity-reservation-id", as_is},
    {kReservationLabel, "cloud.google.com/reservation-name", as_is},
};

constexpr std::string_view kNames[] = {kInstanceTypeLabel, kCapacityTypeLabel, kReservationLabel};

// The string at a path of object keys, or nullptr.
const Json* at(const Json& j, std::initializer_list<const char*> path) {
  const Json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(k);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur->is_string() ? cur : nullptr;
}

void take(CloudInitFacts& facts, std::string_view name, const Json& j,
          std::initializer_list<const char*> path, std::string (*map)(std::string_view)) {
  if (facts.values.count(std::string(name)) != 0) return;
  const Json* v = at(j, path);
  if (v == nullptr) return;
  std::string value = map(v->get<std::string>());
  if (value.empty() || !k8s::check_label_value(value).empty()) return;
  std::string where = "cloud-init ";
  bool first = true;
  for (const char* k : path) {
    where += first ? "" : ".";
    where += k;
    first = false;
  }
  facts.values[std::string(name)] = {std::move(value), std::move(where)};
}

std::string life_cycle(std::string_view v) {
  return v == "spot" || v == "on-demand" ? std::string(v) : std::string();
}

}  // namespace

Result<CloudInitFacts> parse_cloud_init(std::string_view text, std::string_view source) {
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kMalformed,
                      std::string("cloud-init instance data is not valid JSON: ") + e.what(),
                      std::string(source));
  }
  if (!j.is_object()) {
    return make_error(ErrorCode::kMalformed,
                      "cloud-init instance data: expected a JSON object at the top level",
                      std::string(source));
  }
  CloudInitFacts facts;
  take(facts, kInstanceTypeLabel, j, {"v1", "instance_type"}, as_is);
  take(facts, kInstanceTypeLabel, j, {"ds", "meta_data", "instance-type"}, as_is);
  take(facts, kCapacityTypeLabel, j, {"ds", "meta_data", "instance-life-cycle"}, life_cycle);
  if (const Json* c = at(j, {"v1", "cloud_name"})) facts.cloud_name = c->get<std::string>();
  return facts;
}

const std::vector<std::string>& instance_node_label_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const NodeLabelRule& r : kNodeRules)
      k.emplace_back(r.key);
    return k;
  }();
  return keys;
}

std::string check_instance_value(std::string_view name, std::string_view value) {
  if (std::string why = k8s::check_label_value(value); !why.empty()) return why;
  if (value.empty()) return "must not be empty (leave the key out instead)";
  if (name == kCapacityTypeLabel && value != "on-demand" && value != "spot" &&
      value != "reserved") {
    return str_cat("\"", value, "\" is not a capacity type (expected on-demand, spot or reserved)");
  }
  return {};
}

InstanceLabels choose_instance_labels(const InstanceInputs& inputs,
                                      const std::map<std::string, std::string>& node_labels) {
  InstanceLabels out;
  for (std::string_view name : kNames) {
    const std::string key = std::string(kLabelDomain) + "/" + std::string(name);
    if (auto it = inputs.config.find(std::string(name)); it != inputs.config.end()) {
      out[key] = it->second;
      continue;
    }
    bool found = false;
    for (const NodeLabelRule& r : kNodeRules) {
      if (r.label != name) continue;
      auto it = node_labels.find(std::string(r.key));
      if (it == node_labels.end()) continue;
      std::string value = r.map(it->second);
      if (value.empty() || !k8s::check_label_value(value).empty()) continue;
      out[key] = {std::move(value), "node label " + std::string(r.key)};
      found = true;
      break;
    }
    if (found) continue;
    if (auto it = inputs.cloud_init.values.find(std::string(name));
        it != inputs.cloud_init.values.end()) {
      out[key] = it->second;
    }
  }
  return out;
}

std::string describe_instance_labels(const InstanceLabels& labels, const InstanceInputs& inputs) {
  std::string out;
  for (std::string_view name : kNames) {
    const std::string key = std::string(kLabelDomain) + "/" + std::string(name);
    auto it = labels.find(key);
    if (it == labels.end()) {
      out += key + ": none (no config value, Node label or cloud-init fact)\n";
    } else {
      out += key + "=" + it->second.value + "  (" + it->second.source + ")\n";
    }
  }
  if (!inputs.platform.empty() || !inputs.cloud_init.cloud_name.empty()) {
    out += "platform: " + (inputs.platform.empty() ? std::string("-") : inputs.platform);
    if (!inputs.cloud_init.cloud_name.empty()) {
      out += " (cloud-init cloud_name " + inputs.cloud_init.cloud_name + ")";
    }
    out += "\n";
  }
  if (!inputs.cloud_init_error.empty()) out += "cloud-init: " + inputs.cloud_init_error + "\n";
  return out;
}

}  // namespace nodetopo::exporters
