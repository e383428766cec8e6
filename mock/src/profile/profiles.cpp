#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

namespace {

// The largest profile read: the shipped ones are a few KiB.
constexpr std::size_t kMaxProfileBytes = std::size_t{4} << 20;

// A profile file's text: only a regular file of bounded size (a FIFO would block, /dev/zero
// fill memory).
Result<std::string> read_profile_file(int fd, const std::string& file) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return make_error(ErrorCode::kInvalid,
                      "not a regular file (a FIFO, device or directory): not read as a profile",
                      file);
  }
  if (static_cast<std::uint64_t>(st.st_size) > kMaxProfileBytes) {
    return make_error(ErrorCode::kInvalid, "profile file larger than 4 MiB: not read", file);
  }
  std::string text;
  std::array<char, 65536> buf{};
  while (true) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return make_error(ErrorCode::kIo, std::string("cannot read: ") + std::strerror(errno), file);
    }
    if (n == 0) break;
    text.append(buf.data(), static_cast<std::size_t>(n));
    if (text.size() > kMaxProfileBytes) {
      return make_error(ErrorCode::kInvalid, "profile file larger than 4 MiB: not read", file);
    }
  }
  return text;
}

}  // namespace

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
  const std::string file(base);
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT && !looks_like_file(base)) {
      return make_error(ErrorCode::kNotFound,
                        "unknown profile (shipped: " + shipped_names() +
                            "; or give a profile file ending in .yaml)",
                        file);
    }
    return make_error(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                      std::string("cannot read the profile file: ") + std::strerror(errno), file);
  }
  auto text = read_profile_file(fd, file);
  ::close(fd);
  if (!text) return text.error();
  return parse_profile(*text, file, overrides);
}

}  // namespace nodetopo::mock
