// The depth-first search of the structured allocator: one required device at a time, the
// candidates in pool/slice/device order, each tentatively allocated (in use, counters,
// capacity, constraints) and rolled back when the rest of the search fails.
#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nodetopo/fit/allocator.hpp>
#include <nodetopo/fit/node_selector.hpp>
#include <nodetopo/fit/selector.hpp>

#include "checks.hpp"

namespace nodetopo::fit {

namespace {

using detail::CapacityMap;
using detail::Counters;

struct ReqKey {
  int claim = 0;
  int request = 0;
  int sub = 0;
  auto operator<=>(const ReqKey&) const = default;
};

struct Candidate {
  const Pool* pool = nullptr;
  const ResourceSlice* slice = nullptr;
  const Device* device = nullptr;
  DeviceId id;
};

struct RequestData {
  const ExactRequest* request = nullptr;
  const DeviceRequest* parent = nullptr;  ///< set for a firstAvailable subrequest
  const DeviceClass* device_class = nullptr;
  int num_devices = 0;
  std::vector<Candidate> all;  ///< allocationMode All: the devices, known in advance
  int selected_sub = 0;
  [[nodiscard]] std::string name() const {
    return parent != nullptr ? parent->name + "/" + request->name : request->name;
  }
};

struct ConstraintState {
  const DeviceConstraint* spec = nullptr;
  std::string attribute;
  bool distinct = false;
  AttributeValue first;
  int count = 0;
  std::vector<AttributeValue> values;  ///< distinct: the values taken, in order

  [[nodiscard]] bool applies(const std::string& request, const std::string& sub) const {
    if (spec->requests.empty()) return true;
    for (const std::string& r : spec->requests)
      if (r == request || (!sub.empty() && r == request + "/" + sub)) return true;
    return false;
  }
  bool add(const std::string& request, const std::string& sub, const Device& d,
           const std::string& driver) {
    if (!applies(request, sub)) return true;
    const AttributeValue* a = detail::lookup_attribute(d, driver, attribute);
    if (a == nullptr) return false;
    if (distinct) {
      for (const AttributeValue& v : values)
        if (v == *a) return false;
      values.push_back(*a);
      return true;
    }
    if (count == 0) {
      first = *a;
      count = 1;
      return true;
    }
    if (!(first == *a)) return false;
    ++count;
    return true;
  }
  void remove(const std::string& request, const std::string& sub) {
    if (!applies(request, sub)) return;
    if (distinct) {
      values.pop_back();
    } else {
      --count;
    }
  }
};

struct Undo {
  int claim = 0;
  std::string base_request;
  std::string sub_request;
  DeviceId id;
  bool marked = false;
  bool counters = false;
  const Candidate* candidate = nullptr;
  std::optional<CapacityMap> capacity;
  std::size_t previous_results = 0;
};

struct Location {
  std::size_t pool = 0;
  std::size_t slice = 0;
  std::size_t device = 0;
};

enum class Step : std::uint8_t { kDone, kFail, kMaxSize };

struct Stop {
  std::string error;
  std::string expression;
};

class Search {
 public:
  Search(const Inputs& in, const AllocateOptions& o)
      : in_(in), opts_(o), f_(o.features), selectors_(o.features) {}

  AllocateOutcome run() {
    AllocateOutcome out;
    try {
      PoolGathering gathered = gather_pools(in_.slices, opts_.node,
                                            opts_.node_object ? &*opts_.node_object : nullptr, f_);
      if (!gathered.error.empty()) throw Stop{"gather pool information: " + gathered.error, ""};
      pools_ = std::move(gathered.pools);
      index_allocated();
      prepare();
      const Step s = allocate_one(0, 0, 0, 0, false, {});
      out.steps = steps_;
      if (s != Step::kDone) {
        out.status = AllocateOutcome::Status::kUnschedulable;
        return out;
      }
      out.status = AllocateOutcome::Status::kFits;
      for (std::size_t c = 0; c < in_.claims.size(); ++c) {
        ClaimResult r{in_.claims[c].name, results_[c], configs(static_cast<int>(c)), {}};
        r.node_selector = node_selector(static_cast<int>(c));
        out.claims.push_back(std::move(r));
      }
    } catch (const Stop& stop) {
      out.status = AllocateOutcome::Status::kError;
      out.claims.clear();
      out.error = stop.error;
      out.error_expression = stop.expression;
      out.steps = steps_;
    }
    return out;
  }

 private:
  const Device* find_device(const DeviceId& id, const Pool** pool_out = nullptr) const {
    for (const Pool& p : pools_) {
      if (p.driver != id.driver || p.name != id.pool) continue;
      for (const ResourceSlice* s : p.slices)
        for (const Device& d : s->devices)
          if (d.name == id.device) {
            if (pool_out != nullptr) *pool_out = &p;
            return &d;
          }
    }
    return nullptr;
  }

  void index_allocated() {
    for (const AllocatedDevice& a : in_.allocated) {
      const DeviceId id{a.driver, a.pool, a.device};
      const Device* d = find_device(id);
      if (f_.consumable_capacity && d != nullptr && d->allow_multiple_allocations) {
        CapacityMap& used = allocated_capacity_[id];
        for (const auto& [k, q] : a.consumed_capacity)
          used[k] = used.count(k) ? used[k] + q : q;
        if (a.consumed_capacity.empty()) used.emplace("", Quantity());  // marks the device shared
        continue;
      }
      if (!a.admin_access) allocated_.insert(id);
    }
    // Counters are reduced by every allocated device, shared or not.
    for (const Pool& p : pools_)
      available_[{p.driver, p.name}] = detail::available_counters(p, in_.allocated);
  }

  std::string claim_name(int c) const { return in_.claims[static_cast<std::size_t>(c)].name; }

  RequestData validate(const ExactRequest& r, const DeviceRequest* parent, int claim,
                       const ReqKey& key) {
    RequestData d;
    d.request = &r;
    d.parent = parent;
    const std::string where = "claim " + claim_name(claim) + ", request " +
                              (parent != nullptr ? parent->name + "/" : "") + r.name;
    if (!f_.admin_access && r.admin_access.has_value()) {
      throw Stop{where + ": admin access is requested, but the feature is disabled", ""};
    }
    for (const DeviceClass& c : in_.classes)
      if (c.name == r.device_class) d.device_class = &c;
    if (d.device_class == nullptr) {
      throw Stop{where + ": device class " + r.device_class +
                     " does not exist (pass it with --class FILE)",
                 ""};
    }
    if (!r.all) {
      d.num_devices = static_cast<int>(std::min<std::int64_t>(r.count, 1 << 20));
      return d;
    }
    for (const Pool& p : pools_) {
      if (p.incomplete) {
        throw Stop{where + ": asks for all devices, but resource pool " + p.driver + "/" + p.name +
                       " is currently being updated (it has " + std::to_string(p.slices.size()) +
                       " of " + std::to_string(p.slices.front()->slice_count) + " slices)",
                   ""};
      }
      if (p.invalid) {
        throw Stop{where + ": asks for all devices, but resource pool " + p.driver + "/" + p.name +
                       " is currently invalid: " + p.invalid_reason,
                   ""};
      }
      for (const ResourceSlice* s : p.slices)
        for (const Device& dev : s->devices) {
          Candidate c{&p, s, &dev, {p.driver, p.name, dev.name}};
          if (selectable(key, d, c)) d.all.push_back(c);
        }
    }
    d.num_devices = static_cast<int>(d.all.size());
    return d;
  }

  void prepare() {
    results_.resize(in_.claims.size());
    constraints_.resize(in_.claims.size());
    for (std::size_t ci = 0; ci < in_.claims.size(); ++ci) {
      const ResourceClaim& claim = in_.claims[ci];
      const int c = static_cast<int>(ci);
      int min_devices = 0;
      for (std::size_t ri = 0; ri < claim.requests.size(); ++ri) {
        const DeviceRequest& r = claim.requests[ri];
        const int ri_i = static_cast<int>(ri);
        if (!r.first_available.empty()) {
          if (!f_.prioritized_list) {
            throw Stop{"claim " + claim.name + ", request " + r.name +
                           ": has subrequests, but the DRAPrioritizedList feature is disabled",
                       ""};
          }
          int min_req = 1 << 30;
          for (std::size_t si = 0; si < r.first_available.size(); ++si) {
            const ReqKey key{c, ri_i, static_cast<int>(si)};
            data_[key] = validate(r.first_available[si], &r, c, key);
            min_req = std::min(min_req, data_[key].num_devices);
          }
          min_devices += min_req;
        } else {
          const ReqKey key{c, ri_i, 0};
          data_[key] = validate(*r.exactly, nullptr, c, key);
          min_devices += data_[key].num_devices;
        }
      }
      if (min_devices > kMaxDevicesPerClaim) {
        throw Stop{"claim " + claim.name + ": number of requested devices " +
                       std::to_string(min_devices) + " exceeds the claim limit of " +
                       std::to_string(kMaxDevicesPerClaim),
                   ""};
      }
      for (const DeviceConstraint& k : claim.constraints) {
        ConstraintState s;
        s.spec = &k;
        s.distinct = !k.distinct_attribute.empty();
        s.attribute = s.distinct ? k.distinct_attribute : k.match_attribute;
        if (s.distinct && !f_.consumable_capacity) {
          throw Stop{"claim " + claim.name +
                         ": distinctAttribute constraints need the "
                         "DRAConsumableCapacity feature (default from 1.36; --feature-gates)",
                     ""};
        }
        constraints_[ci].push_back(s);
      }
    }
  }

  // Class selectors, then request selectors; errors stop the allocation, as upstream.
  bool selectable(const ReqKey& key, const RequestData& d, const Candidate& c) {
    if (!f_.binding_conditions && c.device->has_binding_conditions) return false;
    const auto cache_key = std::make_pair(key, c.id);
    if (auto it = match_cache_.find(cache_key); it != match_cache_.end()) return it->second;
    bool ok = true;
    const auto run = [&](const std::vector<std::string>& exprs, bool is_class) {
      for (std::size_t i = 0; i < exprs.size() && ok; ++i) {
        const SelectorOutcome r = selectors_.evaluate(exprs[i], *c.device, c.id.driver);
        if (!r.error.empty()) {
          const std::string owner =
              is_class ? "class " + d.device_class->name
                       : "claim " + claim_name(key.claim) + ", request " + d.name();
          throw Stop{owner + ": selector #" + std::to_string(i) +
                         (r.compile_error ? "" : " on device " + c.id.to_string()) + ": " + r.error,
                     exprs[i]};
        }
        ok = r.matches;
      }
    };
    run(d.device_class->selectors, true);
    if (ok) run(d.request->selectors, false);
    if (ok && c.slice->per_device_node_selection) ok = available_on_node(*c.device, c.slice->name);
    match_cache_[cache_key] = ok;
    return ok;
  }

  // perDeviceNodeSelection: whether this device (not only its slice) is on the node; without a
  // Node object a node selector counts as matching.
  bool available_on_node(const Device& d, const std::string& slice) const {
    const NodeSelection& sel = d.node_selection;
    const std::string node = opts_.node_object ? opts_.node_object->name : opts_.node;
    if (!sel.node_name.empty()) return sel.node_name == node;
    if (sel.all_nodes) return true;
    if (!sel.node_selector) return false;
    if (!opts_.node_object) return true;
    auto r = node_selector_matches(*sel.node_selector, *opts_.node_object);
    if (!r) {
      throw Stop{"failed to perform node selection for device " + d.name + " in slice " + slice +
                     ": " + r.error().describe(),
                 ""};
    }
    return r.value();
  }

  const ResourceSlice* slice_of(const DeviceId& id, const Device** device) const {
    for (const Pool& p : pools_) {
      if (p.driver != id.driver || p.name != id.pool) continue;
      for (const ResourceSlice* s : p.slices)
        for (const Device& d : s->devices)
          if (d.name == id.device) {
            *device = &d;
            return s;
          }
    }
    return nullptr;
  }

  // Upstream's createNodeSelector: a device local to one node pins the allocation to it;
  // otherwise the one-term node selectors of the devices' slices (or devices) are merged.
  std::optional<NodeSelector> node_selector(int claim) const {
    NodeSelector merged;
    merged.terms.emplace_back();
    NodeSelectorTerm& term = merged.terms.front();
    const auto add_new = [](const std::vector<NodeSelectorRequirement>& from,
                            std::vector<NodeSelectorRequirement>& to) {
      for (const NodeSelectorRequirement& r : from)
        if (std::find(to.begin(), to.end(), r) == to.end()) to.push_back(r);
    };
    for (const DeviceResult& res : results_[static_cast<std::size_t>(claim)]) {
      const Device* d = nullptr;
      const ResourceSlice* s = slice_of(res.id, &d);
      if (s == nullptr) continue;
      const std::string& name =
          s->per_device_node_selection ? d->node_selection.node_name : s->node_name;
      const std::optional<NodeSelector>& sel =
          s->per_device_node_selection ? d->node_selection.node_selector : s->node_selector;
      if (!name.empty()) {
        NodeSelector one;
        one.terms.push_back({{}, {{"metadata.name", "In", {name}}}});
        return one;
      }
      if (!sel) continue;
      if (sel->terms.size() > 1) {
        throw Stop{"create NodeSelector for claim " + claim_name(claim) +
                       ": unsupported ResourceSlice.NodeSelector with " +
                       std::to_string(sel->terms.size()) + " terms",
                   ""};
      }
      if (sel->terms.size() == 1) {
        add_new(sel->terms[0].match_fields, term.match_fields);
        add_new(sel->terms[0].match_expressions, term.match_expressions);
      }
    }
    if (term.match_fields.empty() && term.match_expressions.empty()) return std::nullopt;
    return merged;
  }

  // The allocation's devices.config as upstream builds it: each allocated request's class
  // configs (a class's configs once, listing every request that uses the class), then the
  // claim's configs: one without requests once, one naming requests once per request (or
  // chosen subrequest) of the claim it names.
  std::vector<AllocationConfig> configs(int claim) const {
    std::vector<AllocationConfig> out;
    const ResourceClaim& rc = in_.claims[static_cast<std::size_t>(claim)];
    std::map<std::string, std::pair<std::size_t, std::size_t>> class_range;
    for (std::size_t ri = 0; ri < rc.requests.size(); ++ri) {
      const int r = static_cast<int>(ri);
      const RequestData* d = &data_.at(ReqKey{claim, r, 0});
      if (d->parent != nullptr) d = &data_.at(ReqKey{claim, r, d->selected_sub});
      if (d->device_class == nullptr) continue;
      if (auto it = class_range.find(d->device_class->name); it != class_range.end()) {
        for (std::size_t i = it->second.first; i < it->second.second; ++i)
          out[i].requests.push_back(d->name());
        continue;
      }
      const std::size_t start = out.size();
      for (const DeviceConfig& c : d->device_class->config)
        out.push_back({"FromClass", {d->name()}, c.configuration});
      class_range[d->device_class->name] = {start, out.size()};
    }
    for (const DeviceConfig& c : rc.config) {
      if (c.requests.empty()) {
        out.push_back({"FromClaim", {}, c.configuration});
        continue;
      }
      const auto names = [&](const std::string& n) {
        return std::find(c.requests.begin(), c.requests.end(), n) != c.requests.end();
      };
      for (std::size_t ri = 0; ri < rc.requests.size(); ++ri) {
        const DeviceRequest& req = rc.requests[ri];
        if (names(req.name)) {
          out.push_back({"FromClaim", c.requests, c.configuration});
          continue;
        }
        if (req.first_available.empty()) continue;
        const int sub = data_.at(ReqKey{claim, static_cast<int>(ri), 0}).selected_sub;
        if (names(req.name + "/" + req.first_available[static_cast<std::size_t>(sub)].name))
          out.push_back({"FromClaim", c.requests, c.configuration});
      }
    }
    return out;
  }

  bool allocating_for_claim(const DeviceId& id, int claim) const {
    auto it = allocating_.find(id);
    return it != allocating_.end() && it->second.count(claim) != 0;
  }
  bool in_use(const DeviceId& id) const {
    if (allocated_.count(id) != 0) return true;
    auto it = allocating_.find(id);
    return it != allocating_.end() && !it->second.empty();
  }
  CapacityMap used_capacity(const DeviceId& id) const {
    CapacityMap used;
    if (auto it = allocated_capacity_.find(id); it != allocated_capacity_.end()) used = it->second;
    if (auto it = allocating_capacity_.find(id); it != allocating_capacity_.end()) {
      for (const CapacityMap& m : it->second)
        for (const auto& [k, q] : m)
          used[k] = used.count(k) ? used[k] + q : q;
    }
    used.erase("");
    return used;
  }
  bool capacity_in_use(const DeviceId& id) const {
    auto a = allocated_capacity_.find(id);
    auto b = allocating_capacity_.find(id);
    return a != allocated_capacity_.end() ||
           (b != allocating_capacity_.end() && !b->second.empty());
  }

  bool reserve_counters(const Candidate& c) {
    const auto key = std::make_pair(c.id.driver, c.id.pool);
    Counters& used = consumed_[key];
    const Counters& have = available_[key];
    for (const auto& [set, counters] : c.device->consumes_counters)
      for (const auto& [name, q] : counters)
        used[set][name] = used[set].count(name) ? used[set][name] + q : q;
    for (const auto& [set, counters] : have)
      for (const auto& [name, q] : counters) {
        auto u = used.find(set);
        if (u == used.end()) continue;
        auto v = u->second.find(name);
        if (v != u->second.end() && q < v->second) {
          release_counters(c);
          return false;
        }
      }
    return true;
  }
  void release_counters(const Candidate& c) {
    Counters& used = consumed_[std::make_pair(c.id.driver, c.id.pool)];
    for (const auto& [set, counters] : c.device->consumes_counters)
      for (const auto& [name, q] : counters)
        used[set][name] = used[set][name] - q;
  }

  void rollback(Undo& u, int constraints_added) {
    auto& cs = constraints_[static_cast<std::size_t>(u.claim)];
    for (int i = 0; i < constraints_added; ++i)
      cs[static_cast<std::size_t>(i)].remove(u.base_request, u.sub_request);
    if (u.marked) allocating_[u.id].erase(u.claim);
    if (u.counters) release_counters(*u.candidate);
    if (u.capacity) {
      auto& list = allocating_capacity_[u.id];
      list.pop_back();
      if (list.empty()) allocating_capacity_.erase(u.id);
    }
    results_[static_cast<std::size_t>(u.claim)].resize(u.previous_results);
  }

  // Tentatively allocates one candidate; on success pushes the undo record.
  bool allocate_device(const ReqKey& key, const Candidate& c, bool must) {
    const RequestData& d = data_.at(key);
    const ExactRequest& r = *d.request;
    const bool admin = r.admin_access.value_or(false);
    const bool multi = f_.consumable_capacity && c.device->allow_multiple_allocations;
    if (!multi && admin && allocating_for_claim(c.id, key.claim)) return false;
    if (!admin && !multi && in_use(c.id)) return false;
    if (!f_.partitionable_devices && !c.device->consumes_counters.empty()) return false;
    Undo u;
    u.claim = key.claim;
    u.id = c.id;
    u.candidate = &c;
    u.previous_results = results_[static_cast<std::size_t>(key.claim)].size();
    u.base_request = d.parent != nullptr ? d.parent->name : r.name;
    u.sub_request = d.parent != nullptr ? r.name : "";
    const bool skip_counters = multi && capacity_in_use(c.id);
    if (!skip_counters && !c.device->consumes_counters.empty()) {
      if (!reserve_counters(c)) return false;
      u.counters = true;
    }
    std::string why;
    if (f_.device_taints && detail::taint_blocks(*c.device, r, why)) {
      rollback(u, 0);
      return false;
    }
    auto& cs = constraints_[static_cast<std::size_t>(key.claim)];
    for (std::size_t i = 0; i < cs.size(); ++i) {
      if (!cs[i].add(u.base_request, u.sub_request, *c.device, c.id.driver)) {
        rollback(u, static_cast<int>(i));
        if (must) {
          throw Stop{"claim " + claim_name(key.claim) + ", request " + d.name() +
                         ": cannot add device " + c.id.to_string() +
                         " because a claim constraint would not be satisfied",
                     ""};
        }
        return false;
      }
    }
    const int added = static_cast<int>(cs.size());
    if (!multi) {
      allocating_[c.id].insert(key.claim);
      u.marked = true;
    }
    DeviceResult res{d.name(), c.id, admin, {}};
    if (f_.consumable_capacity) {
      if (!detail::capacity_fits(r, *c.device, used_capacity(c.id), true, why)) {
        rollback(u, added);
        return false;
      }
      if (multi) {
        auto consumed = detail::consumed_capacity(r, *c.device, why);
        if (!consumed) {
          rollback(u, added);
          return false;
        }
        allocating_capacity_[c.id].push_back(*consumed);
        u.capacity = *consumed;
        res.consumed_capacity = *consumed;
      }
    }
    results_[static_cast<std::size_t>(key.claim)].push_back(std::move(res));
    undo_.push_back(std::move(u));
    undo_added_.push_back(added);
    return true;
  }

  void deallocate() {
    Undo u = std::move(undo_.back());
    const int added = undo_added_.back();
    undo_.pop_back();
    undo_added_.pop_back();
    rollback(u, added);
  }

  Step allocate_one(int claim, int request, int sub, int device, bool in_sub, Location start) {
    if (++steps_ > opts_.max_steps) {
      throw Stop{"the search stopped after " + std::to_string(opts_.max_steps) +
                     " steps without an answer (the scheduler would time out as well)",
                 ""};
    }
    if (claim >= static_cast<int>(in_.claims.size())) return Step::kDone;
    const ResourceClaim& rc = in_.claims[static_cast<std::size_t>(claim)];
    if (request >= static_cast<int>(rc.requests.size())) {
      const Step s = allocate_one(claim + 1, 0, 0, 0, false, {});
      return s == Step::kMaxSize ? Step::kFail : s;
    }
    const ReqKey key{claim, request, sub};
    RequestData& d = data_.at(key);
    if (!in_sub && d.parent != nullptr) {
      bool all_exceeded = true;
      for (int s = 0;; ++s) {
        if (data_.find(ReqKey{claim, request, s}) == data_.end()) {
          return all_exceeded ? Step::kMaxSize : Step::kFail;
        }
        const Step r = allocate_one(claim, request, s, 0, true, {});
        if (r == Step::kMaxSize) continue;
        all_exceeded = false;
        if (r == Step::kDone) {
          data_.at(ReqKey{claim, request, 0}).selected_sub = s;
          return Step::kDone;
        }
      }
    }
    if (d.request->all && d.all.empty()) return Step::kFail;
    if (device >= d.num_devices) return allocate_one(claim, request + 1, 0, 0, false, {});
    const std::size_t have = results_[static_cast<std::size_t>(claim)].size();
    if (static_cast<int>(have) + d.num_devices - device > kMaxDevicesPerClaim)
      return Step::kMaxSize;

    if (d.request->all) {
      const Candidate& c = d.all[static_cast<std::size_t>(device)];
      if (!allocate_device(key, c, true)) return Step::kFail;
      const Step s = allocate_one(claim, request, sub, device + 1, in_sub, {});
      if (s != Step::kDone) deallocate();
      return s;
    }
    const bool admin = d.request->admin_access.value_or(false);
    for (std::size_t pi = start.pool; pi < pools_.size(); ++pi) {
      const Pool& p = pools_[pi];
      if (p.invalid) {
        throw Stop{"pool " + p.driver + "/" + p.name + " is invalid: " + p.invalid_reason, ""};
      }
      if (p.incomplete && f_.strict_pools) continue;  // 1.36: being updated, not used
      for (std::size_t si = (pi == start.pool ? start.slice : 0); si < p.slices.size(); ++si) {
        const ResourceSlice* s = p.slices[si];
        const std::size_t first = (pi == start.pool && si == start.slice) ? start.device : 0;
        for (std::size_t di = first; di < s->devices.size(); ++di) {
          const Device& dev = s->devices[di];
          Candidate c{&p, s, &dev, {p.driver, p.name, dev.name}};
          const bool multi = f_.consumable_capacity && dev.allow_multiple_allocations;
          if (admin && !multi && allocating_for_claim(c.id, claim)) continue;
          if (!admin && !multi && in_use(c.id)) continue;
          if (!selectable(key, d, c)) continue;
          if (f_.consumable_capacity) {
            std::string why;
            if (!detail::capacity_fits(*d.request, dev, used_capacity(c.id), true, why)) continue;
          }
          candidates_.push_back(c);
          const Candidate& held = candidates_.back();
          if (!allocate_device(key, held, false)) {
            candidates_.pop_back();
            continue;
          }
          const Step r = allocate_one(claim, request, sub, device + 1, in_sub, {pi, si, di + 1});
          if (r == Step::kDone) return r;
          deallocate();
          candidates_.pop_back();
          if (r == Step::kMaxSize) return r;
        }
      }
    }
    return Step::kFail;
  }

  const Inputs& in_;
  const AllocateOptions& opts_;
  Features f_;
  SelectorEvaluator selectors_;
  std::vector<Pool> pools_;
  std::set<DeviceId> allocated_;
  std::map<DeviceId, CapacityMap> allocated_capacity_;
  std::map<DeviceId, std::set<int>> allocating_;
  std::map<DeviceId, std::vector<CapacityMap>> allocating_capacity_;
  std::map<std::pair<std::string, std::string>, Counters> available_;
  std::map<std::pair<std::string, std::string>, Counters> consumed_;
  std::map<ReqKey, RequestData> data_;
  std::map<std::pair<ReqKey, DeviceId>, bool> match_cache_;
  std::vector<std::vector<ConstraintState>> constraints_;
  std::vector<std::vector<DeviceResult>> results_;
  std::vector<Undo> undo_;
  std::vector<int> undo_added_;
  std::deque<Candidate> candidates_;  // stable addresses for the undo records
  std::uint64_t steps_ = 0;
};

}  // namespace

AllocateOutcome allocate(const Inputs& inputs, const AllocateOptions& options) {
  return Search(inputs, options).run();
}

}  // namespace nodetopo::fit
