// pci.ids: the name lookup over an arbitrary file, for ids a capture may hold — the scan, and
// the sorted search the system database takes (which must give up or answer, never read past the
// text).
#include <array>
#include <string_view>

#include <nodetopo/probes/pci_ids.hpp>

#include "fuzz_target.hpp"
#include "pci/pci_ids_scan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace p = nodetopo::probes;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::array<p::PciNameQuery, 3> queries = {p::PciNameQuery{0x10de, 0x2330, 0x0302},
                                                  p::PciNameQuery{0x8086, 0x1572, 0x0200},
                                                  p::PciNameQuery{0xffff, 0xffff, 0xffff}};
  (void)p::lookup_pci_names(text, queries);
  (void)p::detail::lookup_sorted_pci_names(text, queries);
  return 0;
}
