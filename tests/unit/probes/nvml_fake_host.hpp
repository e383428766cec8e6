// Small hand-written hosts for the NVML probe tests: a sysfs tree holding only the PCI functions a
// test names (enough for the PCI probe to make `pci/<bdf>` nodes) and the mock NVML fixture.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace nodetopo::test {

inline constexpr std::uint16_t kNvidia = 0x10de;
inline constexpr std::uint32_t k3dController = 0x030200;
inline constexpr std::uint32_t kBridgeOther = 0x068000;

/// The mock library the tests load by path, and its required-symbols-only twin.
std::filesystem::path mock_nvml_library();
std::filesystem::path mock_nvml_minimal_library();

class FakeHost {
 public:
  FakeHost();

  /// Adds PCI function `bdf` ("0000:1b:00.0") directly under its root bus, with sysfs identity
  /// files and a 64-byte config header, and the kernel's bus/pci/devices symlink.
  void add_pci_function(const std::string& bdf, std::uint16_t vendor, std::uint16_t device,
                        std::uint32_t class_code);
  /// An NVIDIA H100 SXM GPU / an NVSwitch gen3 at `bdf`.
  void add_gpu(const std::string& bdf) { add_pci_function(bdf, kNvidia, 0x2330, k3dController); }
  void add_nvswitch(const std::string& bdf) {
    add_pci_function(bdf, kNvidia, 0x22a3, kBridgeOther);
  }

  /// Writes the fixture to <root>/nodetopo-mock/nvml.json and points
  /// NODETOPO_MOCK_NVML_FIXTURE at it (the variable is unset again when the host dies).
  void set_fixture(const nlohmann::json& fixture);
  void set_fixture_text(const std::string& text);

  [[nodiscard]] const std::filesystem::path& root() const { return dir_.path(); }

  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;
  ~FakeHost();

 private:
  TempDir dir_;
};

/// One fixture device (index, bus id, H100 identity, no links yet).
nlohmann::json fixture_gpu(unsigned int index, const std::string& bus_id);
/// An active link entry.
nlohmann::json active_link(unsigned int link, const std::string& remote, const char* type);

/// The GPU and NVSwitch addresses of the HGX H100 fixture.
std::vector<std::string> hgx_gpus();
std::vector<std::string> hgx_switches();
/// 8 H100 GPUs x 18 NVLinks to 4 NVSwitches (links 0-4, 5-8, 9-12, 13-17 to switches 0..3, as on
/// a DGX H100), fabric cluster UUID and clique id on every GPU. Also fills the host's PCI tree.
nlohmann::json hgx_h100(FakeHost& host);

}  // namespace nodetopo::test
