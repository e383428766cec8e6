// Text and JSON renderings of an explanation.
#include <cstdio>
#include <string>

#include <nodetopo/fit/explain.hpp>
#include <nodetopo/fit/node_selector.hpp>

namespace nodetopo::fit {

namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? sep : "") + v[i];
  return out;
}

std::string status_name(AllocateOutcome::Status s) {
  switch (s) {
    case AllocateOutcome::Status::kFits:
      return "fits";
    case AllocateOutcome::Status::kUnschedulable:
      return "unschedulable";
    case AllocateOutcome::Status::kError:
      return "error";
  }
  return "?";
}

nlohmann::ordered_json requirements_json(const std::vector<NodeSelectorRequirement>& list) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const NodeSelectorRequirement& r : list) {
    nlohmann::ordered_json rj{{"key", r.key}, {"operator", r.op}};
    if (!r.values.empty()) rj["values"] = r.values;
    out.push_back(rj);
  }
  return out;
}

// core/v1 NodeSelector in the API's field names.
nlohmann::ordered_json node_selector_json(const NodeSelector& ns) {
  nlohmann::ordered_json terms = nlohmann::ordered_json::array();
  for (const NodeSelectorTerm& t : ns.terms) {
    nlohmann::ordered_json tj = nlohmann::ordered_json::object();
    if (!t.match_expressions.empty())
      tj["matchExpressions"] = requirements_json(t.match_expressions);
    if (!t.match_fields.empty()) tj["matchFields"] = requirements_json(t.match_fields);
    terms.push_back(tj);
  }
  return {{"nodeSelectorTerms", terms}};
}

}  // namespace

std::string render_text(const Explanation& e) {
  std::string out = "node " + e.node + " (Kubernetes " + e.version + " allocator)\n";
  for (const ClaimReport& c : e.claims) {
    out += "\nclaim " + c.name + "\n";
    for (const RequestReport& r : c.requests) {
      out += "  request " + r.name + " (class " + r.device_class + ", needs " + r.needed + ")" +
             (r.chosen ? "  <- chosen" : "") + "\n";
      for (const FunnelStep& s : r.funnel) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "    %-34s %4zu", s.step.c_str(), s.count);
        out += buf;
        if (!s.examples.empty())
          out += "  " + join(s.examples) + (s.count > s.examples.size() ? ", ..." : "");
        out += "\n";
        for (const std::string& d : s.dropped)
          out += "      dropped " + d + "\n";
      }
      for (const std::string& w : r.warnings)
        out += "    ! " + w + "\n";
      if (!r.note.empty()) out += "    => " + r.note + "\n";
    }
    for (const ConstraintReport& k : c.constraints) {
      out += "  constraint " + k.kind + " " + k.attribute + " over [" + join(k.requests) + "]\n";
      for (const ConstraintGroup& g : k.groups) {
        out += "    " + g.value + " (" + g.counts + (g.enough ? "; enough" : "") +
               "): " + join(g.devices) + "\n";
      }
      if (!k.missing.empty()) out += "    without the attribute: " + join(k.missing) + "\n";
      out += "    => " + k.verdict + "\n";
      if (!k.alternatives.empty()) {
        out += "    these attributes would group enough candidates: " + join(k.alternatives) + "\n";
      }
    }
    if (!c.allocation.empty()) {
      out += "  allocation\n";
      for (const DeviceResult& d : c.allocation) {
        out += "    " + d.request + ": " + d.id.to_string() +
               (d.admin_access ? " (admin access)" : "");
        for (const auto& [k, q] : d.consumed_capacity)
          out += " " + k + "=" + q.to_string();
        out += "\n";
      }
      for (const AllocationConfig& k : c.config) {
        // The driver the opaque parameters are for; the parameters themselves are in --format json.
        std::string driver;
        if (auto o = k.configuration.find("opaque"); o != k.configuration.end() && o->is_object()) {
          if (auto d = o->find("driver"); d != o->end() && d->is_string())
            driver = d->get<std::string>();
        }
        out += "    config " + k.source + " for [" +
               (k.requests.empty() ? std::string("all requests") : join(k.requests)) + "]" +
               (driver.empty() ? std::string() : ": opaque parameters for " + driver) + "\n";
      }
      out += "    node selector: " +
             (c.node_selector ? describe(*c.node_selector) : std::string("none (every node)")) +
             "\n";
    }
  }
  if (!e.notes.empty()) out += "\n";
  for (const std::string& n : e.notes)
    out += "note: " + n + "\n";
  out += "\nresult: " + e.summary + "\n";
  if (!e.error_hint.empty())
    out +=
        "hint: rewrite the selector so that it does not fail on devices without the attribute:\n "
        " " +
        e.error_hint + "\n";
  return out;
}

nlohmann::ordered_json render_json(const Explanation& e) {
  nlohmann::ordered_json j;
  j["node"] = e.node;
  j["kubernetesVersion"] = e.version;
  j["status"] = status_name(e.outcome.status);
  j["fits"] = e.outcome.status == AllocateOutcome::Status::kFits;
  j["summary"] = e.summary;
  if (!e.outcome.error.empty()) j["error"] = e.outcome.error;
  if (!e.outcome.error_expression.empty()) j["errorExpression"] = e.outcome.error_expression;
  if (!e.error_hint.empty()) j["hint"] = e.error_hint;
  j["searchSteps"] = e.outcome.steps;
  j["notes"] = e.notes;
  j["claims"] = nlohmann::ordered_json::array();
  for (const ClaimReport& c : e.claims) {
    nlohmann::ordered_json cj;
    cj["name"] = c.name;
    cj["requests"] = nlohmann::ordered_json::array();
    for (const RequestReport& r : c.requests) {
      nlohmann::ordered_json rj;
      rj["name"] = r.name;
      rj["deviceClassName"] = r.device_class;
      rj["needed"] = r.needed;
      if (r.chosen) rj["chosen"] = true;
      rj["funnel"] = nlohmann::ordered_json::array();
      for (const FunnelStep& s : r.funnel)
        rj["funnel"].push_back({{"step", s.step},
                                {"count", s.count},
                                {"examples", s.examples},
                                {"dropped", s.dropped}});
      if (!r.note.empty()) rj["note"] = r.note;
      if (!r.warnings.empty()) rj["warnings"] = r.warnings;
      cj["requests"].push_back(rj);
    }
    cj["constraints"] = nlohmann::ordered_json::array();
    for (const ConstraintReport& k : c.constraints) {
      nlohmann::ordered_json kj;
      kj["kind"] = k.kind;
      kj["attribute"] = k.attribute;
      kj["requests"] = k.requests;
      kj["groups"] = nlohmann::ordered_json::array();
      for (const ConstraintGroup& g : k.groups)
        kj["groups"].push_back({{"value", g.value},
                                {"devices", g.devices},
                                {"candidatesPerRequest", g.counts},
                                {"enough", g.enough}});
      kj["withoutAttribute"] = k.missing;
      kj["verdict"] = k.verdict;
      kj["alternatives"] = k.alternatives;
      cj["constraints"].push_back(kj);
    }
    cj["allocation"] = nlohmann::ordered_json::array();
    for (const DeviceResult& d : c.allocation) {
      nlohmann::ordered_json dj{{"request", d.request},
                                {"driver", d.id.driver},
                                {"pool", d.id.pool},
                                {"device", d.id.device}};
      if (d.admin_access) dj["adminAccess"] = true;
      for (const auto& [k, q] : d.consumed_capacity)
        dj["consumedCapacity"][k] = q.to_string();
      cj["allocation"].push_back(dj);
    }
    if (e.outcome.status == AllocateOutcome::Status::kFits) {
      // The fields of the claim's status.allocation that the allocator sets beyond the devices.
      nlohmann::ordered_json config = nlohmann::ordered_json::array();
      for (const AllocationConfig& k : c.config) {
        nlohmann::ordered_json kj{{"source", k.source}};
        if (!k.requests.empty()) kj["requests"] = k.requests;
        for (const auto& [key, v] : k.configuration.items())
          kj[key] = v;
        config.push_back(kj);
      }
      cj["config"] = config;
      cj["nodeSelector"] =
          c.node_selector ? node_selector_json(*c.node_selector) : nlohmann::ordered_json(nullptr);
    }
    j["claims"].push_back(cj);
  }
  return j;
}

}  // namespace nodetopo::fit
