// Semantic versions (semver.org 2.0.0, strict: MAJOR.MINOR.PATCH[-PRE][+BUILD], no leading
// zeros), for the Kubernetes CEL semver library and DRA `version` attributes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nodetopo::fit {

struct Semver {
  std::uint64_t major = 0;
  std::uint64_t minor = 0;
  std::uint64_t patch = 0;
  std::vector<std::string> pre;  ///< pre-release identifiers
  std::string build;             ///< ignored by comparison

  /// Strict parse; with `normalize`, a leading "v", missing minor/patch and leading zeros are
  /// accepted (the library's semver(s, true)).
  static std::optional<Semver> parse(std::string_view text, bool normalize = false);
  [[nodiscard]] std::string to_string() const;
  /// -1, 0, 1 by semver precedence (build metadata ignored).
  [[nodiscard]] int compare(const Semver& other) const;
  bool operator==(const Semver& o) const { return compare(o) == 0; }
};

}  // namespace nodetopo::fit
