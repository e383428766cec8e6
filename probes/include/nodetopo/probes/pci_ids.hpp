// Names from the pci.ids database (vendor, device, class), looked up for a known set of IDs in a
// single pass over the file's text.
//
// Why not libpci's pci_lookup_name(): its first call parses all ~40,000 entries of pci.ids into a
// hash table, which costs more than the rest of PCI discovery together (about 20 ms). A discovery
// needs a few dozen names; one pass over the file finds them in a few hundred microseconds: it
// stops only at the lines that can matter (vendor and class lines, and inside the blocks asked
// for the lines whose ID starts with a digit asked for), found 64 or 128 bytes a step with SSE2
// or AVX2 where the CPU has them. The results are the same strings (tests compare them with
// libpci's), and on any text the same as reading it line by line (tests compare that too). The
// system's file is searched in its order first (lookup_pci_names(const PciIdsFile&)).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nodetopo::probes {

struct PciNameQuery {
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint16_t class_id = 0;  ///< base class << 8 | subclass
};

/// The names found for a set of queries. Missing names are absent from the maps.
struct PciNames {
  std::map<std::uint16_t, std::string> vendors;
  std::map<std::pair<std::uint16_t, std::uint16_t>, std::string> devices;
  std::map<std::uint16_t, std::string> classes;  ///< by class_id, formatted as lspci does

  [[nodiscard]] std::string vendor(std::uint16_t vendor_id) const;
  [[nodiscard]] std::string device(std::uint16_t vendor_id, std::uint16_t device_id) const;
  [[nodiscard]] std::string class_name(std::uint16_t class_id) const;
};

/// Scans pci.ids text for the names of `queries`. A class whose subclass is not listed gets its
/// base class name with the number, "Display controller [0380]", as libpci formats it. Any text
/// is read (unsorted, either case of hex, CRLF, garbage, no final newline); a name listed twice
/// takes its last line.
PciNames lookup_pci_names(std::string_view ids_text, std::span<const PciNameQuery> queries);

class PciIdsFile;

/// The names of `queries` in the file. A file of 128 KiB or more (the system's database: 1.3 MB)
/// is first searched in its own order — pci.ids lists its vendors in increasing order of ID
/// ("Please keep sorted", its header says), each vendor's devices in increasing order too, and
/// its classes after them — by a binary search over the vendors, then one among the devices of
/// each vendor asked for: it reads what lies around some twenty points per name and crosses the
/// blocks of the vendors asked for to their ends, instead of reading the whole file
/// (bench/micro's BM_PciIdsLookup). Where that search meets a line the order does not allow
/// (vendor IDs out of order where it compares them, a vendor listed again after its block, a
/// stray top-level line among the vendors), it gives up and the file is scanned as
/// lookup_pci_names(text, queries) does, giving the pages already scanned back to the kernel as
/// it goes (madvise), so that the file does not count in the peak RSS; device IDs out of order
/// where it compares them make it read that vendor's block line by line. On a file in that order
/// both give the same names (tests compare them on the system's database and generated ones); on
/// one out of order where the search does not look, it may find fewer, or the first of two
/// listings of a device where the scan takes the last, which is why a file edited by hand below
/// 128 KiB is always scanned.
PciNames lookup_pci_names(const PciIdsFile& file, std::span<const PciNameQuery> queries);

/// The pci.ids of this system (the tool's own data, not the host root's), mapped read-only: the
/// first readable of $NODETOPO_PCI_IDS, /usr/share/misc/pci.ids, /usr/share/hwdata/pci.ids,
/// /usr/share/pci.ids. Mapping instead of reading spares copying 1.3 MB on every discovery.
class PciIdsFile {
 public:
  /// nullopt when none is readable; names then come from the project's own table only.
  static std::optional<PciIdsFile> open_system();
  ~PciIdsFile();
  PciIdsFile(PciIdsFile&& other) noexcept;
  PciIdsFile& operator=(PciIdsFile&& other) noexcept;
  PciIdsFile(const PciIdsFile&) = delete;
  PciIdsFile& operator=(const PciIdsFile&) = delete;

  [[nodiscard]] std::string_view text() const { return {static_cast<const char*>(data_), size_}; }

 private:
  PciIdsFile(void* data, std::size_t size) : data_(data), size_(size) {}
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace nodetopo::probes
