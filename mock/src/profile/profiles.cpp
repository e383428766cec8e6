#include <algorithm>
#include <fstream>
#include <sstream>

#include <nodetopo/mock/profiles.hpp>

#include "profile/embedded_profiles.hpp"

namespace nodetopo::mock {

namespace {

std::string shipped_names() {
  std::string out;
  for (const ShippedProfile& p : shipped_profiles()) {
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

const ShippedProfile* find_shipped(std::string_view name) {
  for (const ShippedProfile& p : shipped_profiles()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// "gpus=64,nics=8" -> {gpus: 64, nics: 8}.
Result<std::map<std::string, std::string>> parse_overrides(std::string_view text,
                                                           std::string_view spec) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(pos, end - pos);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      return make_error(
          ErrorCode::kInvalid,
          "override '" + std::string(item) + "' is not key=value (e.g. synthetic:gpus=64,nics=64)",
          std::string(spec));
    }
    const std::string key(item.substr(0, eq));
    if (!out.emplace(key, std::string(item.substr(eq + 1))).second) {
      return make_error(ErrorCode::kInvalid, "override '" + key + "' is given twice",
                        std::string(spec));
    }
    pos = end + 1;
  }
  return out;
}

bool looks_like_file(std::string_view base) {
  return base.find('/') != std::string_view::npos || base.ends_with(".yaml") ||
         base.ends_with(".yml");
}

}  // namespace

const std::vector<ShippedProfile>& shipped_profiles() {
  static const std::vector<ShippedProfile> profiles = [] {
    std::vector<ShippedProfile> out;
    for (std::size_t i = 0; i < detail::kEmbeddedProfileCount; ++i) {
      out.push_back({detail::kEmbeddedProfiles[i].name, detail::kEmbeddedProfiles[i].yaml});
    }
    std::sort(out.begin(), out.end(),
              [](const ShippedProfile& a, const ShippedProfile& b) { return a.name < b.name; });
    return out;
  }();
  return profiles;
}

Result<std::vector<ProfileSummary>> list_profiles() {
  std::vector<ProfileSummary> out;
  for (const ShippedProfile& p : shipped_profiles()) {
    auto profile = parse_profile(p.yaml, std::string(p.name) + " (shipped profile)");
    if (!profile) return profile.error();
    out.push_back({profile->name, profile->description});
  }
  return out;
}

Result<Profile> load_profile(std::string_view spec) {
  std::string_view base = spec;
  std::map<std::string, std::string> overrides;
  // "NAME:k=v,..." — only when what follows the last ':' is an override list, so that file
  // names containing ':' still work.
  if (const std::size_t colon = spec.rfind(':');
      colon != std::string_view::npos && spec.find('=', colon) != std::string_view::npos) {
    base = spec.substr(0, colon);
    auto parsed = parse_overrides(spec.substr(colon + 1), spec);
    if (!parsed) return parsed.error();
    overrides = std::move(*parsed);
  }
  if (base.empty()) {
    return make_error(ErrorCode::kInvalid,
                      "empty profile name (shipped: " + shipped_names() + "; or give a .yaml file)",
                      std::string(spec));
  }
  const ShippedProfile* shipped = looks_like_file(base) ? nullptr : find_shipped(base);
  if (shipped != nullptr) {
    return parse_profile(shipped->yaml, std::string(base) + " (shipped profile)", overrides);
  }
  std::ifstream in{std::string(base), std::ios::binary};
  if (!in) {
    if (!looks_like_file(base)) {
      return make_error(ErrorCode::kNotFound,
                        "unknown profile (shipped: " + shipped_names() +
                            "; or give a profile file ending in .yaml)",
                        std::string(base));
    }
    return make_error(ErrorCode::kNotFound, "cannot read the profile file", std::string(base));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_profile(text.str(), std::string(base), overrides);
}

}  // namespace nodetopo::mock
