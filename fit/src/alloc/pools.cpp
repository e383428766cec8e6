// Pools of one node: the slices of each (driver, pool) at its newest generation, with the
// completeness and validity checks the scheduler makes.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nodetopo/fit/allocator.hpp>

namespace nodetopo::fit {

std::vector<Pool> gather_pools(const std::vector<ResourceSlice>& slices, const std::string& node,
                               bool strict_pools) {
  std::map<std::pair<std::string, std::string>, Pool> pools;
  std::set<std::pair<std::string, std::string>> targets_node;
  std::map<std::pair<std::string, std::string>, bool> mixed_generations;
  for (const ResourceSlice& s : slices) {
    const bool on_node = (!s.node_name.empty() && s.node_name == node) || s.all_nodes ||
                         s.has_node_selector || s.per_device_node_selection;
    const bool counters_only = !s.shared_counters.empty() && s.devices.empty();
    if (!on_node && !counters_only) continue;
    if (on_node) targets_node.insert({s.driver, s.pool});
    Pool& p = pools[{s.driver, s.pool}];
    p.driver = s.driver;
    p.name = s.pool;
    if (strict_pools) {
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
  std::vector<Pool> out;
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
    out.push_back(std::move(p));
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
