// The node's export settings (etc/nodetopo/export.yaml).
#include <string_view>

#include <nodetopo/exporters/export_config.hpp>

#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)nodetopo::exporters::parse_export_config(
      std::string_view(reinterpret_cast<const char*>(data), size), "export.yaml");
  return 0;
}
