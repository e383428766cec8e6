// Every sysfs attribute and list parser, uevent and KFD properties, on the same bytes.
#include <string_view>

#include <nodetopo/probes/parsers.hpp>

#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace p = nodetopo::probes;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)p::trim(text);
  (void)p::parse_cpulist(text);
  (void)p::parse_cpumask(text);
  (void)p::parse_pci_address(text);
  (void)p::parse_link_speed(text);
  (void)p::parse_link_width(text);
  (void)p::parse_hex(text, 0xffff);
  (void)p::parse_int(text);
  (void)p::parse_uint(text);
  (void)p::parse_numa_node(text);
  (void)p::parse_distance_row(text);
  (void)p::parse_pci_uevent(text);
  (void)p::parse_key_value_lines(text);
  return 0;
}
