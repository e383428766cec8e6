// Mock profiles: the YAML parser and validator, then rendering whatever it accepts (a profile
// that parses must render or fail with a message, never throw).
#include <string_view>

#include <nodetopo/mock/builder.hpp>
#include <nodetopo/mock/profile.hpp>

#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto profile = nodetopo::mock::parse_profile(text, "fuzz.yaml");
  if (profile) (void)nodetopo::mock::render_host(*profile);
  return 0;
}
