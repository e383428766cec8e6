// The mock NVML library's JSON fixture parser.
#include <string>
#include <string_view>

#include "fixture.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string error;
  (void)nodetopo::mock_nvml::parse_fixture(
      std::string_view(reinterpret_cast<const char*>(data), size), error);
  return 0;
}
