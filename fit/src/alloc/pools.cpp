// Pools of one node: the slices of each (driver, pool) at its newest generation, with the
// node selection, completeness and validity checks the scheduler makes.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nodetopo/fit/allocator.hpp>
#include <nodetopo/fit/node_selector.hpp>

namespace nodetopo::fit {

namespace {

struct SliceMatch {
  bool matches = false;
  bool assumed = false;  ///< a node selector taken as matching: no Node object
  std::string why;       ///< not matching although no other node is named
  std::string error;
};

// Upstream's nodeMatches for one slice or device, without a Node object taking a node
// selector as matching.
SliceMatch match_selection(const NodeSelection& sel, const std::string& node,
                           const Node* node_object) {
  SliceMatch m;
  if (!sel.node_name.empty()) {
    m.matches = sel.node_name == node;
    return m;
  }
  if (sel.all_nodes) {
    m.matches = true;
    return m;
  }
  if (!sel.node_selector) return m;
  if (node_object == nullptr) {
    m.matches = true;
    m.assumed = true;
    return m;
  }
  auto r = node_selector_matches(*sel.node_selector, *node_object);
  if (!r) {
    m.error = r.error().describe();
    return m;
  }
  m.matches = r.value();
  if (!m.matches) m.why = "node selector " + describe(*sel.node_selector) + " does not match";
  return m;
}

}  // namespace

PoolGathering gather_pools(const std::vector<ResourceSlice>& slices, const std::string& node,
                           const Node* node_object, const Features& features) {
  PoolGathering out;
  const std::string node_name = node_object != nullptr ? node_object->name : node;
  std::map<std::pair<std::string, std::string>, Pool> pools;
  std::set<std::pair<std::string, std::string>> targets_node;
  std::map<std::pair<std::string, std::string>, bool> mixed_generations;
  for (const ResourceSlice& s : slices) {
    const std::string slice_name = s.name.empty() ? s.source : s.name;
    bool on_node = false;
    if (s.per_device_node_selection_set && !features.partitionable_devices) {
      // Upstream skips such slices entirely without the feature.
      out.excluded.push_back(slice_name + ": perDeviceNodeSelection needs DRAPartitionableDevices");
    } else if (!s.node_name.empty() || s.all_nodes || s.node_selector) {
      const SliceMatch m =
          match_selection({s.node_name, s.all_nodes, s.node_selector}, node_name, node_object);
      if (!m.error.empty()) {
        out.error = "failed to perform node selection for slice " + slice_name + ": " + m.error;
        return out;
      }
      on_node = m.matches;
      if (m.assumed) out.assumed.push_back(slice_name);
      if (!m.why.empty()) out.excluded.push_back(slice_name + ": " + m.why);
    } else if (s.per_device_node_selection) {
      bool assumed = false;
      for (const Device& d : s.devices) {
        const SliceMatch m = match_selection(d.node_selection, node_name, node_object);
        if (!m.error.empty()) {
          out.error = "failed to perform node selection for device " + d.name + " in slice " +
                      slice_name + ": " + m.error;
          return out;
        }
        assumed = assumed || m.assumed;
        if (m.matches) {
          on_node = true;
          break;
        }
      }
      if (assumed) out.assumed.push_back(slice_name + " (per device)");
      if (!on_node && node_object != nullptr && !s.devices.empty())
        out.excluded.push_back(slice_name + ": no device of the slice is available on the node");
    }
    const bool counters_only = !s.shared_counters.empty() && s.devices.empty();
    if (!on_node && !counters_only) continue;
    if (on_node) targets_node.insert({s.driver, s.pool});
    Pool& p = pools[{s.driver, s.pool}];
    p.driver = s.driver;
    p.name = s.pool;
    if (features.strict_pools) {
      if (!p.slices.empty() && p.slices.front()->generation != s.generation) {
        mixed_generations[{s.driver, s.pool}] = true;
      }
      p.slices.push_back(&s);
      continue;
    }
    if (!p.slices.empty()) {
      const std::int64_t current = p.slices.front()->generation;
      if (s.generation < current) continue;  // an outdated slice of the pool
      if (s.generation > current) p.slices.clear();
    }
    p.slices.push_back(&s);
  }
  for (auto& [key, p] : pools) {
    if (targets_node.count(key) == 0) continue;  // only counter sets: no device for this node
    // Upstream walks a pool's slices in the informer's order, which is not specified; sorting
    // by name makes the result independent of the input order.
    std::stable_sort(
        p.slices.begin(), p.slices.end(),
        [](const ResourceSlice* a, const ResourceSlice* b) { return a->name < b->name; });
    p.incomplete = static_cast<std::int64_t>(p.slices.size()) != p.slices.front()->slice_count ||
                   mixed_generations[key];
    std::set<std::string> names;
    for (const ResourceSlice* s : p.slices) {
      for (const Device& d : s->devices) {
        if (!names.insert(d.name).second) {
          p.invalid = true;
          p.invalid_reason = "duplicate device name " + d.name;
        }
      }
    }
    out.pools.push_back(std::move(p));
  }
  return out;
}

Features Features::for_version(K8sVersion version) {
  Features f;
  if (version >= K8sVersion::k1_36) {
    f.device_taints = true;
    f.partitionable_devices = true;
    f.consumable_capacity = true;
    f.binding_conditions = true;
    f.strict_pools = true;
  }
  return f;
}

std::string AttributeValue::to_string() const {
  switch (type) {
    case Type::kInt:
      return std::to_string(int_value);
    case Type::kBool:
      return bool_value ? "true" : "false";
    case Type::kString:
    case Type::kVersion:
      return text;
  }
  return text;
}

}  // namespace nodetopo::fit
