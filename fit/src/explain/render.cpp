// Text and JSON renderings of an explanation.
#include <cstdio>
#include <string>

#include <nodetopo/fit/explain.hpp>

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
    }
  }
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
    j["claims"].push_back(cj);
  }
  return j;
}

}  // namespace nodetopo::fit
