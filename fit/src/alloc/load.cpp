// Loading Kubernetes documents (YAML or JSON, several per file, `List`s) into the allocator's
// model. YAML is converted to JSON values first so that both formats share one reader.
#include <algorithm>
#include <cctype>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <nodetopo/fit/load.hpp>

namespace nodetopo::fit {

namespace {

using Json = nlohmann::json;

// A thrown load error carrying the field path; caught at the document boundary.
struct LoadError {
  std::string message;
};

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw LoadError{where + ": " + what};
}

bool is_int_literal(const std::string& s) {
  if (s.empty() || s.size() > 19) return false;
  std::size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  return std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i), s.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

Json yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted: always a string
      if (s == "true" || s == "True") return true;
      if (s == "false" || s == "False") return false;
      if (s == "null" || s == "~") return nullptr;
      if (is_int_literal(s)) return std::stoll(s);
      return s;
    }
    case YAML::NodeType::Sequence: {
      Json a = Json::array();
      for (const auto& e : n)
        a.push_back(yaml_to_json(e));
      return a;
    }
    case YAML::NodeType::Map: {
      Json o = Json::object();
      for (const auto& kv : n)
        o[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return o;
    }
  }
  return nullptr;
}

const Json* field(const Json& j, const char* name) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string str(const Json& j, const char* name, const std::string& where, bool required = false) {
  const Json* f = field(j, name);
  if (f == nullptr) {
    if (required) fail(where, std::string("missing field ") + name);
    return "";
  }
  if (f->is_string()) return f->get<std::string>();
  if (f->is_number_integer()) return std::to_string(f->get<std::int64_t>());
  fail(where + "." + name, "expected a string");
}

std::int64_t integer(const Json& j, const char* name, const std::string& where, std::int64_t def) {
  const Json* f = field(j, name);
  if (f == nullptr) return def;
  if (f->is_number_integer()) return f->get<std::int64_t>();
  if (f->is_string() && is_int_literal(f->get<std::string>()))
    return std::stoll(f->get<std::string>());
  fail(where + "." + name, "expected an integer");
}

bool boolean(const Json& j, const char* name, const std::string& where) {
  const Json* f = field(j, name);
  if (f == nullptr) return false;
  if (!f->is_boolean()) fail(where + "." + name, "expected true or false");
  return f->get<bool>();
}

Quantity quantity(const Json& j, const std::string& where) {
  std::string text;
  if (j.is_string()) {
    text = j.get<std::string>();
  } else if (j.is_number_integer()) {
    text = std::to_string(j.get<std::int64_t>());
  } else {
    fail(where, "expected a quantity such as \"80Gi\"");
  }
  auto q = Quantity::parse(text);
  if (!q) fail(where, "\"" + text + "\" is not a Kubernetes quantity");
  return *q;
}

const Json& array_field(const Json& j, const char* name, const std::string& where) {
  static const Json empty = Json::array();
  const Json* f = field(j, name);
  if (f == nullptr) return empty;
  if (!f->is_array()) fail(where + "." + name, "expected a list");
  return *f;
}

const Json& object_field(const Json& j, const char* name, const std::string& where) {
  static const Json empty = Json::object();
  const Json* f = field(j, name);
  if (f == nullptr) return empty;
  if (!f->is_object()) fail(where + "." + name, "expected a map");
  return *f;
}

std::vector<std::string> selectors(const Json& j, const std::string& where) {
  std::vector<std::string> out;
  const Json& list = array_field(j, "selectors", where);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = where + ".selectors[" + std::to_string(i) + "]";
    const Json* cel = field(list[i], "cel");
    if (cel == nullptr) fail(at, "only cel selectors exist (missing cel.expression)");
    out.push_back(str(*cel, "expression", at + ".cel", true));
  }
  return out;
}

AttributeValue attribute(const Json& j, const std::string& where) {
  AttributeValue v;
  if (const Json* f = field(j, "int")) {
    v.type = AttributeValue::Type::kInt;
    if (!f->is_number_integer()) fail(where + ".int", "expected an integer");
    v.int_value = f->get<std::int64_t>();
  } else if (const Json* b = field(j, "bool")) {
    v.type = AttributeValue::Type::kBool;
    if (!b->is_boolean()) fail(where + ".bool", "expected true or false");
    v.bool_value = b->get<bool>();
  } else if (field(j, "string") != nullptr) {
    v.type = AttributeValue::Type::kString;
    v.text = str(j, "string", where);
  } else if (field(j, "version") != nullptr) {
    v.type = AttributeValue::Type::kVersion;
    v.text = str(j, "version", where);
  } else {
    fail(
        where,
        "an attribute needs one of int, bool, string, version (list attributes are not supported)");
  }
  return v;
}

std::map<std::string, std::map<std::string, Quantity>> counter_sets(const Json& list,
                                                                    const char* name_key,
                                                                    const std::string& where) {
  std::map<std::string, std::map<std::string, Quantity>> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    auto& set = out[str(list[i], name_key, at, true)];
    for (const auto& [k, c] : object_field(list[i], "counters", at).items()) {
      const Json* value = field(c, "value");
      if (value == nullptr) fail(at + ".counters." + k, "missing value");
      set[k] = set.count(k) ? set[k] + quantity(*value, at + ".counters." + k)
                            : quantity(*value, at + ".counters." + k);
    }
  }
  return out;
}

std::vector<std::string> string_list(const Json& j, const char* name, const std::string& where) {
  std::vector<std::string> out;
  for (const Json& v : array_field(j, name, where)) {
    if (v.is_string()) {
      out.push_back(v.get<std::string>());
    } else if (v.is_number_integer()) {
      out.push_back(v.dump());  // an unquoted YAML number: the text it was written as
    } else {
      fail(where + "." + name, "expected a list of strings");
    }
  }
  return out;
}

std::vector<NodeSelectorRequirement> requirements(const Json& term, const char* name,
                                                  const std::string& where) {
  std::vector<NodeSelectorRequirement> out;
  const Json& list = array_field(term, name, where);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = where + "." + name + "[" + std::to_string(i) + "]";
    out.push_back({str(list[i], "key", at, true), str(list[i], "operator", at, true),
                   string_list(list[i], "values", at)});
  }
  return out;
}

// core/v1 NodeSelector; operators and values are checked when it is evaluated, as upstream
// (nodeaffinity.NewNodeSelector) does.
NodeSelector node_selector(const Json& j, const std::string& where) {
  NodeSelector ns;
  const Json& terms = array_field(j, "nodeSelectorTerms", where);
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const std::string at = where + ".nodeSelectorTerms[" + std::to_string(i) + "]";
    ns.terms.push_back({requirements(terms[i], "matchExpressions", at),
                        requirements(terms[i], "matchFields", at)});
  }
  return ns;
}

NodeSelection node_selection(const Json& j, const std::string& where) {
  NodeSelection n;
  n.node_name = str(j, "nodeName", where);
  n.all_nodes = boolean(j, "allNodes", where);
  if (const Json* ns = field(j, "nodeSelector"))
    n.node_selector = node_selector(*ns, where + ".nodeSelector");
  return n;
}

// spec.config of a class, spec.devices.config of a claim: kept as given (opaque to the
// allocator, copied into the allocation result).
std::vector<DeviceConfig> device_configs(const Json& j, const std::string& where) {
  std::vector<DeviceConfig> out;
  const Json& list = array_field(j, "config", where);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = where + ".config[" + std::to_string(i) + "]";
    if (!list[i].is_object()) fail(at, "expected a map");
    DeviceConfig c;
    c.requests = string_list(list[i], "requests", at);
    for (const auto& [k, v] : list[i].items())
      if (k != "requests") c.configuration[k] = v;
    out.push_back(std::move(c));
  }
  return out;
}

Device device(const Json& j, const std::string& where) {
  Device d;
  d.name = str(j, "name", where, true);
  // v1beta1 nests the device's fields under "basic".
  const Json& body = field(j, "basic") != nullptr ? *field(j, "basic") : j;
  for (const auto& [k, a] : object_field(body, "attributes", where).items())
    d.attributes[k] = attribute(a, where + ".attributes[\"" + k + "\"]");
  for (const auto& [k, c] : object_field(body, "capacity", where).items()) {
    const std::string at = where + ".capacity[\"" + k + "\"]";
    DeviceCapacity cap;
    const Json* value = field(c, "value");
    if (value == nullptr) fail(at, "missing value");
    cap.value = quantity(*value, at + ".value");
    if (const Json* rp = field(c, "requestPolicy")) {
      RequestPolicy p;
      if (const Json* def = field(*rp, "default"))
        p.default_value = quantity(*def, at + ".requestPolicy.default");
      for (const auto& v : array_field(*rp, "validValues", at + ".requestPolicy"))
        p.valid_values.push_back(quantity(v, at + ".requestPolicy.validValues"));
      std::sort(p.valid_values.begin(), p.valid_values.end());
      if (const Json* range = field(*rp, "validRange")) {
        if (const Json* m = field(*range, "min"))
          p.min = quantity(*m, at + ".requestPolicy.validRange.min");
        if (const Json* m = field(*range, "max"))
          p.max = quantity(*m, at + ".requestPolicy.validRange.max");
        if (const Json* m = field(*range, "step"))
          p.step = quantity(*m, at + ".requestPolicy.validRange.step");
      }
      cap.request_policy = std::move(p);
    }
    d.capacity[k] = std::move(cap);
  }
  d.allow_multiple_allocations = boolean(body, "allowMultipleAllocations", where);
  d.consumes_counters = counter_sets(array_field(body, "consumesCounters", where), "counterSet",
                                     where + ".consumesCounters");
  const Json& taints = array_field(body, "taints", where);
  for (std::size_t i = 0; i < taints.size(); ++i) {
    const std::string at = where + ".taints[" + std::to_string(i) + "]";
    d.taints.push_back({str(taints[i], "key", at, true), str(taints[i], "value", at),
                        str(taints[i], "effect", at, true)});
  }
  d.has_binding_conditions = !array_field(body, "bindingConditions", where).empty();
  d.node_selection = node_selection(body, where);
  return d;
}

ResourceSlice slice(const Json& obj, const std::string& where) {
  ResourceSlice s;
  s.source = where;
  const Json& meta = object_field(obj, "metadata", where);
  s.name = str(meta, "name", where + ".metadata");
  if (s.name.empty()) s.name = str(meta, "generateName", where + ".metadata");
  const Json* spec = field(obj, "spec");
  if (spec == nullptr) fail(where, "missing spec");
  s.driver = str(*spec, "driver", where + ".spec", true);
  const Json* pool = field(*spec, "pool");
  if (pool == nullptr) fail(where + ".spec", "missing pool");
  s.pool = str(*pool, "name", where + ".spec.pool", true);
  s.generation = integer(*pool, "generation", where + ".spec.pool", 0);
  s.slice_count = integer(*pool, "resourceSliceCount", where + ".spec.pool", 1);
  s.node_name = str(*spec, "nodeName", where + ".spec");
  s.all_nodes = boolean(*spec, "allNodes", where + ".spec");
  if (const Json* ns = field(*spec, "nodeSelector"))
    s.node_selector = node_selector(*ns, where + ".spec.nodeSelector");
  s.per_device_node_selection_set = field(*spec, "perDeviceNodeSelection") != nullptr;
  s.per_device_node_selection = boolean(*spec, "perDeviceNodeSelection", where + ".spec");
  const Json& devices = array_field(*spec, "devices", where + ".spec");
  for (std::size_t i = 0; i < devices.size(); ++i)
    s.devices.push_back(device(devices[i], where + ".spec.devices[" + std::to_string(i) + "]"));
  s.shared_counters = counter_sets(array_field(*spec, "sharedCounters", where + ".spec"), "name",
                                   where + ".spec.sharedCounters");
  return s;
}

ExactRequest exact(const Json& j, const std::string& name, const std::string& where) {
  ExactRequest r;
  r.name = name;
  r.device_class = str(j, "deviceClassName", where, true);
  r.selectors = selectors(j, where);
  const std::string mode = str(j, "allocationMode", where);
  if (!mode.empty() && mode != "ExactCount" && mode != "All") {
    fail(where + ".allocationMode", "\"" + mode + "\" is neither ExactCount nor All");
  }
  r.all = mode == "All";
  r.count = integer(j, "count", where, 1);
  if (!r.all && r.count < 1) fail(where + ".count", "must be at least 1");
  if (const Json* admin = field(j, "adminAccess")) {
    if (!admin->is_boolean()) fail(where + ".adminAccess", "expected true or false");
    r.admin_access = admin->get<bool>();
  }
  const Json& tolerations = array_field(j, "tolerations", where);
  for (std::size_t i = 0; i < tolerations.size(); ++i) {
    const std::string at = where + ".tolerations[" + std::to_string(i) + "]";
    Toleration t;
    t.key = str(tolerations[i], "key", at);
    t.op = str(tolerations[i], "operator", at);
    if (t.op.empty()) t.op = "Equal";
    if (t.op != "Equal" && t.op != "Exists") fail(at + ".operator", "must be Equal or Exists");
    t.value = str(tolerations[i], "value", at);
    t.effect = str(tolerations[i], "effect", at);
    r.tolerations.push_back(std::move(t));
  }
  if (const Json* cap = field(j, "capacity")) {
    for (const auto& [k, q] : object_field(*cap, "requests", where + ".capacity").items())
      r.capacity_requests[k] = quantity(q, where + ".capacity.requests[\"" + k + "\"]");
  }
  return r;
}

ResourceClaim claim_from_spec(const Json& spec, const std::string& name, const std::string& where) {
  ResourceClaim c;
  c.name = name;
  c.source = where;
  const Json& devices = object_field(spec, "devices", where);
  const Json& requests = array_field(devices, "requests", where + ".devices");
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const std::string at = where + ".devices.requests[" + std::to_string(i) + "]";
    DeviceRequest r;
    r.name = str(requests[i], "name", at, true);
    if (const Json* ex = field(requests[i], "exactly")) {
      r.exactly = exact(*ex, r.name, at + ".exactly");
    } else if (const Json* fa = field(requests[i], "firstAvailable")) {
      if (!fa->is_array() || fa->empty()) fail(at + ".firstAvailable", "expected a non-empty list");
      for (std::size_t k = 0; k < fa->size(); ++k) {
        const std::string sat = at + ".firstAvailable[" + std::to_string(k) + "]";
        r.first_available.push_back(exact((*fa)[k], str((*fa)[k], "name", sat, true), sat));
      }
    } else if (field(requests[i], "deviceClassName") != nullptr) {
      r.exactly = exact(requests[i], r.name, at);  // v1beta1 shape
    } else {
      fail(at, "a request needs exactly or firstAvailable");
    }
    c.requests.push_back(std::move(r));
  }
  const Json& constraints = array_field(devices, "constraints", where + ".devices");
  for (std::size_t i = 0; i < constraints.size(); ++i) {
    const std::string at = where + ".devices.constraints[" + std::to_string(i) + "]";
    DeviceConstraint k;
    for (const auto& r : array_field(constraints[i], "requests", at)) {
      if (!r.is_string()) fail(at + ".requests", "expected request names");
      k.requests.push_back(r.get<std::string>());
    }
    k.match_attribute = str(constraints[i], "matchAttribute", at);
    k.distinct_attribute = str(constraints[i], "distinctAttribute", at);
    if (k.match_attribute.empty() == k.distinct_attribute.empty()) {
      fail(at, "a constraint needs exactly one of matchAttribute, distinctAttribute");
    }
    for (const std::string* a : {&k.match_attribute, &k.distinct_attribute}) {
      if (!a->empty() && a->find('/') == std::string::npos) {
        fail(at, "attribute \"" + *a + "\" must be fully qualified (domain/name)");
      }
    }
    c.constraints.push_back(std::move(k));
  }
  c.config = device_configs(devices, where + ".devices");
  return c;
}

std::string object_name(const Json& obj, const std::string& where) {
  const Json& meta = object_field(obj, "metadata", where);
  const std::string ns = str(meta, "namespace", where + ".metadata");
  std::string name = str(meta, "name", where + ".metadata");
  if (name.empty()) name = str(meta, "generateName", where + ".metadata");
  if (name.empty()) fail(where, "missing metadata.name");
  return ns.empty() ? name : ns + "/" + name;
}

void add_allocation(const Json& obj, const std::string& name, const std::string& where,
                    Inputs& in) {
  const Json* status = field(obj, "status");
  const Json* allocation = status != nullptr ? field(*status, "allocation") : nullptr;
  if (allocation == nullptr) fail(where, "an --allocated claim needs status.allocation");
  const Json& results = array_field(object_field(*allocation, "devices", where), "results", where);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string at = where + ".status.allocation.devices.results[" + std::to_string(i) + "]";
    AllocatedDevice a;
    a.driver = str(results[i], "driver", at, true);
    a.pool = str(results[i], "pool", at, true);
    a.device = str(results[i], "device", at, true);
    a.admin_access = boolean(results[i], "adminAccess", at);
    for (const auto& [k, q] : object_field(results[i], "consumedCapacity", at).items())
      a.consumed_capacity[k] = quantity(q, at + ".consumedCapacity." + k);
    a.claim = name;
    in.allocated.push_back(std::move(a));
  }
}

void add_object(const Json& obj, const std::string& where, DocumentRole role, Inputs& in) {
  if (!obj.is_object()) fail(where, "expected a Kubernetes object");
  const std::string kind = str(obj, "kind", where, true);
  if (kind.size() >= 4 && kind.substr(kind.size() - 4) == "List") {
    const Json& items = array_field(obj, "items", where);
    for (std::size_t i = 0; i < items.size(); ++i)
      add_object(items[i], where + ".items[" + std::to_string(i) + "]", role, in);
    return;
  }
  const std::string name = kind == "ResourceSlice" ? "" : object_name(obj, where);
  const std::string at = where + " (" + kind + " " + name + ")";
  if (kind == "ResourceSlice") {
    in.slices.push_back(slice(obj, where));
  } else if (kind == "DeviceClass") {
    DeviceClass c;
    c.name = name;
    c.selectors = selectors(object_field(obj, "spec", at), at + ".spec");
    c.config = device_configs(object_field(obj, "spec", at), at + ".spec");
    in.classes.push_back(std::move(c));
  } else if (kind == "ResourceClaim") {
    if (role == DocumentRole::kAllocated) {
      add_allocation(obj, name, at, in);
    } else {
      in.named_claims.push_back(claim_from_spec(object_field(obj, "spec", at), name, at + ".spec"));
    }
  } else if (kind == "ResourceClaimTemplate") {
    const Json& spec = object_field(object_field(obj, "spec", at), "spec", at + ".spec");
    in.named_templates.push_back(claim_from_spec(spec, name, at + ".spec.spec"));
  } else if (kind == "Pod") {
    in.saw_pod = true;
    const std::string ns = str(object_field(obj, "metadata", at), "namespace", at);
    const Json& refs = array_field(object_field(obj, "spec", at), "resourceClaims", at + ".spec");
    for (std::size_t i = 0; i < refs.size(); ++i) {
      const std::string rat = at + ".spec.resourceClaims[" + std::to_string(i) + "]";
      PodClaimRef r;
      r.pod = name;
      r.entry = str(refs[i], "name", rat, true);
      const auto qualify = [&](const std::string& n) {
        return n.empty() || ns.empty() ? n : ns + "/" + n;
      };
      r.claim = qualify(str(refs[i], "resourceClaimName", rat));
      r.claim_template = qualify(str(refs[i], "resourceClaimTemplateName", rat));
      if (r.claim.empty() == r.claim_template.empty()) {
        fail(rat, "needs exactly one of resourceClaimName, resourceClaimTemplateName");
      }
      in.pod_refs.push_back(std::move(r));
    }
  } else {
    fail(where,
         "unexpected kind " + kind +
             " (expected ResourceClaim, ResourceClaimTemplate, Pod, DeviceClass, ResourceSlice)");
  }
}

// Every document of `text` (YAML or JSON, several per file); an unparsable text is an error
// naming `source`.
Result<std::vector<YAML::Node>> parse_documents(std::string_view text, const std::string& source) {
  try {
    return YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::kMalformed, "not YAML or JSON: " + std::string(e.what()), source);
  }
}

// How messages name document `i` of `count`: "document" when it is the only one.
std::string document_name(std::size_t i, std::size_t count) {
  return count > 1 ? "document " + std::to_string(i + 1) : "document";
}

}  // namespace

Result<void> load_documents(std::string_view text, const std::string& source, DocumentRole role,
                            Inputs& inputs) {
  auto docs = parse_documents(text, source);
  if (!docs) return docs.error();
  try {
    for (std::size_t i = 0; i < docs->size(); ++i) {
      if ((*docs)[i].IsNull()) continue;
      add_object(yaml_to_json((*docs)[i]), document_name(i, docs->size()), role, inputs);
    }
  } catch (const LoadError& e) {
    return make_error(ErrorCode::kInvalid, e.message, source);
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::kMalformed, e.what(), source);
  }
  return {};
}

Result<void> finish_loading(Inputs& in) {
  in.claims.clear();
  if (!in.saw_pod) {
    in.claims = in.named_claims;
    in.claims.insert(in.claims.end(), in.named_templates.begin(), in.named_templates.end());
    return {};
  }
  for (const PodClaimRef& r : in.pod_refs) {
    const std::string& want = r.claim.empty() ? r.claim_template : r.claim;
    const auto& pool = r.claim.empty() ? in.named_templates : in.named_claims;
    const auto same = [&](const ResourceClaim& c) {
      // A reference without a namespace matches a claim of any namespace and vice versa.
      const auto bare = [](const std::string& n) { return n.substr(n.find('/') + 1); };
      return c.name == want || bare(c.name) == bare(want);
    };
    auto it = std::find_if(pool.begin(), pool.end(), same);
    if (it == pool.end()) {
      return make_error(ErrorCode::kNotFound,
                        "Pod " + r.pod + " names " +
                            (r.claim.empty() ? "ResourceClaimTemplate " : "ResourceClaim ") + want +
                            " (resourceClaims entry \"" + r.entry +
                            "\"), which is not among the inputs");
    }
    ResourceClaim c = *it;
    if (!r.claim_template.empty())
      c.name = r.pod + "-" + r.entry + " (from template " + it->name + ")";
    in.claims.push_back(std::move(c));
  }
  return {};
}

Result<Node> load_node(std::string_view text, const std::string& source) {
  auto docs = parse_documents(text, source);
  if (!docs) return docs.error();
  try {
    std::vector<Json> nodes;
    std::function<void(const Json&, const std::string&)> collect = [&](const Json& obj,
                                                                       const std::string& where) {
      if (!obj.is_object()) fail(where, "expected a Kubernetes object");
      const std::string kind = str(obj, "kind", where, true);
      if (kind == "List" || kind == "NodeList") {
        const Json& items = array_field(obj, "items", where);
        for (std::size_t i = 0; i < items.size(); ++i)
          collect(items[i], where + ".items[" + std::to_string(i) + "]");
        return;
      }
      if (kind != "Node") fail(where, "unexpected kind " + kind + " (expected a Node)");
      nodes.push_back(obj);
    };
    for (std::size_t i = 0; i < docs->size(); ++i) {
      if ((*docs)[i].IsNull()) continue;
      collect(yaml_to_json((*docs)[i]), document_name(i, docs->size()));
    }
    if (nodes.size() != 1) {
      return make_error(ErrorCode::kInvalid,
                        "expected exactly one Node object, found " + std::to_string(nodes.size()),
                        source);
    }
    Node n;
    const Json& meta = object_field(nodes[0], "metadata", "Node");
    n.name = str(meta, "name", "Node.metadata", true);
    for (const auto& [k, v] : object_field(meta, "labels", "Node.metadata").items()) {
      if (v.is_string()) {
        n.labels[k] = v.get<std::string>();
      } else if (v.is_number_integer() || v.is_boolean()) {
        n.labels[k] = v.dump();  // an unquoted YAML scalar: the text the label holds
      } else {
        fail("Node.metadata.labels." + k, "expected a string");
      }
    }
    return n;
  } catch (const LoadError& e) {
    return make_error(ErrorCode::kInvalid, e.message, source);
  }
}

Result<ResourceSlice> parse_resource_slice(const std::string& json_text,
                                           const std::string& source) {
  try {
    return slice(Json::parse(json_text), source);
  } catch (const LoadError& e) {
    return make_error(ErrorCode::kInvalid, e.message, source);
  } catch (const Json::exception& e) {
    return make_error(ErrorCode::kMalformed, e.what(), source);
  }
}

}  // namespace nodetopo::fit
