// Builds the explanation: the allocator's outcome plus, per request, the candidate funnel in
// the allocator's own order of checks, and per constraint the candidates grouped by value.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/fit/explain.hpp>
#include <nodetopo/fit/node_selector.hpp>
#include <nodetopo/fit/selector.hpp>

#include "../alloc/checks.hpp"

namespace nodetopo::fit {

namespace {

constexpr std::size_t kExamples = 4;

struct Cand {
  const Pool* pool;
  const ResourceSlice* slice;
  const Device* device;
  DeviceId id;
};

std::vector<std::string> names(const std::vector<Cand>& c) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < c.size() && i < kExamples; ++i)
    out.push_back(c[i].id.device);
  return out;
}

struct Context {
  const Inputs& in;
  const AllocateOptions& opts;
  std::vector<Pool> pools;
  SelectorEvaluator selectors;
  std::set<DeviceId> allocated;
  std::map<DeviceId, detail::CapacityMap> used_capacity;
  std::map<std::pair<std::string, std::string>, detail::Counters> counters;
  std::string first_error_hint;
};

// Applies one filter step; `why` explains a drop ("" keeps the device).
template <class Keep>
void step(RequestReport& rep, std::vector<Cand>& cands, const std::string& label, Keep keep) {
  FunnelStep s;
  s.step = label;
  std::vector<Cand> next;
  for (const Cand& c : cands) {
    std::string why = keep(c);
    if (why.empty()) {
      next.push_back(c);
    } else if (s.dropped.size() < 2) {
      s.dropped.push_back(c.id.device + ": " + why);
    }
  }
  cands = std::move(next);
  s.count = cands.size();
  s.examples = names(cands);
  rep.funnel.push_back(std::move(s));
}

std::vector<Cand> funnel(Context& ctx, const ExactRequest& r, const std::string& name,
                         RequestReport& rep) {
  const Features& f = ctx.opts.features;
  rep.name = name;
  rep.device_class = r.device_class;
  std::vector<Cand> cands;
  for (const Pool& p : ctx.pools)
    for (const ResourceSlice* s : p.slices)
      for (const Device& d : s->devices)
        cands.push_back({&p, s, &d, {p.driver, p.name, d.name}});
  FunnelStep all;
  all.step = "devices on the node";
  all.count = cands.size();
  all.examples = names(cands);
  rep.funnel.push_back(all);
  const DeviceClass* cls = nullptr;
  for (const DeviceClass& c : ctx.in.classes)
    if (c.name == r.device_class) cls = &c;
  const auto selector_step = [&](const std::vector<std::string>& exprs, const std::string& label) {
    step(rep, cands, label, [&](const Cand& c) -> std::string {
      if (!f.binding_conditions && c.device->has_binding_conditions)
        return "has bindingConditions (feature off)";
      for (std::size_t i = 0; i < exprs.size(); ++i) {
        const SelectorOutcome o = ctx.selectors.evaluate(exprs[i], *c.device, c.id.driver);
        if (!o.error.empty()) {
          if (ctx.first_error_hint.empty())
            ctx.first_error_hint = suggest_has_rewrite(exprs[i], o.error);
          return "selector #" + std::to_string(i) + " error: " + o.error;
        }
        if (!o.matches) return "selector #" + std::to_string(i) + " is false";
      }
      return "";
    });
  };
  if (cls == nullptr) {
    step(rep, cands, "class " + r.device_class,
         [](const Cand&) { return std::string("class not found"); });
    return cands;
  }
  selector_step(cls->selectors, "class " + cls->name + " selectors");
  if (!r.selectors.empty()) selector_step(r.selectors, "request selectors");
  if (std::any_of(cands.begin(), cands.end(),
                  [](const Cand& c) { return c.slice->per_device_node_selection; })) {
    step(rep, cands, "device available on the node", [&](const Cand& c) -> std::string {
      if (!c.slice->per_device_node_selection) return "";
      const NodeSelection& sel = c.device->node_selection;
      const std::string node = ctx.opts.node_object ? ctx.opts.node_object->name : ctx.opts.node;
      if (!sel.node_name.empty())
        return sel.node_name == node ? "" : "device is on node " + sel.node_name;
      if (sel.all_nodes) return "";
      if (!sel.node_selector) return "device names no node";
      if (!ctx.opts.node_object) return "";  // assumed matching, said in the notes
      auto m = node_selector_matches(*sel.node_selector, *ctx.opts.node_object);
      if (!m) return m.error().describe();
      return m.value() ? "" : "node selector " + describe(*sel.node_selector) + " does not match";
    });
  }
  const std::size_t selectable = cands.size();
  if (!f.consumable_capacity && !r.capacity_requests.empty()) {
    rep.warnings.push_back(
        "capacity.requests ignored: DRAConsumableCapacity is off in this release (on from 1.36, "
        "or --feature-gates DRAConsumableCapacity=true); a whole device is allocated");
  }
  if (!f.admin_access && r.admin_access.has_value()) {
    rep.warnings.push_back("adminAccess needs DRAAdminAccess");
  }
  if (f.consumable_capacity && !r.capacity_requests.empty()) {
    step(rep, cands, "capacity", [&](const Cand& c) {
      std::string why;
      auto it = ctx.used_capacity.find(c.id);
      const detail::CapacityMap used =
          it == ctx.used_capacity.end() ? detail::CapacityMap{} : it->second;
      return detail::capacity_fits(r, *c.device, used, true, why) ? std::string() : why;
    });
  }
  if (!r.admin_access.value_or(false)) {
    step(rep, cands, "not already allocated", [&](const Cand& c) {
      const bool multi = f.consumable_capacity && c.device->allow_multiple_allocations;
      if (!multi && ctx.allocated.count(c.id) != 0) return std::string("in use");
      return std::string();
    });
  }
  const bool any_counters = std::any_of(cands.begin(), cands.end(), [](const Cand& c) {
    return !c.device->consumes_counters.empty();
  });
  if (any_counters) {
    step(rep, cands, "shared counters", [&](const Cand& c) -> std::string {
      if (c.device->consumes_counters.empty()) return "";
      if (!f.partitionable_devices)
        return "consumes counters: needs DRAPartitionableDevices (default from 1.36)";
      const auto& have = ctx.counters[{c.id.driver, c.id.pool}];
      for (const auto& [set, cs] : c.device->consumes_counters)
        for (const auto& [n, q] : cs) {
          auto s = have.find(set);
          if (s == have.end() || s->second.count(n) == 0) continue;
          if (s->second.at(n) < q)
            return "counter " + set + "/" + n + ": needs " + q.to_string() + ", " +
                   s->second.at(n).to_string() + " left";
        }
      return "";
    });
  }
  const bool any_taints = std::any_of(cands.begin(), cands.end(),
                                      [](const Cand& c) { return !c.device->taints.empty(); });
  if (f.device_taints && any_taints) {
    step(rep, cands, "taints tolerated", [&](const Cand& c) {
      std::string which;
      return detail::taint_blocks(*c.device, r, which) ? "taint " + which + " not tolerated"
                                                       : std::string();
    });
  }
  const std::size_t needed = r.all ? selectable : static_cast<std::size_t>(r.count);
  rep.needed = r.all ? "all (" + std::to_string(selectable) + ")" : std::to_string(r.count);
  if (r.all && selectable == 0) {
    rep.note = "asks for all matching devices, but none match";
  } else if (cands.size() < needed) {
    const FunnelStep* stop = nullptr;
    for (const FunnelStep& s : rep.funnel)
      if (s.count < needed) {
        stop = &s;
        break;
      }
    rep.note = "needs " + std::to_string(needed) + ", " + std::to_string(cands.size()) +
               " left; the funnel drops below " + std::to_string(needed) + " at \"" +
               (stop != nullptr ? stop->step : std::string("?")) + "\"";
  }
  return cands;
}

// Whether some value of `attribute` is held by enough candidates of every request.
bool attribute_has_enough_group(
    const std::string& attribute, const std::vector<std::string>& requests,
    const std::map<std::string, std::pair<std::vector<Cand>, std::size_t>>& final_cands) {
  std::map<std::string, std::map<std::string, std::size_t>> per_value;
  for (const std::string& rname : requests) {
    const std::string base = rname.substr(0, rname.find('/'));
    auto it = final_cands.find(base);
    if (it == final_cands.end()) continue;
    for (const Cand& c : it->second.first) {
      const AttributeValue* a = detail::lookup_attribute(*c.device, c.id.driver, attribute);
      if (a != nullptr) ++per_value[a->to_string()][base];
    }
  }
  for (const auto& [value, counts] : per_value) {
    bool ok = true;
    for (const std::string& rname : requests) {
      const std::string base = rname.substr(0, rname.find('/'));
      auto it = final_cands.find(base);
      if (it == final_cands.end()) continue;
      auto n = counts.find(base);
      ok = ok && n != counts.end() && n->second >= it->second.second;
    }
    if (ok) return true;
  }
  return false;
}

}  // namespace

Explanation explain(const Inputs& inputs, const AllocateOptions& options,
                    const std::string& version) {
  Explanation e;
  e.node = options.node;
  e.version = version;
  e.outcome = allocate(inputs, options);
  PoolGathering gathered =
      gather_pools(inputs.slices, options.node,
                   options.node_object ? &*options.node_object : nullptr, options.features);
  const auto some = [](const std::vector<std::string>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size() && i < kExamples; ++i)
      out += (i ? ", " : "") + v[i];
    if (v.size() > kExamples) out += ", ... (" + std::to_string(v.size()) + " in all)";
    return out;
  };
  if (!gathered.assumed.empty()) {
    e.notes.push_back(
        "node selectors assumed to match (no Node object; --node FILE evaluates "
        "them): " +
        some(gathered.assumed));
  }
  if (!gathered.excluded.empty())
    e.notes.push_back("slices not available on this node: " + some(gathered.excluded));
  const std::size_t excluded = gathered.excluded.size();
  Context ctx{
      inputs, options, std::move(gathered.pools), SelectorEvaluator(options.features), {}, {},
      {},     {}};
  for (const AllocatedDevice& a : inputs.allocated) {
    if (!a.admin_access) ctx.allocated.insert({a.driver, a.pool, a.device});
    auto& used = ctx.used_capacity[{a.driver, a.pool, a.device}];
    for (const auto& [k, q] : a.consumed_capacity)
      used[k] = used.count(k) ? used[k] + q : q;
  }
  for (const Pool& p : ctx.pools)
    ctx.counters[{p.driver, p.name}] = detail::available_counters(p, inputs.allocated);

  for (std::size_t ci = 0; ci < inputs.claims.size(); ++ci) {
    const ResourceClaim& claim = inputs.claims[ci];
    ClaimReport cr;
    cr.name = claim.name;
    if (e.outcome.status == AllocateOutcome::Status::kFits) {
      cr.allocation = e.outcome.claims[ci].devices;
      cr.config = e.outcome.claims[ci].config;
      cr.node_selector = e.outcome.claims[ci].node_selector;
    }
    std::map<std::string, std::pair<std::vector<Cand>, std::size_t>>
        final_cands;  // request -> (cands, needed)
    for (const DeviceRequest& r : claim.requests) {
      if (r.exactly) {
        RequestReport rep;
        auto c = funnel(ctx, *r.exactly, r.name, rep);
        final_cands[r.name] = {
            c, r.exactly->all ? c.size() : static_cast<std::size_t>(r.exactly->count)};
        cr.requests.push_back(std::move(rep));
        continue;
      }
      std::string chosen;
      for (const DeviceResult& d : cr.allocation)
        if (d.request.rfind(r.name + "/", 0) == 0) chosen = d.request;
      bool first = true;
      for (const ExactRequest& sub : r.first_available) {
        RequestReport rep;
        auto c = funnel(ctx, sub, r.name + "/" + sub.name, rep);
        rep.chosen = rep.name == chosen;
        if ((chosen.empty() && first) || rep.chosen) {
          final_cands[r.name] = {c, sub.all ? c.size() : static_cast<std::size_t>(sub.count)};
        }
        first = false;
        cr.requests.push_back(std::move(rep));
      }
    }
    for (const DeviceConstraint& k : claim.constraints) {
      ConstraintReport rep;
      const bool distinct = !k.distinct_attribute.empty();
      rep.kind = distinct ? "distinctAttribute" : "matchAttribute";
      rep.attribute = distinct ? k.distinct_attribute : k.match_attribute;
      rep.requests = k.requests;
      if (rep.requests.empty())
        for (const DeviceRequest& r : claim.requests)
          rep.requests.push_back(r.name);
      std::map<std::string, ConstraintGroup> groups;
      std::map<std::string, std::map<std::string, std::size_t>>
          per_request;  // value -> request -> n
      std::size_t total_needed = 0;
      for (const std::string& rname : rep.requests) {
        const std::string base = rname.substr(0, rname.find('/'));
        auto it = final_cands.find(base);
        if (it == final_cands.end()) continue;
        total_needed += it->second.second;
        for (const Cand& c : it->second.first) {
          const AttributeValue* a = detail::lookup_attribute(*c.device, c.id.driver, rep.attribute);
          if (a == nullptr) {
            if (rep.missing.size() < kExamples) rep.missing.push_back(base + ": " + c.id.device);
            continue;
          }
          auto& g = groups[a->to_string()];
          g.value = a->to_string();
          g.devices.push_back(base + ": " + c.id.device);
          ++per_request[g.value][base];
        }
      }
      std::string needs;
      for (const std::string& rname : rep.requests) {
        const std::string base = rname.substr(0, rname.find('/'));
        if (auto it = final_cands.find(base); it != final_cands.end()) {
          needs += (needs.empty() ? "" : " + ") + base + " x" + std::to_string(it->second.second);
        }
      }
      for (auto& [value, g] : groups) {
        g.enough = true;
        for (const std::string& rname : rep.requests) {
          const std::string base = rname.substr(0, rname.find('/'));
          auto it = final_cands.find(base);
          if (it == final_cands.end()) continue;
          const std::size_t have = per_request[value][base];
          if (have < it->second.second) g.enough = false;
          g.covered += have >= it->second.second ? 1 : 0;
          g.counts += (g.counts.empty() ? "" : ", ") + base + " " + std::to_string(have);
        }
        rep.groups.push_back(g);
      }
      // Most useful first: groups meeting more requests, then bigger groups.
      std::stable_sort(rep.groups.begin(), rep.groups.end(),
                       [](const ConstraintGroup& a, const ConstraintGroup& b) {
                         if (a.covered != b.covered) return a.covered > b.covered;
                         return a.devices.size() > b.devices.size();
                       });
      const bool any_enough = std::any_of(rep.groups.begin(), rep.groups.end(),
                                          [](const ConstraintGroup& g) { return g.enough; });
      if (!distinct && !any_enough) {
        // What would work instead: other attributes all candidates share enough of.
        std::set<std::string> names;
        for (const std::string& rname : rep.requests) {
          auto it = final_cands.find(rname.substr(0, rname.find('/')));
          if (it == final_cands.end()) continue;
          for (const Cand& c : it->second.first)
            for (const auto& [n, v] : c.device->attributes)
              names.insert(n.find('/') == std::string::npos ? c.id.driver + "/" + n : n);
        }
        // Only locality attributes are sensible alternatives (pcieGen may be shared too, but
        // grouping by it says nothing about placement).
        static const char* const kLocality[] = {"/pcieSwitch", "/pcieRoot", "/numaNode",
                                                "/nvlinkDomain", "/xgmiDomain"};
        for (const std::string& n : names) {
          if (n == rep.attribute) continue;
          const bool locality =
              std::any_of(std::begin(kLocality), std::end(kLocality), [&](const char* suffix) {
                const std::string_view sv(suffix);
                return n.size() > sv.size() && n.compare(n.size() - sv.size(), sv.size(), sv) == 0;
              });
          if (!locality) continue;
          if (attribute_has_enough_group(n, rep.requests, final_cands))
            rep.alternatives.push_back(n);
        }
      }
      if (distinct) {
        rep.verdict = std::to_string(rep.groups.size()) +
                      " distinct values among the candidates, " + std::to_string(total_needed) +
                      " devices needed";
      } else {
        const bool any = std::any_of(rep.groups.begin(), rep.groups.end(),
                                     [](const ConstraintGroup& g) { return g.enough; });
        rep.verdict =
            (any ? "a value with enough candidates exists" : "no value has enough candidates") +
            std::string(" (one value must hold ") + needs + ")";
        if (!rep.groups.empty()) {
          rep.verdict +=
              "; best group " + rep.groups.front().value + ": " + rep.groups.front().counts;
        }
      }
      cr.constraints.push_back(std::move(rep));
    }
    e.claims.push_back(std::move(cr));
  }

  switch (e.outcome.status) {
    case AllocateOutcome::Status::kFits:
      e.summary = "fits";
      break;
    case AllocateOutcome::Status::kError:
      e.summary = "error: " + e.outcome.error;
      if (!e.outcome.error_expression.empty())
        e.error_hint = suggest_has_rewrite(e.outcome.error_expression, e.outcome.error);
      break;
    case AllocateOutcome::Status::kUnschedulable: {
      e.summary = "does not fit";
      for (const ClaimReport& c : e.claims) {
        // A request that cannot be met alone (for firstAvailable: when no subrequest can).
        std::map<std::string, bool> satisfiable;
        for (const RequestReport& r : c.requests) {
          const std::string base = r.name.substr(0, r.name.find('/'));
          satisfiable[base] = satisfiable[base] || r.note.empty();
        }
        for (const RequestReport& r : c.requests) {
          const std::string base = r.name.substr(0, r.name.find('/'));
          if (!satisfiable[base] && !r.note.empty()) {
            e.summary += ": claim " + c.name + ", request " + r.name + " " + r.note;
            if (excluded > 0 && r.note.find("\"devices on the node\"") != std::string::npos) {
              e.summary += " (" + std::to_string(excluded) + " slice" + (excluded > 1 ? "s" : "") +
                           " not available on this node, see the note)";
            }
            return e;
          }
        }
        for (const ConstraintReport& k : c.constraints) {
          const bool any = std::any_of(k.groups.begin(), k.groups.end(),
                                       [](const ConstraintGroup& g) { return g.enough; });
          if (k.kind == "matchAttribute" && !any) {
            e.summary += ": claim " + c.name + ", constraint matchAttribute " + k.attribute + ": " +
                         k.verdict;
            if (!k.alternatives.empty()) {
              std::string alts;
              for (const std::string& a : k.alternatives)
                alts += (alts.empty() ? "" : ", ") + a;
              e.summary += "; these attributes would: " + alts;
            }
            return e;
          }
        }
      }
      e.summary +=
          ": every request has candidates on its own, but no combination satisfies all requests, "
          "constraints and claims together (devices are contended or constraints conflict)";
      break;
    }
  }
  return e;
}

}  // namespace nodetopo::fit
