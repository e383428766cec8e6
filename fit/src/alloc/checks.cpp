// Per-device checks shared by the allocator and the explanation.
#include "checks.hpp"

#include <string>

namespace nodetopo::fit::detail {

namespace {

// Rounds a requested amount by the capacity's request policy; nullopt when no value fits.
std::optional<Quantity> apply_policy(const Quantity& requested, const RequestPolicy& p) {
  if (!p.valid_values.empty()) {
    for (const Quantity& v : p.valid_values)
      if (v >= requested) return v;
    return std::nullopt;
  }
  Quantity amount = requested;
  if (p.min) {
    if (amount < *p.min) amount = *p.min;
    if (p.step && p.step->nanos() > 0) {
      const auto over = (amount - *p.min).nanos();
      const auto step = p.step->nanos();
      const auto steps = over / step + (over % step != 0 ? 1 : 0);
      amount = Quantity::from_nanos(p.min->nanos() + steps * step);
    }
  }
  if (p.max && amount > *p.max) return std::nullopt;
  return amount;
}

bool tolerates(const Toleration& t, const DeviceTaint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (t.op == "Exists") return t.key.empty() || t.key == taint.key;
  return t.key == taint.key && t.value == taint.value;
}

}  // namespace

std::optional<CapacityMap> consumed_capacity(const ExactRequest& request, const Device& device,
                                             std::string& why) {
  CapacityMap out;
  for (const auto& [name, cap] : device.capacity) {
    auto req = request.capacity_requests.find(name);
    if (req != request.capacity_requests.end()) {
      if (cap.request_policy) {
        auto v = apply_policy(req->second, *cap.request_policy);
        if (!v) {
          why = "capacity " + name + ": request " + req->second.to_string() +
                " has no valid value under the request policy";
          return std::nullopt;
        }
        out[name] = *v;
      } else {
        out[name] = req->second;
      }
    } else if (cap.request_policy && cap.request_policy->default_value) {
      out[name] = *cap.request_policy->default_value;
    } else {
      out[name] = cap.value;
    }
  }
  return out;
}

bool capacity_fits(const ExactRequest& request, const Device& device, const CapacityMap& used,
                   bool consumable_feature, std::string& why) {
  if (!consumable_feature) return true;  // the API server drops capacity requests without it
  for (const auto& [name, amount] : request.capacity_requests) {
    if (device.capacity.find(name) == device.capacity.end()) {
      why = "no capacity " + name;
      return false;
    }
  }
  if (!device.allow_multiple_allocations) {
    for (const auto& [name, amount] : request.capacity_requests) {
      const Quantity& have = device.capacity.at(name).value;
      if (amount > have) {
        why = "capacity " + name + ": requests " + amount.to_string() + ", device has " +
              have.to_string();
        return false;
      }
    }
    return true;
  }
  auto consumed = consumed_capacity(request, device, why);
  if (!consumed) return false;
  for (const auto& [name, amount] : *consumed) {
    Quantity total = amount;
    if (auto u = used.find(name); u != used.end()) total = total + u->second;
    const Quantity& have = device.capacity.at(name).value;
    if (total > have) {
      why = "capacity " + name + ": " + amount.to_string() + " more would make " +
            total.to_string() + " of " + have.to_string();
      return false;
    }
  }
  return true;
}

bool taint_blocks(const Device& device, const ExactRequest& request, std::string& which) {
  for (const DeviceTaint& taint : device.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    bool ok = false;
    for (const Toleration& t : request.tolerations)
      ok = ok || tolerates(t, taint);
    if (!ok) {
      which = taint.key + (taint.value.empty() ? "" : "=" + taint.value) + ":" + taint.effect;
      return true;
    }
  }
  return false;
}

const AttributeValue* lookup_attribute(const Device& device, const std::string& driver,
                                       const std::string& qualified) {
  if (auto it = device.attributes.find(qualified); it != device.attributes.end())
    return &it->second;
  const auto slash = qualified.find('/');
  if (slash == std::string::npos || qualified.substr(0, slash) != driver) return nullptr;
  if (auto it = device.attributes.find(qualified.substr(slash + 1));
      it != device.attributes.end()) {
    return &it->second;
  }
  return nullptr;
}

Counters available_counters(const Pool& pool, const std::vector<AllocatedDevice>& allocated) {
  Counters out;
  for (const ResourceSlice* s : pool.slices)
    for (const auto& [set, counters] : s->shared_counters)
      for (const auto& [name, q] : counters)
        out[set][name] = q;
  for (const ResourceSlice* s : pool.slices) {
    for (const Device& d : s->devices) {
      if (d.consumes_counters.empty()) continue;
      bool is_allocated = false;
      for (const AllocatedDevice& a : allocated)
        is_allocated =
            is_allocated || (a.driver == pool.driver && a.pool == pool.name && a.device == d.name);
      if (!is_allocated) continue;
      for (const auto& [set, counters] : d.consumes_counters)
        for (const auto& [name, q] : counters)
          if (out[set].count(name) != 0) out[set][name] = out[set][name] - q;
    }
  }
  return out;
}

}  // namespace nodetopo::fit::detail
