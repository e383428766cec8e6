// ResourceSlices of one node, reconciled by the rules of the upstream slice controller
// (k8s.io/dynamic-resource-allocation/resourceslice): pool = node name, the pool's generation is
// the highest one found, slices of older generations are obsolete; an existing slice "matches" a
// desired one when it holds the same device names (or when there is exactly one of each); a
// generation is bumped unless the change fits in at most one update and no create. Obsolete
// slices are deleted with UID/resourceVersion preconditions, matched ones updated in place, the
// rest created with generateName "<node>-<driver>-" and an ownerReference to the Node.
#include <algorithm>
#include <set>

#include "../log.hpp"
#include "sinks.hpp"

namespace nodetopo::kube {

namespace {

std::string meta_str(const Json& obj, const char* key) {
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) return {};
  const Json& m = obj["metadata"];
  return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : std::string();
}

const Json& spec_field(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.contains("spec") || !obj["spec"].is_object()) return kNull;
  const Json& s = obj["spec"];
  return s.contains(key) ? s[key] : kNull;
}

std::int64_t pool_generation(const Json& obj) {
  const Json& pool = spec_field(obj, "pool");
  if (!pool.is_object() || !pool.contains("generation") || !pool["generation"].is_number_integer())
    return 0;
  return pool["generation"].get<std::int64_t>();
}

std::string pool_name(const Json& obj) {
  const Json& pool = spec_field(obj, "pool");
  return pool.is_object() && pool.contains("name") && pool["name"].is_string()
             ? pool["name"].get<std::string>()
             : std::string();
}

// Device names and counter-set names: the identity of a slice's content for matching.
std::multiset<std::string> identity(const Json& obj) {
  std::multiset<std::string> ids;
  for (const char* key : {"devices", "sharedCounters"}) {
    const Json& list = spec_field(obj, key);
    if (!list.is_array()) continue;
    for (const Json& d : list) {
      if (d.is_object() && d.contains("name") && d["name"].is_string()) {
        ids.insert(std::string(key) + "/" + d["name"].get<std::string>());
      }
    }
  }
  return ids;
}

// An absent list and an empty one are the same to the API server.
Json list_or_empty(const Json& obj, const char* key) {
  const Json& v = spec_field(obj, key);
  return v.is_array() ? v : Json::array();
}

struct Desired {
  Json devices;
  Json counters;
};

}  // namespace

SliceReconciler::SliceReconciler(ApiClient& client, std::string driver,
                                 std::chrono::seconds watch_timeout)
    : client_(client), driver_(std::move(driver)), watch_timeout_(watch_timeout) {}

std::string SliceReconciler::field_selector(const std::string& node) const {
  return "spec.nodeName=" + node + ",spec.driver=" + driver_;
}

SyncOutcome SliceReconciler::sync(const std::string& node, const std::vector<Json>& desired_in) {
  node_ = node;
  syncing_ = true;
  struct Replay {
    SliceReconciler& self;
    ~Replay() {
      self.syncing_ = false;
      std::vector<Json> events;
      events.swap(self.pending_);
      for (const Json& e : events)
        self.handle_event(e);
    }
  } replay{*this};
  SyncOutcome out;
  const ApiResponse list =
      client_.call({"GET", kSlicesPath, encode_query({{"fieldSelector", field_selector(node)}}), "",
                    "", "list", "resourceslices"});
  if (!list.ok()) {
    SyncOutcome f = failure(list, "list", "resourceslices", "", "");
    if (list.status == 404) {
      f.kind = SyncOutcome::Kind::kParked;
      f.message = "list resourceslices (cluster-scoped): resource.k8s.io/v1 is not served by " +
                  client_.config().server + " (Kubernetes 1.34 or later with DRA enabled)";
    }
    return f;
  }
  const Json body = list.json();
  if (!body.is_object() || !body.contains("items") || !body["items"].is_array()) {
    return {SyncOutcome::Kind::kFailed, "list resourceslices: the answer is not a list", 0};
  }
  resource_version_ = meta_str(body, "resourceVersion");
  ours_.clear();
  std::vector<Json> existing;
  for (const Json& item : body["items"]) {
    // The field selector already holds; a server that ignored it must not make us touch
    // another node's or driver's slices.
    if (spec_field(item, "nodeName") != node || spec_field(item, "driver") != driver_) continue;
    ours_[meta_str(item, "name")] = meta_str(item, "resourceVersion");
    existing.push_back(item);
  }

  std::vector<Desired> desired;
  for (const Json& d : desired_in) {
    desired.push_back({list_or_empty(d, "devices"), list_or_empty(d, "sharedCounters")});
  }

  // Highest generation of our pool; everything older, and anything in another pool of ours, is
  // obsolete.
  std::int64_t generation = 0;
  for (const Json& s : existing) {
    if (pool_name(s) == node) generation = std::max(generation, pool_generation(s));
  }
  std::vector<const Json*> obsolete;
  std::vector<const Json*> current;
  for (const Json& s : existing) {
    if (pool_name(s) != node || pool_generation(s) < generation) {
      obsolete.push_back(&s);
    } else {
      current.push_back(&s);
    }
  }
  // Match current slices to desired ones.
  std::map<std::size_t, const Json*> match;
  if (current.size() == 1 && desired.size() == 1) {
    match[0] = current[0];
  } else {
    for (const Json* c : current) {
      const auto ids = identity(*c);
      bool matched = false;
      for (std::size_t i = 0; i < desired.size(); ++i) {
        if (match.count(i) != 0) continue;
        Json probe = Json{
            {"spec", {{"devices", desired[i].devices}, {"sharedCounters", desired[i].counters}}}};
        if (identity(probe) == ids) {
          match[i] = c;
          matched = true;
          break;
        }
      }
      if (!matched) obsolete.push_back(c);
    }
  }
  const auto count = static_cast<std::int64_t>(desired.size());
  auto pool_json = [&](std::int64_t gen) {
    return Json{{"generation", gen}, {"name", node}, {"resourceSliceCount", count}};
  };
  std::set<std::size_t> changed;
  for (const auto& [i, c] : match) {
    if (spec_field(*c, "pool") != pool_json(generation) ||
        list_or_empty(*c, "devices") != desired[i].devices ||
        list_or_empty(*c, "sharedCounters") != desired[i].counters) {
      changed.insert(i);
    }
  }
  const std::size_t creates = desired.size() - match.size();
  bool bumped = false;
  if (generation == 0) {
    generation = 1;  // a new pool starts at 1
    bumped = true;
  } else if (creates == 0 && changed.size() <= 1) {
    // At most one update: consumers never see a mixed pool, keep the generation.
  } else {
    ++generation;
    bumped = true;
  }
  if (obsolete.empty() && changed.empty() && creates == 0) return out;  // in sync: no write

  // 1. Delete obsolete slices, only if they are still what we saw.
  for (const Json* s : obsolete) {
    const std::string name = meta_str(*s, "name");
    const Json options = {
        {"apiVersion", "v1"},
        {"kind", "DeleteOptions"},
        {"preconditions",
         {{"uid", meta_str(*s, "uid")}, {"resourceVersion", meta_str(*s, "resourceVersion")}}}};
    const ApiResponse r =
        client_.call({"DELETE", std::string(kSlicesPath) + "/" + percent_encode(name), "",
                      options.dump(), "application/json", "delete", "resourceslices"});
    ours_.erase(name);
    if (r.ok() || r.status == 404) {
      if (r.ok()) ++out.writes;
      continue;
    }
    SyncOutcome f = failure(r, "delete", "resourceslices", "", name);
    f.writes = out.writes;
    return f;
  }
  // 2. Update matched slices in place (all of them when the generation moved).
  for (const auto& [i, c] : match) {
    if (changed.count(i) == 0 && !bumped) continue;
    Json updated = *c;
    updated["spec"]["pool"] = pool_json(generation);
    if (desired[i].devices.empty()) {
      updated["spec"].erase("devices");
    } else {
      updated["spec"]["devices"] = desired[i].devices;
    }
    if (desired[i].counters.empty()) {
      updated["spec"].erase("sharedCounters");
    } else {
      updated["spec"]["sharedCounters"] = desired[i].counters;
    }
    const std::string name = meta_str(*c, "name");
    const ApiResponse r =
        client_.call({"PUT", std::string(kSlicesPath) + "/" + percent_encode(name), "",
                      updated.dump(), "application/json", "update", "resourceslices"});
    if (!r.ok()) {
      SyncOutcome f = failure(r, "update", "resourceslices", "", name);
      if (r.status == 404) f.kind = SyncOutcome::Kind::kConflict;  // deleted meanwhile: relist
      f.writes = out.writes;
      return f;
    }
    ++out.writes;
    ours_[name] = meta_str(r.json(), "resourceVersion");
  }
  // 3. Create the rest.
  if (creates > 0) {
    const NodeRef owner = read_node_uid(client_, node);
    if (owner.error) {
      SyncOutcome f = *owner.error;
      f.writes = out.writes;
      return f;
    }
    for (std::size_t i = 0; i < desired.size(); ++i) {
      if (match.count(i) != 0) continue;
      Json slice = {
          {"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata",
           {{"generateName", node + "-" + driver_ + "-"},
            {"ownerReferences", Json::array({Json{{"apiVersion", "v1"},
                                                  {"kind", "Node"},
                                                  {"name", node},
                                                  {"uid", owner.uid},
                                                  {"controller", true}}})}}},
          {"spec", {{"driver", driver_}, {"nodeName", node}, {"pool", pool_json(generation)}}}};
      if (!desired[i].devices.empty()) slice["spec"]["devices"] = desired[i].devices;
      if (!desired[i].counters.empty()) slice["spec"]["sharedCounters"] = desired[i].counters;
      const ApiResponse r = client_.call(
          {"POST", kSlicesPath, "", slice.dump(), "application/json", "create", "resourceslices"});
      if (!r.ok()) {
        SyncOutcome f = failure(r, "create", "resourceslices", "",
                                "(generateName " + node + "-" + driver_ + "-, slice " +
                                    std::to_string(i + 1) + " of " + std::to_string(count) + ")");
        // A create whose answer was lost may have been stored: list before creating again.
        if (r.status == 0 || r.status >= 500) f.kind = SyncOutcome::Kind::kConflict;
        f.writes = out.writes;
        return f;
      }
      ++out.writes;
      const Json created = r.json();
      ours_[meta_str(created, "name")] = meta_str(created, "resourceVersion");
    }
  }
  return out;
}

void SliceReconciler::ensure_watch(const std::string& node) {
  node_ = node;
  if (watch_ != 0 && client_.watch_open(watch_)) return;
  watch_ = 0;
  if (resource_version_.empty()) {
    relist_ = true;
    return;
  }
  if (Clock::now() < watch_retry_at_) return;
  ++watch_restarts_;
  const std::string timeout = std::to_string(watch_timeout_.count());
  ApiRequest req{"GET",
                 kSlicesPath,
                 encode_query({{"fieldSelector", field_selector(node)},
                               {"watch", "true"},
                               {"allowWatchBookmarks", "true"},
                               {"resourceVersion", resource_version_},
                               {"timeoutSeconds", timeout}}),
                 "",
                 "",
                 "watch",
                 "resourceslices"};
  watch_ = client_.open_watch(
      req, WatchHandlers{[this](const Json& e) { on_event(e); },
                         [this](long status, const std::string& error) { on_end(status, error); }});
}

void SliceReconciler::close_watch() {
  if (watch_ != 0) client_.close_watch(watch_);
  watch_ = 0;
}

void SliceReconciler::on_event(const Json& event) {
  if (syncing_) {
    pending_.push_back(event);
    return;
  }
  handle_event(event);
}

void SliceReconciler::handle_event(const Json& event) {
  if (!event.is_object()) return;
  const std::string type = str_field(event, "type");
  const Json& obj = field(event, "object");
  if (type == "ERROR") {
    const Json& code_field = field(obj, "code");
    const long code = code_field.is_number_integer() ? code_field.get<long>() : 0;
    // 410 Gone: our version fell out of the server's window; anything else: start over too,
    // since events may have been lost.
    kube_log()->info("resourceslices watch: {} ({}); listing again", code,
                     str_field(obj, "message"));
    relist_ = true;
    ++relists_;
    resource_version_.clear();
    close_watch();
    return;
  }
  const std::string rv = meta_str(obj, "resourceVersion");
  if (!rv.empty()) resource_version_ = rv;
  if (type == "BOOKMARK") return;
  const std::string name = meta_str(obj, "name");
  if (type == "DELETED") {
    if (ours_.erase(name) != 0) {
      kube_log()->info("ResourceSlice {} of node {} was deleted by someone else; restoring", name,
                       node_);
      foreign_change_ = true;
    }
    return;
  }
  if (type == "ADDED" || type == "MODIFIED") {
    const auto it = ours_.find(name);
    if (it != ours_.end() && it->second == rv) return;  // our own write
    kube_log()->debug("ResourceSlice {} of node {} changed ({}, version {})", name, node_, type,
                      rv);
    foreign_change_ = true;
  }
}

void SliceReconciler::on_end(long status, const std::string& error) {
  watch_ = 0;
  if (status == 200) {
    watch_failures_ = 0;  // the server's timeoutSeconds: resume from the last version
    return;
  }
  if (status == 410) {
    relist_ = true;
    ++relists_;
    resource_version_.clear();
    return;
  }
  // A broken stream: wait a little (doubling, at most 30 s) before watching again, and list
  // then, since the server may have lost data (a restart) or events were missed.
  ++watch_failures_;
  const auto delay = Millis(std::min<std::int64_t>(30'000, 250LL << std::min(watch_failures_, 7)));
  watch_retry_at_ = Clock::now() + delay;
  kube_log()->info("resourceslices watch ended: {}; listing again in {} ms",
                   status == 0 ? error : "HTTP " + std::to_string(status) + ": " + error,
                   delay.count());
  relist_ = true;
  ++relists_;
}

}  // namespace nodetopo::kube
