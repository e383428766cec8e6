// The mock NVML library's view of its JSON fixture (format: docs/mock-nvml.md).
//
// Plain structs in one arena, no C++ runtime behind them (memory.hpp says why); the handle NVML
// gives out for device i is the address of devices.data[i].
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "memory.hpp"

namespace nodetopo::mock_nvml {

/// A PCI address as the fixture gives it ("0000:1b:00.0"; 4 to 8 hex digits of domain).
struct BusId {
  std::uint32_t domain = 0;
  std::uint32_t bus = 0;       // 0..0xff
  std::uint32_t device = 0;    // 0..0x1f
  std::uint32_t function = 0;  // 0..7
  bool operator==(const BusId&) const = default;
};

struct Fabric {
  std::array<unsigned char, 16> cluster_uuid{};
  std::uint32_t clique_id = 0;
  unsigned char state = 3;  // NVML_GPU_FABRIC_STATE_COMPLETED
  int status = 0;           // nvmlReturn_t
};

struct NvLink {
  std::uint32_t number = 0;  // the link index
  bool active = false;
  std::optional<BusId> remote;     // active links only
  std::optional<int> remote_type;  // nvmlIntNvLinkDeviceType_t value
  // The PCI ids NVML reports for the remote end: those of the fixture device at that address
  // (the last one by index), 0 when none is (NVSwitches are not NVML devices). Resolved once
  // when the fixture is loaded.
  std::uint32_t remote_pci_device_id = 0;
  std::uint32_t remote_pci_subsystem_id = 0;
};

struct FailEntry {
  Str function;  // an NVML function name
  int code = 0;  // the nvmlReturn_t it answers
};

/// NVML function name -> nvmlReturn_t (fault injection): sorted by name, each name once.
struct FailMap {
  Array<FailEntry> entries;
  /// The code injected for `function` (a C string), or nullptr.
  const int* find(const char* function) const;
};

struct Device {
  std::uint32_t index = 0;
  BusId bus_id;
  std::uint32_t pci_device_id = 0;
  std::uint32_t pci_subsystem_id = 0;
  std::optional<Str> uuid;
  std::optional<Str> name;
  std::optional<Str> serial;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<std::uint32_t> architecture;
  std::optional<std::uint32_t> numa_node;
  std::optional<Fabric> fabric;
  Array<NvLink> nvlinks;  // sorted by number, each number once
  FailMap fail;

  /// The link of index `number`, or nullptr when this GPU has none.
  const NvLink* find_link(std::uint32_t number) const;
};

struct Fixture {
  std::optional<Str> driver_version;
  std::optional<int> cuda_driver_version;
  FailMap fail;
  Array<Device> devices;  // position == index
  Arena arena;            // holds every string and array above
};

/// Parses and validates a fixture. Returns a fixture to release with free_fixture(), or nullptr
/// with `error` set (so that the library can behave like a host without a driver): the field and
/// what is wrong with it ("devices[3].pci_bus_id: ..."), or "not valid JSON: line L, column C:
/// ..." for text that is not JSON. A syntax error anywhere is reported before any field's.
Fixture* parse_fixture(const char* text, std::size_t size, Text& error);

void free_fixture(Fixture* fixture);

/// Parses "dddd:bb:dd.f" (case-insensitive, 4-8 digit domain).
std::optional<BusId> parse_bus_id(Str text);

}  // namespace nodetopo::mock_nvml
