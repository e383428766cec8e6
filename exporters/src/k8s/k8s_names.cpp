#include <array>
#include <cctype>
#include <limits>
#include <vector>

#include <nodetopo/base/strings.hpp>
#include <nodetopo/exporters/k8s_names.hpp>

namespace nodetopo::exporters::k8s {

namespace {

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool is_alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Appended, not "\"" + ... + "\"": GCC 12 -O2 reports a false -Wrestrict for such chains.
std::string quoted(std::string_view v) {
  std::string out;
  out.reserve(v.size() + 2);
  out += '"';
  out += v;
  out += '"';
  return out;
}

// The shared shape of label names and values: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
bool label_token_ok(std::string_view v) {
  if (v.empty()) return false;
  if (!is_alnum(v.front()) || !is_alnum(v.back())) return false;
  for (char c : v) {
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool ends_with_domain(std::string_view host, std::string_view domain) {
  if (host == domain) return true;
  return host.size() > domain.size() && host.substr(host.size() - domain.size()) == domain &&
         host[host.size() - domain.size() - 1] == '.';
}

}  // namespace

std::string check_dns_label(std::string_view value) {
  if (value.empty()) return "must not be empty";
  if (value.size() > 63) {
    return quoted(value) + " is " + std::to_string(value.size()) +
           " characters long; a DNS label has at most 63";
  }
  if (!is_lower_alnum(value.front()) || !is_lower_alnum(value.back())) {
    return quoted(value) + " must start and end with a lower-case letter or digit (DNS label)";
  }
  for (char c : value) {
    if (!is_lower_alnum(c) && c != '-') {
      return quoted(value) + " may only hold lower-case letters, digits and '-' (DNS label)";
    }
  }
  return {};
}

std::string check_dns_subdomain(std::string_view value, std::size_t max_length) {
  if (value.empty()) return "must not be empty";
  if (value.size() > max_length) {
    return quoted(value) + " is " + std::to_string(value.size()) + " characters long; at most " +
           std::to_string(max_length) + " are allowed";
  }
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t dot = value.find('.', start);
    const std::string_view part =
        value.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || !is_lower_alnum(part.front()) || !is_lower_alnum(part.back())) {
      return quoted(value) +
             " is not a DNS subdomain: each dot-separated part must start and end with a "
             "lower-case letter or digit";
    }
    for (char c : part) {
      if (!is_lower_alnum(c) && c != '-') {
        return quoted(value) +
               " is not a DNS subdomain: only lower-case letters, digits, '-' and '.' are allowed";
      }
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return {};
}

std::string check_c_identifier(std::string_view value, std::size_t max_length) {
  if (value.empty()) return "must not be empty";
  if (value.size() > max_length) {
    return quoted(value) + " is " + std::to_string(value.size()) + " characters long; at most " +
           std::to_string(max_length) + " are allowed";
  }
  const auto ok_first = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!ok_first(value.front())) {
    return quoted(value) + " is not a C identifier: it must start with a letter or '_'";
  }
  for (char c : value) {
    if (!ok_first(c) && !is_digit(c)) {
      return quoted(value) + " is not a C identifier: only letters, digits and '_' are allowed";
    }
  }
  return {};
}

std::string check_qualified_attribute_name(std::string_view name) {
  const std::size_t slash = name.find('/');
  if (slash == std::string_view::npos) return check_c_identifier(name, 32);
  const std::string_view domain = name.substr(0, slash);
  const std::string_view id = name.substr(slash + 1);
  if (std::string why = check_dns_subdomain(domain, 63); !why.empty()) {
    return "domain of " + quoted(name) + ": " + why;
  }
  if (std::string why = check_c_identifier(id, 32); !why.empty()) {
    return "identifier of " + quoted(name) + ": " + why;
  }
  return {};
}

std::string check_label_key(std::string_view key) {
  std::string_view name = key;
  const std::size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    const std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (std::string why = check_dns_subdomain(prefix, 253); !why.empty()) {
      return "prefix of label key " + quoted(key) + ": " + why;
    }
    if (ends_with_domain(prefix, "kubernetes.io") || ends_with_domain(prefix, "k8s.io")) {
      return "label key " + quoted(key) + " is under " + std::string(prefix) +
             ", which is reserved for Kubernetes";
    }
  }
  if (name.size() > 63) {
    return "name of label key " + quoted(key) + " is " + std::to_string(name.size()) +
           " characters long; at most 63 are allowed";
  }
  if (!label_token_ok(name)) {
    return "name of label key " + quoted(key) +
           " must match ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
  }
  return {};
}

std::string check_label_value(std::string_view value) {
  if (value.empty()) return {};
  if (value.size() > 63) {
    return "label value " + quoted(value) + " is " + std::to_string(value.size()) +
           " characters long; at most 63 are allowed";
  }
  if (!label_token_ok(value)) {
    return "label value " + quoted(value) + " must match ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
  }
  return {};
}

std::string sanitize_label_value(std::string_view text) {
  std::string out;
  bool pending_dash = false;
  for (char c : text) {
    if (is_alnum(c) || c == '_' || c == '.' || c == '-') {
      if (pending_dash && !out.empty()) out += '-';
      pending_dash = false;
      out += c;
    } else {
      pending_dash = true;
    }
  }
  const auto trim = [](std::string& s) {
    std::size_t b = 0;
    while (b < s.size() && !is_alnum(s[b]))
      ++b;
    std::size_t e = s.size();
    while (e > b && !is_alnum(s[e - 1]))
      --e;
    s = s.substr(b, e - b);
  };
  trim(out);
  if (out.size() > 63) {
    out.resize(63);
    trim(out);
  }
  return out;
}

namespace {

// A numeric identifier of semver: "0" or digits without a leading zero.
bool semver_numeric(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_digit(c)) return false;
  }
  return s.size() == 1 || s.front() != '0';
}

bool semver_ident_chars(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_alnum(c) && c != '-') return false;
  }
  return true;
}

}  // namespace

std::string check_semver(std::string_view version) {
  const std::string bad = quoted(version) + " is not a strict semantic version (semver 2.0.0)";
  if (version.empty()) return bad + ": empty";
  std::string_view core = version;
  std::string_view build;
  std::string_view pre;
  if (const std::size_t plus = core.find('+'); plus != std::string_view::npos) {
    build = core.substr(plus + 1);
    core = core.substr(0, plus);
    for (std::string_view id : split(build, '.')) {
      if (!semver_ident_chars(id)) return bad + ": bad build metadata";
    }
  }
  if (const std::size_t dash = core.find('-'); dash != std::string_view::npos) {
    pre = core.substr(dash + 1);
    core = core.substr(0, dash);
    for (std::string_view id : split(pre, '.')) {
      if (!semver_ident_chars(id)) return bad + ": bad pre-release identifier";
      const bool numeric = id.find_first_not_of("0123456789") == std::string_view::npos;
      if (numeric && !semver_numeric(id)) {
        return bad + ": numeric pre-release identifier " + quoted(id) + " has a leading zero";
      }
    }
  }
  const auto parts = split(core, '.');
  if (parts.size() != 3) return bad + ": expected MAJOR.MINOR.PATCH";
  for (std::string_view p : parts) {
    if (!semver_numeric(p)) {
      return bad + ": " + quoted(p) + " is not a number without leading zeros";
    }
  }
  return {};
}

std::optional<std::string> normalize_semver(std::string_view version) {
  // Vendor driver versions are dotted numbers ("535.104.05", "550.54", "6.8.5"); anything with a
  // suffix is kept only when the result is strict semver.
  std::string_view core = version;
  std::string_view rest;
  if (const std::size_t pos = core.find_first_of("-+"); pos != std::string_view::npos) {
    rest = core.substr(pos);
    core = core.substr(0, pos);
  }
  const auto parts = split(core, '.');
  if (parts.empty() || parts.size() > 3) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < 3; ++i) {
    std::string_view p = i < parts.size() ? parts[i] : std::string_view("0");
    if (p.empty() || p.find_first_not_of("0123456789") != std::string_view::npos) {
      return std::nullopt;
    }
    while (p.size() > 1 && p.front() == '0')
      p.remove_prefix(1);
    if (p.size() > 18) return std::nullopt;
    if (i > 0) out += '.';
    out += p;
  }
  out += rest;
  if (!check_semver(out).empty()) return std::nullopt;
  return out;
}

std::string format_binary_quantity(std::uint64_t bytes) {
  static constexpr std::array<const char*, 6> kSuffix = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  if (bytes == 0) return "0";
  std::uint64_t value = bytes;
  int unit = -1;
  while (unit + 1 < static_cast<int>(kSuffix.size()) && value % 1024 == 0) {
    value /= 1024;
    ++unit;
  }
  return std::to_string(value) + (unit < 0 ? "" : kSuffix[static_cast<std::size_t>(unit)]);
}

std::optional<std::uint64_t> parse_quantity(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && is_digit(text[digits]))
    ++digits;
  if (digits == 0) return std::nullopt;
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const auto d = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return std::nullopt;
    value = value * 10 + d;
  }
  const std::string_view suffix = text.substr(digits);
  struct Unit {
    std::string_view name;
    std::uint64_t base;
    int power;
  };
  static constexpr std::array<Unit, 13> kUnits = {{{"", 1, 0},
                                                   {"Ki", 1024, 1},
                                                   {"Mi", 1024, 2},
                                                   {"Gi", 1024, 3},
                                                   {"Ti", 1024, 4},
                                                   {"Pi", 1024, 5},
                                                   {"Ei", 1024, 6},
                                                   {"k", 1000, 1},
                                                   {"M", 1000, 2},
                                                   {"G", 1000, 3},
                                                   {"T", 1000, 4},
                                                   {"P", 1000, 5},
                                                   {"E", 1000, 6}}};
  for (const Unit& u : kUnits) {
    if (u.name != suffix) continue;
    for (int i = 0; i < u.power; ++i) {
      if (value > std::numeric_limits<std::uint64_t>::max() / u.base) return std::nullopt;
      value *= u.base;
    }
    return value;
  }
  return std::nullopt;
}

std::string check_rfc3339(std::string_view t) {
  const std::string bad = quoted(t) + " is not an RFC 3339 date-time (e.g. 2025-06-30T12:00:00Z)";
  auto digits = [&](std::size_t pos, std::size_t n) {
    if (pos + n > t.size()) return false;
    for (std::size_t i = pos; i < pos + n; ++i) {
      if (!is_digit(t[i])) return false;
    }
    return true;
  };
  auto num = [&](std::size_t pos, std::size_t n) {
    int v = 0;
    for (std::size_t i = pos; i < pos + n; ++i)
      v = v * 10 + (t[i] - '0');
    return v;
  };
  if (!digits(0, 4) || t.size() < 20 || t[4] != '-' || !digits(5, 2) || t[7] != '-' ||
      !digits(8, 2) || (t[10] != 'T' && t[10] != 't') || !digits(11, 2) || t[13] != ':' ||
      !digits(14, 2) || t[16] != ':' || !digits(17, 2)) {
    return bad;
  }
  const int month = num(5, 2);
  const int day = num(8, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31 || num(11, 2) > 23 || num(14, 2) > 59 ||
      num(17, 2) > 60) {
    return bad;
  }
  std::size_t pos = 19;
  if (pos < t.size() && t[pos] == '.') {
    ++pos;
    const std::size_t start = pos;
    while (pos < t.size() && is_digit(t[pos]))
      ++pos;
    if (pos == start) return bad;
  }
  if (pos < t.size() && (t[pos] == 'Z' || t[pos] == 'z') && pos + 1 == t.size()) return {};
  if (pos < t.size() && (t[pos] == '+' || t[pos] == '-') && pos + 6 == t.size() &&
      digits(pos + 1, 2) && t[pos + 3] == ':' && digits(pos + 4, 2) && num(pos + 1, 2) <= 23 &&
      num(pos + 4, 2) <= 59) {
    return {};
  }
  return bad;
}

}  // namespace nodetopo::exporters::k8s
