// The profiles shipped inside the library (mock/profiles/*.yaml, embedded at build time) and
// the loader that resolves a user's PROFILE|FILE argument.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/mock/profile.hpp>

namespace nodetopo::mock {

/// A shipped profile: its name and the YAML text compiled into the library.
struct ShippedProfile {
  std::string_view name;
  std::string_view yaml;
};

/// Every shipped profile, sorted by name.
const std::vector<ShippedProfile>& shipped_profiles();

/// Name and one-line description of each shipped profile (parsed from the embedded YAML).
struct ProfileSummary {
  std::string name;
  std::string description;
};
Result<std::vector<ProfileSummary>> list_profiles();

/// Loads a profile from a spec:
///   "dgx-h100"                a shipped profile
///   "path/to/host.yaml"       a file (any argument with a '/' or a .yaml/.yml suffix)
///   "synthetic:gpus=64,nics=64"  either of the above plus `synthetic` parameter overrides
/// Errors name the spec (unknown profile: the list of shipped names) or the field at fault.
Result<Profile> load_profile(std::string_view spec);

}  // namespace nodetopo::mock
