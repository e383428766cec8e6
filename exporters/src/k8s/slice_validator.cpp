#include <map>
#include <set>

#include <nodetopo/exporters/k8s_names.hpp>
#include <nodetopo/exporters/slice_validator.hpp>

namespace nodetopo::exporters::dra {

namespace {

std::string q(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

class SliceChecker {
 public:
  SliceChecker(std::vector<Violation>& out, std::string object, K8sVersion version)
      : out_(out), object_(std::move(object)), version_(version) {}

  void add(std::string field, std::string message) {
    out_.push_back({object_, std::move(field), std::move(message)});
  }
  void check(const std::string& field, const std::string& why) {
    if (!why.empty()) add(field, why);
  }

  void quantity(const std::string& field, const std::string& value) {
    if (!k8s::parse_quantity(value)) {
      add(field, q(value) +
                     " is not a quantity (a whole number with an optional suffix such as "
                     "Mi, Gi or k)");
    }
  }

  void metadata(const ResourceSlice& s) {
    const std::string expected = s.node_name + "-" + s.driver + "-";
    if (s.generate_name != expected) {
      add("metadata.generateName",
          q(s.generate_name) + " must be \"<node>-<driver>-\", here " + q(expected));
    }
    // The API server keeps 58 characters of generateName and appends 5 random ones: the result
    // must still be a DNS subdomain (a cut ending in '-' or '.' before the suffix is fine only
    // for '-').
    const std::string generated = s.generate_name.substr(0, kGenerateNameKept) + "x0x0x";
    if (std::string why = k8s::check_dns_subdomain(generated, 253); !why.empty()) {
      add("metadata.generateName",
          "names generated from " + q(s.generate_name) + " would be invalid: " + why);
    }
    if (!s.node_uid.empty() && s.node_name.empty()) {
      add("metadata.ownerReferences[0].name", "the owner Node needs a name");
    }
  }

  void spec(const ResourceSlice& s) {
    check("spec.driver", k8s::check_dns_subdomain(s.driver, kMaxDriverNameLength));
    if (s.node_name.empty()) {
      add("spec.nodeName", "must be set: nodetopo publishes node-local devices");
    } else {
      check("spec.nodeName", k8s::check_dns_subdomain(s.node_name, 253));
    }
    pool_name(s.pool_name);
    if (s.pool_generation < 0) {
      add("spec.pool.generation", std::to_string(s.pool_generation) + " must not be negative");
    }
    if (s.resource_slice_count < 1) {
      add("spec.pool.resourceSliceCount",
          std::to_string(s.resource_slice_count) + " must be greater than zero");
    }
    if (!s.devices.empty() && !s.shared_counters.empty()) {
      add("spec",
          "holds both devices and sharedCounters; from Kubernetes 1.35 a slice holds one "
          "or the other");
    }
    if (version_ < K8sVersion::k1_35 && !s.shared_counters.empty()) {
      add("spec.sharedCounters",
          "partitionable devices are published only for Kubernetes 1.35 and later");
    }
    counter_sets(s.shared_counters);
    std::size_t limit = kMaxDevicesPerSlice;
    for (const Device& d : s.devices) {
      if (!d.taints.empty() || !d.consumes_counters.empty()) {
        limit = kMaxDevicesPerSliceWithTaintsOrCounters;
      }
    }
    if (s.devices.size() > limit) {
      add("spec.devices",
          std::to_string(s.devices.size()) + " devices; at most " + std::to_string(limit) +
              " are allowed" +
              (limit == kMaxDevicesPerSlice ? std::string()
                                            : " when a device has taints or consumes counters"));
    }
    for (std::size_t i = 0; i < s.devices.size(); ++i) {
      device("spec.devices[" + std::to_string(i) + "]", s.devices[i]);
    }
  }

  void pool_name(const std::string& name) {
    if (name.empty()) {
      add("spec.pool.name", "must not be empty");
      return;
    }
    if (name.size() > kMaxPoolNameLength) {
      add("spec.pool.name", q(name) + " is " + std::to_string(name.size()) +
                                " characters long; at most 253 are allowed");
      return;
    }
    std::size_t start = 0;
    while (true) {
      const std::size_t slash = name.find('/', start);
      const std::string part =
          name.substr(start, slash == std::string::npos ? slash : slash - start);
      if (std::string why = k8s::check_dns_subdomain(part, 253); !why.empty()) {
        add("spec.pool.name", "part " + q(part) + " of " + q(name) + ": " + why);
        return;
      }
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
  }

  void counter_sets(const std::vector<CounterSet>& sets) {
    if (sets.size() > kMaxCounterSetsPerSlice) {
      add("spec.sharedCounters", std::to_string(sets.size()) + " counter sets; at most " +
                                     std::to_string(kMaxCounterSetsPerSlice) + " are allowed");
    }
    for (std::size_t i = 0; i < sets.size(); ++i) {
      const std::string field = "spec.sharedCounters[" + std::to_string(i) + "]";
      check(field + ".name", k8s::check_dns_label(sets[i].name));
      counters(field + ".counters", sets[i].counters, kMaxCountersPerSet);
    }
  }

  void counters(const std::string& field, const std::map<std::string, std::string>& counters,
                std::size_t limit) {
    if (counters.empty()) add(field, "must hold at least one counter");
    if (counters.size() > limit) {
      add(field, std::to_string(counters.size()) + " counters; at most " + std::to_string(limit) +
                     " are allowed");
    }
    for (const auto& [name, value] : counters) {
      check(field + "[" + q(name) + "]", k8s::check_dns_label(name));
      quantity(field + "[" + q(name) + "].value", value);
    }
  }

  void device(const std::string& field, const Device& d) {
    check(field + ".name", k8s::check_dns_label(d.name));
    const std::size_t entries = d.attributes.size() + d.capacity.size();
    if (entries > kMaxAttributesAndCapacities) {
      add(field, "device " + q(d.name) + " has " + std::to_string(d.attributes.size()) +
                     " attributes and " + std::to_string(d.capacity.size()) +
                     " capacities; at most 32 together are allowed");
    }
    for (const auto& [key, value] : d.attributes) {
      const std::string f = field + ".attributes[" + q(key) + "]";
      check(f, k8s::check_qualified_attribute_name(key));
      if (value.type == AttributeValue::Type::kString ||
          value.type == AttributeValue::Type::kVersion) {
        const char* kind = value.type == AttributeValue::Type::kString ? "string" : "version";
        if (value.text.size() > kMaxAttributeValueBytes) {
          add(f + "." + kind, std::string(kind) + " value is " + std::to_string(value.text.size()) +
                                  " bytes; at most 64 are "
                                  "allowed");
        }
        if (value.type == AttributeValue::Type::kVersion) {
          check(f + ".version", k8s::check_semver(value.text));
        }
      }
      if (key == "resource.kubernetes.io/pciBusID" && version_ < K8sVersion::k1_36) {
        add(f, "the standard pciBusID attribute is published only for Kubernetes 1.36 and later");
      }
    }
    for (const auto& [key, cap] : d.capacity) {
      const std::string f = field + ".capacity[" + q(key) + "]";
      check(f, k8s::check_qualified_attribute_name(key));
      quantity(f + ".value", cap.value);
      if (cap.request_policy) {
        if (!d.allow_multiple_allocations) {
          add(f + ".requestPolicy", "requires allowMultipleAllocations: true on the device");
        }
        request_policy(f + ".requestPolicy", cap.value, *cap.request_policy);
      }
    }
    if (d.consumes_counters.size() > kMaxCounterConsumptionsPerDevice) {
      add(field + ".consumesCounters",
          std::to_string(d.consumes_counters.size()) + " entries; at most 2 are allowed");
    }
    std::set<std::string> sets;
    for (std::size_t i = 0; i < d.consumes_counters.size(); ++i) {
      const auto& c = d.consumes_counters[i];
      const std::string f = field + ".consumesCounters[" + std::to_string(i) + "]";
      check(f + ".counterSet", k8s::check_dns_label(c.counter_set));
      if (!sets.insert(c.counter_set).second) {
        add(f + ".counterSet", q(c.counter_set) + " is listed twice");
      }
      counters(f + ".counters", c.counters, kMaxCountersPerConsumption);
    }
    if (d.taints.size() > kMaxTaintsPerDevice) {
      add(field + ".taints", std::to_string(d.taints.size()) + " taints; at most 16 are allowed");
    }
    for (std::size_t i = 0; i < d.taints.size(); ++i) {
      const auto& t = d.taints[i];
      const std::string f = field + ".taints[" + std::to_string(i) + "]";
      check(f + ".key", k8s::check_label_key(t.key));
      check(f + ".value", k8s::check_label_value(t.value));
      if (t.effect != "None" && t.effect != "NoSchedule" && t.effect != "NoExecute") {
        add(f + ".effect", q(t.effect) + " is not one of None, NoSchedule, NoExecute");
      }
    }
  }

  void request_policy(const std::string& field, const std::string& capacity_value,
                      const RequestPolicy& p) {
    const auto cap = k8s::parse_quantity(capacity_value);
    auto parse = [&](const std::string& f, const std::string& v) -> std::optional<std::uint64_t> {
      if (v.empty()) return std::nullopt;
      const auto parsed = k8s::parse_quantity(v);
      if (!parsed) quantity(f, v);
      return parsed;
    };
    const bool has_range = !p.min.empty() || !p.max.empty() || !p.step.empty();
    if (has_range && !p.valid_values.empty()) {
      add(field, "sets both validRange and validValues; at most one is allowed");
    }
    const auto def = parse(field + ".default", p.default_value);
    if ((has_range || !p.valid_values.empty()) && p.default_value.empty()) {
      add(field + ".default", "must be set when validRange or validValues is set");
    }
    if (has_range) {
      const auto min = parse(field + ".validRange.min", p.min);
      const auto max = parse(field + ".validRange.max", p.max);
      const auto step = parse(field + ".validRange.step", p.step);
      if (p.min.empty()) add(field + ".validRange.min", "must be set");
      if (cap && min && *min > *cap) {
        add(field + ".validRange.min", q(p.min) + " exceeds the capacity " + q(capacity_value));
      }
      if (cap && max && *max > *cap) {
        add(field + ".validRange.max", q(p.max) + " exceeds the capacity " + q(capacity_value));
      }
      if (min && max && *min > *max) {
        add(field + ".validRange.min", q(p.min) + " exceeds max " + q(p.max));
      }
      if (def && min && *def < *min) {
        add(field + ".default", q(p.default_value) + " is below min " + q(p.min));
      }
      if (def && max && *def > *max) {
        add(field + ".default", q(p.default_value) + " exceeds max " + q(p.max));
      }
      if (step) {
        if (*step == 0) {
          add(field + ".validRange.step", "must be greater than zero");
        } else {
          if (def && *def % *step != 0) {
            add(field + ".default", q(p.default_value) + " is not a multiple of step " + q(p.step));
          }
          if (max && *max % *step != 0) {
            add(field + ".validRange.max", q(p.max) + " is not a multiple of step " + q(p.step));
          }
          if (cap && min && *min + *step > *cap) {
            add(field + ".validRange.step", "min + step exceeds the capacity " + q(capacity_value));
          }
        }
      }
    }
    if (!p.valid_values.empty()) {
      if (p.valid_values.size() > kMaxValidValues) {
        add(field + ".validValues",
            std::to_string(p.valid_values.size()) + " entries; at most 10 are allowed");
      }
      std::optional<std::uint64_t> prev;
      bool has_default = false;
      for (std::size_t i = 0; i < p.valid_values.size(); ++i) {
        const auto v = parse(field + ".validValues[" + std::to_string(i) + "]", p.valid_values[i]);
        if (v && prev && *v <= *prev) {
          add(field + ".validValues", "must be sorted in ascending order without duplicates");
        }
        if (v && cap && *v > *cap) {
          add(field + ".validValues[" + std::to_string(i) + "]",
              q(p.valid_values[i]) + " exceeds the capacity " + q(capacity_value));
        }
        if (v && def && *v == *def) has_default = true;
        if (v) prev = v;
      }
      if (def && !has_default) {
        add(field + ".default", q(p.default_value) + " is not one of validValues");
      }
    }
  }

 private:
  std::vector<Violation>& out_;
  std::string object_;
  K8sVersion version_;
};

}  // namespace

std::string Violation::describe() const {
  return object + ": " + field + ": " + message;
}

std::string slice_object_name(const ResourceSlice& slice, std::size_t index_in_pool) {
  return "ResourceSlice " + slice.generate_name + "* (pool " + slice.pool_name + ", slice " +
         std::to_string(index_in_pool + 1) + " of " + std::to_string(slice.resource_slice_count) +
         ")";
}

std::vector<Violation> validate_slices(std::span<const ResourceSlice> slices, K8sVersion version) {
  std::vector<Violation> out;
  struct PoolState {
    std::size_t seen = 0;
    std::int64_t generation = 0;
    std::int64_t count = 0;
    std::set<std::string> devices;
    std::map<std::string, std::set<std::string>> counter_sets;  // set -> counter names
    std::vector<std::pair<std::string, const ResourceSlice*>> objects;
  };
  std::map<std::pair<std::string, std::string>, PoolState> pools;  // (driver, pool)
  for (const ResourceSlice& s : slices) {
    PoolState& pool = pools[{s.driver, s.pool_name}];
    const std::string object = slice_object_name(s, pool.seen);
    if (pool.seen == 0) {
      pool.generation = s.pool_generation;
      pool.count = s.resource_slice_count;
    } else {
      if (s.pool_generation != pool.generation) {
        out.push_back({object, "spec.pool.generation",
                       std::to_string(s.pool_generation) + " differs from " +
                           std::to_string(pool.generation) +
                           " in another slice of the pool: all slices of a pool carry one "
                           "generation"});
      }
      if (s.resource_slice_count != pool.count) {
        out.push_back({object, "spec.pool.resourceSliceCount",
                       std::to_string(s.resource_slice_count) + " differs from " +
                           std::to_string(pool.count) + " in another slice of the pool"});
      }
    }
    ++pool.seen;
    SliceChecker checker(out, object, version);
    checker.metadata(s);
    checker.spec(s);
    for (std::size_t i = 0; i < s.devices.size(); ++i) {
      if (!pool.devices.insert(s.devices[i].name).second) {
        out.push_back({object, "spec.devices[" + std::to_string(i) + "].name",
                       "\"" + s.devices[i].name + "\" is used by another device of the pool"});
      }
    }
    for (std::size_t i = 0; i < s.shared_counters.size(); ++i) {
      const CounterSet& set = s.shared_counters[i];
      if (pool.counter_sets.contains(set.name)) {
        out.push_back({object, "spec.sharedCounters[" + std::to_string(i) + "].name",
                       "\"" + set.name + "\" is used by another counter set of the pool"});
      }
      for (const auto& [name, value] : set.counters)
        pool.counter_sets[set.name].insert(name);
    }
    pool.objects.emplace_back(object, &s);
  }
  // Pool-wide checks once every slice is known: slice count and counter references.
  for (auto& [key, pool] : pools) {
    if (static_cast<std::int64_t>(pool.seen) != pool.count && pool.count >= 1) {
      out.push_back({pool.objects.front().first, "spec.pool.resourceSliceCount",
                     std::to_string(pool.count) + " but the pool has " + std::to_string(pool.seen) +
                         " slices"});
    }
    for (const auto& [object, slice] : pool.objects) {
      for (std::size_t i = 0; i < slice->devices.size(); ++i) {
        const Device& d = slice->devices[i];
        for (std::size_t j = 0; j < d.consumes_counters.size(); ++j) {
          const auto& c = d.consumes_counters[j];
          const std::string field =
              "spec.devices[" + std::to_string(i) + "].consumesCounters[" + std::to_string(j) + "]";
          auto it = pool.counter_sets.find(c.counter_set);
          if (it == pool.counter_sets.end()) {
            out.push_back({object, field + ".counterSet",
                           "\"" + c.counter_set + "\" is not a counter set of the pool"});
            continue;
          }
          for (const auto& [name, value] : c.counters) {
            if (!it->second.contains(name)) {
              out.push_back(
                  {object, field + ".counters[\"" + name + "\"]",
                   "counter set \"" + c.counter_set + "\" has no counter \"" + name + "\""});
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace nodetopo::exporters::dra
