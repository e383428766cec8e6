// The DRA `device` variable and selector evaluation, plus the has() rewrite hint for the most
// common selector error: reading an attribute that some devices do not have.
#include <regex>
#include <string>

#include <nodetopo/fit/selector.hpp>

namespace nodetopo::fit {

namespace {

// "resource.kubernetes.io/pcieRoot" -> {domain, id}; a short name belongs to the driver.
std::pair<std::string, std::string> split_qualified(const std::string& name,
                                                    const std::string& driver) {
  const auto slash = name.find('/');
  if (slash == std::string::npos) return {driver, name};
  return {name.substr(0, slash), name.substr(slash + 1)};
}

void put(cel::Map& outer, const std::string& domain, const std::string& id, cel::Value v) {
  for (auto& [k, inner] : outer.entries) {
    if (k.text() == domain) {
      cel::Map m = inner.as_map();
      m.entries.emplace_back(cel::Value::string(id), std::move(v));
      inner = cel::Value::map(std::move(m));
      return;
    }
  }
  cel::Map m;
  m.entries.emplace_back(cel::Value::string(id), std::move(v));
  outer.entries.emplace_back(cel::Value::string(domain), cel::Value::map(std::move(m)));
}

}  // namespace

cel::Value SelectorEvaluator::device_value(const Device& device, const std::string& driver) const {
  cel::Map attributes;
  attributes.missing_is_empty_map = true;
  for (const auto& [name, a] : device.attributes) {
    const auto [domain, id] = split_qualified(name, driver);
    cel::Value v;
    switch (a.type) {
      case AttributeValue::Type::kInt:
        v = cel::Value::integer(a.int_value);
        break;
      case AttributeValue::Type::kBool:
        v = cel::Value::boolean(a.bool_value);
        break;
      case AttributeValue::Type::kString:
        v = cel::Value::string(a.text);
        break;
      case AttributeValue::Type::kVersion: {
        auto sv = Semver::parse(a.text);
        v = sv ? cel::Value::semver(*sv)
               : cel::Value::error("attribute " + name + ": parse semantic version: \"" + a.text +
                                   "\"");
        break;
      }
    }
    put(attributes, domain, id, std::move(v));
  }
  cel::Map capacity;
  capacity.missing_is_empty_map = true;
  for (const auto& [name, c] : device.capacity) {
    const auto [domain, id] = split_qualified(name, driver);
    put(capacity, domain, id, cel::Value::quantity(c.value));
  }
  cel::Map d;
  d.entries.emplace_back(cel::Value::string("driver"), cel::Value::string(driver));
  d.entries.emplace_back(cel::Value::string("attributes"), cel::Value::map(std::move(attributes)));
  d.entries.emplace_back(cel::Value::string("capacity"), cel::Value::map(std::move(capacity)));
  if (features_.consumable_capacity) {
    d.entries.emplace_back(cel::Value::string("allowMultipleAllocations"),
                           cel::Value::boolean(device.allow_multiple_allocations));
  }
  return cel::Value::map(std::move(d));
}

SelectorOutcome SelectorEvaluator::evaluate(const std::string& expression, const Device& device,
                                            const std::string& driver) {
  auto it = cache_.find(expression);
  if (it == cache_.end()) it = cache_.emplace(expression, cel::Program::compile(expression)).first;
  SelectorOutcome out;
  if (const auto* err = std::get_if<cel::CompileError>(&it->second)) {
    out.error = "CEL compile error: " + err->describe();
    out.compile_error = true;
    return out;
  }
  const cel::Activation vars{{"device", device_value(device, driver)}};
  const cel::Value r = std::get<cel::Program>(it->second).evaluate(vars);
  if (r.is_error()) {
    out.error = "CEL runtime error: " + r.text();
  } else if (r.kind() != cel::Value::Kind::kBool) {
    out.error = "CEL result of type " + r.type_name() + " could not be converted to bool";
  } else {
    out.matches = r.as_bool();
  }
  return out;
}

std::string suggest_has_rewrite(const std::string& expression, const std::string& error) {
  static const std::regex key_re("no such key: ([A-Za-z_][A-Za-z0-9_]*)");
  std::smatch m;
  if (!std::regex_search(error, m, key_re)) return "";
  const std::string name = m[1];
  // device.attributes["domain"].name  or  device.attributes["domain"]["name"]
  const std::regex term_re("device\\.(attributes|capacity)\\[\"([^\"]+)\"\\](\\." + name +
                           "\\b|\\[\"" + name + "\"\\])");
  std::smatch t;
  if (!std::regex_search(expression, t, term_re)) {
    return "guard the lookup of \"" + name + "\" with has(...) or `\"" + name +
           "\" in device.attributes[\"<domain>\"]` before reading it";
  }
  const std::string map_expr = "device." + t[1].str() + "[\"" + t[2].str() + "\"]";
  return "has(" + map_expr + "." + name + ") && (" + expression + ")";
}

}  // namespace nodetopo::fit
