// The shipped profiles compiled into the library. The definitions are generated at build time
// from mock/profiles/*.yaml by mock/cmake/embed_profiles.cmake.
#pragma once

#include <cstddef>

namespace nodetopo::mock::detail {

struct EmbeddedProfile {
  const char* name;
  const char* yaml;
};

extern const EmbeddedProfile kEmbeddedProfiles[];
extern const std::size_t kEmbeddedProfileCount;

}  // namespace nodetopo::mock::detail
