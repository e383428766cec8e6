// Pure parsers for the text formats of sysfs and procfs. No I/O: each takes the content of one
// file and returns a value or an Error whose message quotes the offending text. Callers add the
// path. All of them are strict: trailing garbage is an error, not silently ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/topology/cpu_set.hpp>
#include <nodetopo/topology/pci.hpp>

namespace nodetopo::probes {

/// Strips ASCII whitespace (and NULs, which some firmware attributes carry) from both ends.
std::string_view trim(std::string_view text);

/// Linux cpulist: "0-3,8,10-11" (also "" for no CPU, and stride form "0-31:2" is rejected).
Result<CpuSet> parse_cpulist(std::string_view text);
/// Linux cpumask: comma-separated 32-bit hex words, most significant first ("ff,ffffffff").
Result<CpuSet> parse_cpumask(std::string_view text);

/// PCI address "dddd:bb:dd.f"; the domain may have 4 to 8 hex digits.
Result<PciAddress> parse_pci_address(std::string_view text);

/// sysfs link speed: "8.0 GT/s PCIe", "2.5 GT/s", "16 GT/s"; "Unknown" (and the older "Unknown
/// speed") gives 0 (unknown). Anything else, the empty string included, is malformed.
/// Result in MT/s (8.0 GT/s -> 8000).
Result<std::uint32_t> parse_link_speed(std::string_view text);
/// sysfs link width: "16" (decimal lanes); "x16" is accepted too. 0 and 255 mean unknown.
Result<std::uint32_t> parse_link_width(std::string_view text);

/// A hex number as sysfs writes IDs: "0x10de". The "0x" prefix is optional; `max` bounds it.
Result<std::uint64_t> parse_hex(std::string_view text, std::uint64_t max);
/// A signed decimal integer ("-1", "42").
Result<std::int64_t> parse_int(std::string_view text);
/// An unsigned decimal integer.
Result<std::uint64_t> parse_uint(std::string_view text);

/// A sysfs NUMA node attribute: a node number, or nullopt for -1 (no locality reported).
Result<std::optional<std::uint32_t>> parse_numa_node(std::string_view text);

/// A NUMA distance row ("10 21 21 10"): whitespace-separated positive integers.
Result<std::vector<std::int64_t>> parse_distance_row(std::string_view text);

/// What a PCI function's `uevent` file says: the kernel writes class, ids and bound driver there
/// (pci_uevent() and the driver core), the same values as the `class`, `vendor`, `device`,
/// `subsystem_*` attributes and the `driver` link, in one file.
struct PciUevent {
  std::uint32_t class_code = 0;
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::optional<std::uint16_t> subsystem_vendor_id;
  std::optional<std::uint16_t> subsystem_device_id;
  std::string driver;     ///< empty when no driver is bound
  std::string slot_name;  ///< PCI_SLOT_NAME ("0000:17:00.0"); empty when absent
};

/// Parses a PCI `uevent` file ("PCI_CLASS=30200", "PCI_ID=10DE:2330", ...). PCI_CLASS and PCI_ID
/// are required; other keys the kernel may add (MODALIAS, OF_*) are ignored.
Result<PciUevent> parse_pci_uevent(std::string_view text);

/// "key value" lines such as KFD `properties` files, in file order, as views into `text` (a KFD
/// tree of thousands of such files is parsed without a string per key and value).
Result<std::vector<std::pair<std::string_view, std::string_view>>> parse_key_value_lines(
    std::string_view text);

}  // namespace nodetopo::probes
