#include <algorithm>
#include <cctype>
#include <charconv>

#include <nodetopo/base/strings.hpp>
#include <nodetopo/base/yaml_reader.hpp>

namespace nodetopo::yaml {

bool is_absent(const YAML::Node& node) {
  return !node.IsDefined() || node.IsNull();
}

std::optional<std::string> read_scalar(Reader& r, const YAML::Node& n, const std::string& path,
                                       std::string_view expected) {
  if (is_absent(n)) return std::nullopt;
  if (!n.IsScalar()) {
    r.fail(
        n, path,
        "expected " + std::string(expected) + ", got a " + (n.IsSequence() ? "list" : "mapping"));
    return std::nullopt;
  }
  return n.Scalar();
}

void Reader::fail(const YAML::Node& node, std::string_view field, std::string_view message) {
  fail(line_of(node), field, message);
}

void Reader::fail(int line, std::string_view field, std::string_view message) {
  if (error_) return;
  std::string text;
  if (line > 0) text = "line " + std::to_string(line) + ": ";
  if (!field.empty()) text += std::string(field) + ": ";
  text += message;
  error_ = make_error(ErrorCode::kInvalid, std::move(text), source_);
}

int line_of(const YAML::Node& node) {
  if (!node.IsDefined()) return 0;
  const YAML::Mark mark = node.Mark();
  return mark.line >= 0 ? mark.line + 1 : 0;
}

// yaml-cpp's Node::operator= rebinds the node inside its document, so the node to read is
// chosen before construction instead of being reassigned.
YAML::Node Fields::mapping_or_empty(const YAML::Node& node) {
  if (!is_absent(node) && node.IsMap()) return node;
  return YAML::Node(YAML::NodeType::Map);
}

Fields::Fields(Reader& reader, const YAML::Node& node, std::string field_path)
    : reader_(reader), node_(mapping_or_empty(node)), path_(std::move(field_path)) {
  if (is_absent(node)) return;
  if (!node.IsMap()) {
    reader_.fail(node, path_.empty() ? reader_.document() : path_, "expected a mapping of keys");
    return;
  }
  // yaml-cpp keeps duplicate keys (lookups see only the first): refuse them here.
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
    if (!kv.first.IsScalar()) {
      reader_.fail(kv.first, path_, "keys must be plain names");
    } else if (!seen.insert(key).second) {
      reader_.fail(kv.first, path(key), "duplicate key");
    }
  }
}

YAML::Node Fields::take(std::string_view key) {
  known_.emplace_back(key);
  const YAML::Node& cnode = node_;  // const lookup never inserts
  YAML::Node value = cnode[std::string(key)];
  return value;
}

YAML::Node Fields::require(std::string_view key) {
  YAML::Node value = take(key);
  if (is_absent(value)) reader_.fail(node_, path(key), "required field is missing");
  return value;
}

std::string Fields::path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void Fields::done() {
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar()) continue;
    const std::string key = kv.first.Scalar();
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    std::vector<std::string> sorted = known_;
    std::sort(sorted.begin(), sorted.end());
    std::string list;
    for (const std::string& k : sorted)
      list += (list.empty() ? "" : ", ") + k;
    reader_.fail(kv.first, path(key), "unknown key (expected one of: " + list + ")");
    return;
  }
}

std::optional<std::uint64_t> parse_number(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<std::string> read_string(Reader& r, const YAML::Node& n, const std::string& path) {
  return read_scalar(r, n, path, "a string");
}

std::optional<std::uint64_t> read_uint(Reader& r, const YAML::Node& n, const std::string& path,
                                       std::uint64_t max, std::uint64_t min) {
  auto text = read_scalar(r, n, path, "a number");
  if (!text) return std::nullopt;
  auto value = parse_number(*text);
  if (!value) {
    r.fail(n, path, "'" + *text + "' is not a whole number (decimal or 0x-hex)");
    return std::nullopt;
  }
  if (*value < min || *value > max) {
    r.fail(n, path,
           *text + " is out of range (" + std::to_string(min) + ".." + std::to_string(max) + ")");
    return std::nullopt;
  }
  return value;
}

std::optional<std::int64_t> read_int(Reader& r, const YAML::Node& n, const std::string& path,
                                     std::int64_t min, std::int64_t max) {
  auto text = read_scalar(r, n, path, "a number");
  if (!text) return std::nullopt;
  std::string_view t = trim(*text);
  const bool negative = !t.empty() && t.front() == '-';
  if (negative) t.remove_prefix(1);
  auto magnitude = parse_number(t);
  if (!magnitude || *magnitude > static_cast<std::uint64_t>(INT64_MAX)) {
    r.fail(n, path, "'" + *text + "' is not a whole number");
    return std::nullopt;
  }
  const auto value =
      negative ? -static_cast<std::int64_t>(*magnitude) : static_cast<std::int64_t>(*magnitude);
  if (value < min || value > max) {
    r.fail(n, path,
           *text + " is out of range (" + std::to_string(min) + ".." + std::to_string(max) + ")");
    return std::nullopt;
  }
  return value;
}

std::optional<bool> read_bool(Reader& r, const YAML::Node& n, const std::string& path) {
  auto text = read_scalar(r, n, path, "true or false");
  if (!text) return std::nullopt;
  const std::string v = ascii_lower(*text);
  if (v == "true" || v == "yes") return true;
  if (v == "false" || v == "no") return false;
  r.fail(n, path, "'" + *text + "' is not true or false");
  return std::nullopt;
}

std::optional<std::uint64_t> read_size(Reader& r, const YAML::Node& n, const std::string& path) {
  auto text = read_scalar(r, n, path, "a size such as \"80 GiB\"");
  if (!text) return std::nullopt;
  std::string_view t = trim(*text);
  std::size_t digits = 0;
  while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits])) != 0)
    ++digits;
  auto number = parse_number(t.substr(0, digits));
  const std::string unit = ascii_lower(trim(t.substr(digits)));
  std::uint64_t shift = 0;
  bool unit_ok = true;
  if (unit.empty() || unit == "b") {
    shift = 0;
  } else if (unit == "kib") {
    shift = 10;
  } else if (unit == "mib") {
    shift = 20;
  } else if (unit == "gib") {
    shift = 30;
  } else if (unit == "tib") {
    shift = 40;
  } else {
    unit_ok = false;
  }
  if (!number || !unit_ok) {
    r.fail(n, path,
           "'" + *text +
               "' is not a size (a byte count or a whole number with B, KiB, MiB, GiB "
               "or TiB)");
    return std::nullopt;
  }
  if (*number > (UINT64_MAX >> shift)) {
    r.fail(n, path, "'" + *text + "' is too large");
    return std::nullopt;
  }
  return *number << shift;
}

std::optional<std::vector<std::string>> read_string_list(Reader& r, const YAML::Node& n,
                                                         const std::string& path) {
  if (is_absent(n)) return std::nullopt;
  std::vector<std::string> out;
  if (n.IsScalar()) {
    out.push_back(n.Scalar());
    return out;
  }
  if (!n.IsSequence()) {
    r.fail(n, path, "expected a name or a list of names");
    return std::nullopt;
  }
  for (std::size_t i = 0; i < n.size(); ++i) {
    auto s = read_string(r, n[i], path + "[" + std::to_string(i) + "]");
    if (s) out.push_back(*s);
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, std::int64_t>>> read_int_map(
    Reader& r, const YAML::Node& n, const std::string& path) {
  if (is_absent(n)) return std::nullopt;
  if (!n.IsMap()) {
    r.fail(n, path, "expected a mapping of NVML function names to return codes");
    return std::nullopt;
  }
  std::vector<std::pair<std::string, std::int64_t>> out;
  Fields dup_check(r, n, path);  // refuses duplicate keys
  for (const auto& kv : n) {
    const std::string key = kv.first.Scalar();
    dup_check.take(key);
    if (auto v = read_int(r, kv.second, path + "." + key, 0, 999)) out.emplace_back(key, *v);
  }
  dup_check.done();
  return out;
}

}  // namespace nodetopo::yaml
