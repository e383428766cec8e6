// Node selector evaluation with the scheduler's semantics (nodeaffinity.NewNodeSelector and
// labels.NewRequirement): the selector is validated first, then its terms are tried in order.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include <nodetopo/fit/node_selector.hpp>

namespace nodetopo::fit {

namespace {

bool alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// A label name or value: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, at most 63 characters.
bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// A DNS-1123 subdomain (the optional prefix of a label key).
bool valid_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t dot = s.find('.', start);
    const std::string_view part =
        s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || part.size() > 63) return false;
    const auto lower_alnum = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    };
    if (!lower_alnum(part.front()) || !lower_alnum(part.back())) return false;
    if (!std::all_of(part.begin(), part.end(), [&](char c) { return lower_alnum(c) || c == '-'; }))
      return false;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

bool valid_label_key(std::string_view key) {
  const std::size_t slash = key.find('/');
  if (slash == std::string_view::npos) return valid_name(key);
  return valid_subdomain(key.substr(0, slash)) && valid_name(key.substr(slash + 1));
}

bool parse_int(std::string_view s, std::int64_t& out) {
  if (s.empty()) return false;
  std::size_t i = s.front() == '+' ? 1 : 0;  // strconv.ParseInt accepts a sign
  const auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string where(std::size_t term, const char* list, std::size_t index) {
  return "nodeSelectorTerms[" + std::to_string(term) + "]." + list + "[" + std::to_string(index) +
         "]";
}

// labels.NewRequirement's checks for one matchExpressions entry.
std::string check_expression(const NodeSelectorRequirement& r) {
  const std::string& op = r.op;
  if (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist" && op != "Gt" &&
      op != "Lt") {
    return "operator: Unsupported value: \"" + op + "\" (In, NotIn, Exists, DoesNotExist, Gt, Lt)";
  }
  if (!valid_label_key(r.key)) return "key: Invalid value: \"" + r.key + "\": not a label key";
  if ((op == "In" || op == "NotIn") && r.values.empty())
    return "values: for 'in', 'notin' operators, values set can't be empty";
  if ((op == "Exists" || op == "DoesNotExist") && !r.values.empty())
    return "values: values set must be empty for exists and does not exist";
  if (op == "Gt" || op == "Lt") {
    std::int64_t v = 0;
    if (r.values.size() != 1)
      return "values: for 'Gt', 'Lt' operators, exactly one value is required";
    if (!parse_int(r.values[0], v))
      return "values: for 'Gt', 'Lt' operators, the value must be an integer";
  }
  for (const std::string& v : r.values)
    if (!v.empty() && !valid_name(v))
      return "values: Invalid value: \"" + v + "\": not a label value";
  return "";
}

std::string check_field(const NodeSelectorRequirement& r) {
  if (r.op != "In" && r.op != "NotIn")
    return "operator: Unsupported value: \"" + r.op + "\" (In, NotIn)";
  if (r.values.size() != 1) return "values: must have one element";
  return "";
}

bool expression_matches(const NodeSelectorRequirement& r, const Node& node) {
  const auto it = node.labels.find(r.key);
  const bool has = it != node.labels.end();
  const auto in_values = [&] {
    return has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
  };
  if (r.op == "In") return in_values();
  if (r.op == "NotIn") return !in_values();
  if (r.op == "Exists") return has;
  if (r.op == "DoesNotExist") return !has;
  std::int64_t label = 0;
  std::int64_t bound = 0;
  if (!has || !parse_int(it->second, label) || !parse_int(r.values[0], bound)) return false;
  return r.op == "Gt" ? label > bound : label < bound;
}

bool field_matches(const NodeSelectorRequirement& r, const Node& node) {
  // The only node field a selector can name is metadata.name; another key reads as empty.
  const std::string value = r.key == "metadata.name" ? node.name : std::string();
  return (r.op == "In") == (value == r.values[0]);
}

}  // namespace

Result<bool> node_selector_matches(const NodeSelector& selector, const Node& node) {
  for (std::size_t t = 0; t < selector.terms.size(); ++t) {
    const NodeSelectorTerm& term = selector.terms[t];
    for (std::size_t i = 0; i < term.match_expressions.size(); ++i) {
      if (auto why = check_expression(term.match_expressions[i]); !why.empty())
        return make_error(ErrorCode::kInvalid, where(t, "matchExpressions", i) + "." + why);
    }
    for (std::size_t i = 0; i < term.match_fields.size(); ++i) {
      if (auto why = check_field(term.match_fields[i]); !why.empty())
        return make_error(ErrorCode::kInvalid, where(t, "matchFields", i) + "." + why);
    }
  }
  for (const NodeSelectorTerm& term : selector.terms) {
    if (term.match_expressions.empty() && term.match_fields.empty()) continue;  // selects nothing
    const bool labels = std::all_of(term.match_expressions.begin(), term.match_expressions.end(),
                                    [&](const auto& r) { return expression_matches(r, node); });
    const bool fields = std::all_of(term.match_fields.begin(), term.match_fields.end(),
                                    [&](const auto& r) { return field_matches(r, node); });
    if (labels && fields) return true;
  }
  return false;
}

Result<bool> node_selection_matches(const NodeSelection& selection, const Node& node) {
  if (!selection.node_name.empty()) return selection.node_name == node.name;
  if (selection.all_nodes) return true;
  if (selection.node_selector) return node_selector_matches(*selection.node_selector, node);
  return false;
}

std::string describe(const NodeSelector& selector) {
  std::string out;
  const auto req = [](const NodeSelectorRequirement& r) {
    std::string s = r.key + " " + r.op;
    if (!r.values.empty()) {
      s += " [";
      for (std::size_t i = 0; i < r.values.size(); ++i)
        s += (i ? " " : "") + r.values[i];
      s += "]";
    }
    return s;
  };
  for (std::size_t t = 0; t < selector.terms.size(); ++t) {
    std::string term;
    for (const auto& r : selector.terms[t].match_expressions)
      term += (term.empty() ? "" : "; ") + req(r);
    for (const auto& r : selector.terms[t].match_fields)
      term += (term.empty() ? "" : "; ") + std::string("field ") + req(r);
    out += (t ? " OR " : "") + (term.empty() ? std::string("(empty term)") : term);
  }
  return out.empty() ? "(no terms)" : out;
}

}  // namespace nodetopo::fit
