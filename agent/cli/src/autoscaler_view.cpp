#include "autoscaler_view.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include <nodetopo/exporters/autoscaler_render.hpp>
#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/fit/explain.hpp>

namespace nodetopo::cli {

namespace {

namespace as = exporters::autoscaler;

std::string replace_all(std::string text, std::string_view from, const std::string& to) {
  for (std::size_t pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

std::string scalar(const YAML::Node& n, const char* key) {
  const YAML::Node v = n.IsMap() ? n[key] : YAML::Node();
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

Result<void> add_slices(const YAML::Node& doc, const std::string& where, TemplateView& view) {
  fit::Inputs in;
  if (auto r = fit::load_documents(YAML::Dump(doc), where, fit::DocumentRole::kSlices, in); !r) {
    return r;
  }
  view.slices.insert(view.slices.end(), in.slices.begin(), in.slices.end());
  return {};
}

Result<void> add_capi(const YAML::Node& doc, const std::string& where, const std::string& node,
                      TemplateView& view) {
  std::map<std::string, std::string> annotations;
  const YAML::Node a = doc["metadata"] ? doc["metadata"]["annotations"] : YAML::Node();
  if (a && a.IsMap()) {
    for (const auto& kv : a) {
      if (kv.second.IsScalar())
        annotations[kv.first.as<std::string>()] = kv.second.as<std::string>();
    }
  }
  auto slice = as::capi_view_slice(annotations, node);
  if (!slice) return make_error(ErrorCode::kInvalid, where + ": " + slice.error().message);
  if (!slice->has_value()) {
    view.notes.push_back(
        "the Cluster API annotations name no dra-driver with a gpu-count: Cluster Autoscaler's "
        "template node has no ResourceSlices");
    return {};
  }
  auto parsed = fit::parse_resource_slice(exporters::dra::slice_to_json(**slice).dump(), where);
  if (!parsed) return parsed.error();
  parsed->name = node + "-" + (*slice)->driver;  // the provider's name for it
  view.slices.push_back(std::move(parsed.value()));
  view.notes.push_back(
      "Cluster Autoscaler's Cluster API provider synthesises " +
      std::to_string((*slice)->devices.size()) + " devices gpu-<n> of driver " + (*slice)->driver +
      " with the one attribute type=gpu and no capacity (kubernetes/autoscaler#7804; "
      "resourceSliceCount 1 since #10200, before which no DRA claim scaled from zero)");
  return {};
}

}  // namespace

Result<TemplateView> load_template_view(std::string_view text, const std::string& source,
                                        const std::string& node) {
  std::string substituted = replace_all(std::string(text), as::kNodePlaceholder, node);
  substituted = replace_all(std::move(substituted), as::kPoolPlaceholder, node);
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(substituted);
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::kMalformed, "not YAML or JSON: " + std::string(e.what()), source);
  }
  TemplateView view;
  std::set<std::string> formats;
  try {
    for (std::size_t i = 0; i < docs.size(); ++i) {
      const YAML::Node& doc = docs[i];
      if (doc.IsNull()) continue;
      const std::string where = source + ": document " + std::to_string(i + 1);
      if (!doc.IsMap()) return make_error(ErrorCode::kInvalid, where + ": not an object");
      const std::string kind = scalar(doc, "kind");
      const std::string api = scalar(doc, "apiVersion");
      if (kind == "ResourceSlice" || kind == "List") {
        formats.insert("resourceslices");
        if (auto r = add_slices(doc, where, view); !r) return r.error();
      } else if (kind == "NodeShapeTemplate" && api.starts_with("nodetopo.dev/")) {
        formats.insert("karpenter");
        const YAML::Node slices = doc["spec"] ? doc["spec"]["resourceSlices"] : YAML::Node();
        if (!slices || !slices.IsSequence()) {
          return make_error(ErrorCode::kInvalid,
                            where + ": NodeShapeTemplate without spec.resourceSlices");
        }
        for (std::size_t k = 0; k < slices.size(); ++k) {
          const std::string at = where + " spec.resourceSlices[" + std::to_string(k) + "]";
          if (auto r = add_slices(slices[k], at, view); !r) return r.error();
        }
      } else if ((kind == "MachineDeployment" || kind == "MachineSet") &&
                 api.starts_with("cluster.x-k8s.io/")) {
        formats.insert("capi");
        if (auto r = add_capi(doc, where, node, view); !r) return r.error();
      } else if (kind.empty() && doc["Tags"] && doc["Tags"].IsSequence()) {
        formats.insert("aws-asg-tags");
        view.notes.push_back(
            "AWS ASG tags carry labels, taints and resources but no ResourceSlices: the AWS "
            "provider's template node has none, so no DRA claim scales an ASG from zero");
      } else {
        return make_error(ErrorCode::kInvalid,
                          where + ": unexpected " + (kind.empty() ? "document" : "kind " + kind) +
                              " (expected ResourceSlices, a NodeShapeTemplate, a Cluster API "
                              "MachineDeployment/MachineSet or AWS ASG tags)");
      }
    }
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::kMalformed, e.what(), source);
  }
  if (formats.empty()) return make_error(ErrorCode::kInvalid, "no template in the file", source);
  if (formats.size() > 1) {
    return make_error(ErrorCode::kInvalid,
                      "the file mixes template formats (" + *formats.begin() + ", " +
                          *std::next(formats.begin()) + "): give one template per file",
                      source);
  }
  view.format = *formats.begin();
  return view;
}

Result<TemplateView> read_template_view(const std::string& path, const std::string& node) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot read the template", path);
  std::ostringstream s;
  s << in.rdbuf();
  return load_template_view(s.str(), path, node);
}

namespace {

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Whether a CEL expression reads attribute `key` of the driver's domain: `.key` or `["key"]`
// (its value), or with `presence_too` also `"key" in ...` (whether it exists). Textual on
// purpose: a mention is enough to depend on it.
bool mentions(const std::string& expr, const std::string& key, bool presence_too) {
  for (std::size_t pos = expr.find(key); pos != std::string::npos; pos = expr.find(key, pos + 1)) {
    const char before = pos > 0 ? expr[pos - 1] : ' ';
    const std::size_t end = pos + key.size();
    const char after = end < expr.size() ? expr[end] : ' ';
    if (ident_char(after)) continue;
    if (before == '.') return true;
    if (before != '"' && before != '\'') continue;
    const bool indexed = pos >= 2 && expr[pos - 2] == '[';
    if (indexed || presence_too) return true;
  }
  return false;
}

std::string short_key(const std::string& qualified) {
  const auto slash = qualified.rfind('/');
  return slash == std::string::npos ? qualified : qualified.substr(slash + 1);
}

// The node-unique attribute a claim depends on, or "" when none: in its requests' and their
// classes' selectors (every attribute named; binding ids too, since a value is node-specific)
// and in its constraints (node-unique only: matching on a binding is what it is for).
std::string node_unique_use(const fit::ResourceClaim& claim, const fit::Inputs& in,
                            const ReportInputs& r) {
  std::vector<std::string> selectors;
  const auto add_request = [&](const fit::ExactRequest& e) {
    selectors.insert(selectors.end(), e.selectors.begin(), e.selectors.end());
    for (const fit::DeviceClass& c : in.classes) {
      if (c.name == e.device_class)
        selectors.insert(selectors.end(), c.selectors.begin(), c.selectors.end());
    }
  };
  for (const fit::DeviceRequest& q : claim.requests) {
    if (q.exactly) add_request(*q.exactly);
    for (const fit::ExactRequest& e : q.first_available)
      add_request(e);
  }
  for (const std::string& s : selectors) {
    for (const std::string& key : r.unique_attributes) {
      if (mentions(s, key, true)) return "a selector reads \"" + key + "\" (" + s + ")";
    }
    for (const std::string& key : r.binding_attributes) {
      if (mentions(s, key, false)) {
        return "a selector reads the value of \"" + key + "\", a per-node id (" + s + ")";
      }
    }
  }
  for (const fit::DeviceConstraint& c : claim.constraints) {
    for (const std::string& a : {c.match_attribute, c.distinct_attribute}) {
      if (a.empty()) continue;
      for (const std::string& key : r.unique_attributes) {
        if (short_key(a) == key) return "a constraint uses \"" + a + "\"";
      }
    }
  }
  return {};
}

fit::Explanation run_fit(const fit::ResourceClaim& claim, const fit::Inputs& in,
                         const std::vector<fit::ResourceSlice>& slices, const std::string& k8s) {
  fit::Inputs one;
  one.claims = {claim};
  one.classes = in.classes;
  one.slices = slices;
  fit::AllocateOptions alloc;
  alloc.features =
      fit::Features::for_version(static_cast<fit::K8sVersion>(std::stoi(k8s.substr(2))));
  alloc.node = std::string(kTemplateNodeName);
  return fit::explain(one, alloc, k8s);
}

bool fits(const fit::Explanation& e) {
  return e.outcome.status == fit::AllocateOutcome::Status::kFits;
}

}  // namespace

std::vector<ClaimVerdict> classify_claims(const ReportInputs& r) {
  std::vector<ClaimVerdict> out;
  for (const fit::ResourceClaim& claim : r.claims.claims) {
    ClaimVerdict v;
    v.claim = claim.name;
    const fit::Explanation on_node = run_fit(claim, r.claims, r.full.slices, r.k8s_version);
    const fit::Explanation in_view = run_fit(claim, r.claims, r.view.slices, r.k8s_version);
    const std::string unique = node_unique_use(claim, r.claims, r);
    if (!unique.empty()) {
      v.verdict = "node-unique";
      v.reason = unique +
                 ", which differs on every machine and is not in any template: it can never "
                 "scale a node group from zero";
    } else if (fits(on_node) && fits(in_view)) {
      v.verdict = "scales-from-zero";
      v.reason = "the autoscaler's template node fits it, and so does a node of this shape";
    } else if (fits(on_node)) {
      v.verdict = "not-in-view";
      v.reason =
          "a node of this shape fits it, but the autoscaler's template node does not, so "
          "it will never scale from zero: " +
          in_view.summary;
    } else if (fits(in_view)) {
      v.verdict = "view-only";
      v.reason =
          "the autoscaler's template node fits it, but a real node of this shape does "
          "not: it would add a node the pod cannot use: " +
          on_node.summary;
    } else {
      v.verdict = "no-fit";
      v.reason = "no node of this shape fits it: " + on_node.summary;
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::string render_report_text(const std::vector<ClaimVerdict>& verdicts, std::string_view view) {
  std::string out = "scale from zero (" + std::string(view) + "):\n";
  for (const ClaimVerdict& v : verdicts)
    out += "  " + v.claim + ": " + v.verdict + " — " + v.reason + "\n";
  return out;
}

nlohmann::ordered_json render_report_json(const std::vector<ClaimVerdict>& verdicts,
                                          std::string_view view) {
  nlohmann::ordered_json j;
  j["view"] = std::string(view);
  j["claims"] = nlohmann::ordered_json::array();
  for (const ClaimVerdict& v : verdicts) {
    j["claims"].push_back({{"claim", v.claim}, {"verdict", v.verdict}, {"reason", v.reason}});
  }
  return j;
}

}  // namespace nodetopo::cli
