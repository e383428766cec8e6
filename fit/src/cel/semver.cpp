// Semantic version parsing and precedence (semver.org 2.0.0 section 11).
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/base/strings.hpp>
#include <nodetopo/fit/semver.hpp>

namespace nodetopo::fit {

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

bool identifier_chars(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-';
  });
}

std::optional<std::uint64_t> number(std::string_view s, bool strict) {
  if (!all_digits(s) || s.size() > 19) return std::nullopt;
  if (strict && s.size() > 1 && s[0] == '0') return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s)
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  return v;
}

}  // namespace

std::optional<Semver> Semver::parse(std::string_view text, bool normalize) {
  Semver v;
  if (const auto plus = text.find('+'); plus != std::string_view::npos) {
    v.build = std::string(text.substr(plus + 1));
    for (auto id : split(v.build, '.'))
      if (!identifier_chars(id)) return std::nullopt;
    text = text.substr(0, plus);
  }
  std::string_view core = text;
  if (const auto dash = text.find('-'); dash != std::string_view::npos) {
    core = text.substr(0, dash);
    for (auto id : split(text.substr(dash + 1), '.')) {
      if (!identifier_chars(id)) return std::nullopt;
      if (all_digits(id) && id.size() > 1 && id[0] == '0') return std::nullopt;
      v.pre.emplace_back(id);
    }
  }
  if (normalize && !core.empty() && core[0] == 'v') core.remove_prefix(1);
  auto parts = split(core, '.');
  if (normalize) {
    while (parts.size() < 3)
      parts.emplace_back("0");
  }
  if (parts.size() != 3) return std::nullopt;
  const auto ma = number(parts[0], !normalize);
  const auto mi = number(parts[1], !normalize);
  const auto pa = number(parts[2], !normalize);
  if (!ma || !mi || !pa) return std::nullopt;
  v.major = *ma;
  v.minor = *mi;
  v.patch = *pa;
  return v;
}

std::string Semver::to_string() const {
  std::string s = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  for (std::size_t i = 0; i < pre.size(); ++i)
    s += (i == 0 ? "-" : ".") + pre[i];
  if (!build.empty()) s += "+" + build;
  return s;
}

int Semver::compare(const Semver& o) const {
  const auto cmp = [](std::uint64_t a, std::uint64_t b) { return a < b ? -1 : (a > b ? 1 : 0); };
  if (int c = cmp(major, o.major)) return c;
  if (int c = cmp(minor, o.minor)) return c;
  if (int c = cmp(patch, o.patch)) return c;
  // A version without pre-release identifiers ranks above one with them.
  if (pre.empty() || o.pre.empty())
    return pre.empty() == o.pre.empty() ? 0 : (pre.empty() ? 1 : -1);
  for (std::size_t i = 0; i < std::min(pre.size(), o.pre.size()); ++i) {
    const bool na = all_digits(pre[i]);
    const bool nb = all_digits(o.pre[i]);
    if (na && nb) {
      if (int c = cmp(std::stoull(pre[i]), std::stoull(o.pre[i]))) return c;
    } else if (na != nb) {
      return na ? -1 : 1;  // numeric identifiers rank below alphanumeric ones
    } else if (pre[i] != o.pre[i]) {
      return pre[i] < o.pre[i] ? -1 : 1;
    }
  }
  return cmp(pre.size(), o.pre.size());
}

}  // namespace nodetopo::fit
