// The mock NVML library's view of its JSON fixture (format: docs/mock-nvml.md).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  bool active = false;
  std::optional<BusId> remote;     // active links only
  std::optional<int> remote_type;  // nvmlIntNvLinkDeviceType_t value
  // The PCI ids NVML reports for the remote end: those of the fixture device at that address
  // (the last one by index), 0 when none is (NVSwitches are not NVML devices). Resolved once
  // when the fixture is loaded.
  std::uint32_t remote_pci_device_id = 0;
  std::uint32_t remote_pci_subsystem_id = 0;
};

/// NVML function name -> nvmlReturn_t; looked up with the C string of the call, no copy.
using FailMap = std::map<std::string, int, std::less<>>;

struct Device {
  std::uint32_t index = 0;
  BusId bus_id;
  std::uint32_t pci_device_id = 0;
  std::uint32_t pci_subsystem_id = 0;
  std::optional<std::string> uuid;
  std::optional<std::string> name;
  std::optional<std::string> serial;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<std::uint32_t> architecture;
  std::optional<std::uint32_t> numa_node;
  std::optional<Fabric> fabric;
  std::map<std::uint32_t, NvLink> nvlinks;  // by link index
  FailMap fail;
};

struct Fixture {
  std::optional<std::string> driver_version;
  std::optional<int> cuda_driver_version;
  FailMap fail;
  std::vector<Device> devices;  // position == index
};

/// Parses (with simdjson) and validates a fixture. Returns nullopt and sets `error` on any
/// problem, so that the library can behave like a host without a driver. `error` names the field
/// ("devices[3].pci_bus_id: ..."), or is simdjson's message for text that is not JSON.
std::optional<Fixture> parse_fixture(std::string_view text, std::string& error);

/// Parses "dddd:bb:dd.f" (case-insensitive, 4-8 digit domain).
std::optional<BusId> parse_bus_id(std::string_view text);

}  // namespace nodetopo::mock_nvml
