#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include <nodetopo/base/strings.hpp>
#include <nodetopo/exporters/yaml_emit.hpp>

namespace nodetopo::exporters {

namespace {

using Json = nlohmann::ordered_json;

// Plain scalars are restricted to a conservative alphabet that starts with a letter, '_' or '/':
// no indicator characters, no number or timestamp forms, no ':' or '#' sequences.
bool plain_safe(std::string_view s) {
  if (s.empty()) return false;
  const char first = s.front();
  if (!(std::isalpha(static_cast<unsigned char>(first)) != 0 || first == '_' || first == '/')) {
    return false;
  }
  for (char c : s) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' ||
                    c == '/' || c == '-';
    if (!ok) return false;
  }
  // YAML 1.1 booleans and nulls read by older parsers.
  static constexpr std::array<std::string_view, 11> kReserved = {
      "true", "false", "yes", "no", "on", "off", "y", "n", "null", "nan", "inf"};
  const std::string lower = ascii_lower(s);
  return std::find(kReserved.begin(), kReserved.end(), lower) == kReserved.end();
}

std::string scalar(const Json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (plain_safe(s)) return s;
    return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  if (v.is_null()) return "null";
  if (v.is_object()) return "{}";
  if (v.is_array()) return "[]";
  return v.dump();
}

bool is_block(const Json& v) {
  return (v.is_object() || v.is_array()) && !v.empty();
}

void emit(const Json& v, std::size_t indent, std::string& out);

void emit_object(const Json& v, std::size_t indent, std::string& out) {
  for (auto it = v.begin(); it != v.end(); ++it) {
    out.append(indent, ' ');
    out += scalar(Json(it.key()));
    out += ':';
    const Json& val = it.value();
    if (!is_block(val)) {
      out += ' ';
      out += scalar(val);
      out += '\n';
    } else if (val.is_object()) {
      out += '\n';
      emit_object(val, indent + 2, out);
    } else {
      out += '\n';
      emit(val, indent, out);  // kubectl style: "- " at the key's indentation
    }
  }
}

void emit_array(const Json& v, std::size_t indent, std::string& out) {
  for (const Json& item : v) {
    if (!is_block(item)) {
      out.append(indent, ' ');
      out += "- ";
      out += scalar(item);
      out += '\n';
    } else if (item.is_object()) {
      std::string body;
      emit_object(item, indent + 2, body);
      // The first key goes on the dash line.
      out.append(indent, ' ');
      out += "- ";
      out += body.substr(indent + 2);
    } else {
      out.append(indent, ' ');
      out += "-\n";
      emit_array(item, indent + 2, out);
    }
  }
}

void emit(const Json& v, std::size_t indent, std::string& out) {
  if (v.is_object()) {
    emit_object(v, indent, out);
  } else if (v.is_array()) {
    emit_array(v, indent, out);
  }
}

}  // namespace

std::string to_yaml(const Json& value) {
  std::string out;
  if (!is_block(value)) return scalar(value) + "\n";
  emit(value, 0, out);
  return out;
}

std::string to_yaml_stream(std::span<const Json> documents) {
  std::string out;
  for (const Json& doc : documents) {
    out += "---\n";
    out += to_yaml(doc);
  }
  return out;
}

}  // namespace nodetopo::exporters
