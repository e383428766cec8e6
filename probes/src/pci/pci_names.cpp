#include <array>

#include <nodetopo/probes/pci_names.hpp>

namespace nodetopo::probes {

namespace {

constexpr std::string_view kNvidia = "NVIDIA Corporation";
constexpr std::string_view kAmd = "Advanced Micro Devices, Inc. [AMD/ATI]";
constexpr std::string_view kHabana = "Habana Labs Ltd.";
constexpr std::string_view kMellanox = "Mellanox Technologies";
constexpr std::string_view kIntel = "Intel Corporation";
constexpr std::string_view kBroadcom = "Broadcom / LSI";

// Accelerators, switches and NICs that matter for topology and are newer than many distributions'
// pci.ids. Names follow the vendors' product names.
constexpr std::array kKnownDevices{
    KnownPciDevice{0x10de, 0x2330, kNvidia, "H100 SXM5 80GB"},
    KnownPciDevice{0x10de, 0x2331, kNvidia, "H100 PCIe"},
    KnownPciDevice{0x10de, 0x2321, kNvidia, "H100 NVL"},
    KnownPciDevice{0x10de, 0x2335, kNvidia, "H200 SXM 141GB"},
    KnownPciDevice{0x10de, 0x233b, kNvidia, "H200 NVL"},
    KnownPciDevice{0x10de, 0x2342, kNvidia, "GH200 120GB"},
    KnownPciDevice{0x10de, 0x2901, kNvidia, "B200"},
    KnownPciDevice{0x10de, 0x20b0, kNvidia, "A100 SXM4 40GB"},
    KnownPciDevice{0x10de, 0x20b2, kNvidia, "A100 SXM4 80GB"},
    KnownPciDevice{0x10de, 0x20b5, kNvidia, "A100 PCIe 80GB"},
    KnownPciDevice{0x10de, 0x20f1, kNvidia, "A100 PCIe 40GB"},
    KnownPciDevice{0x10de, 0x26b9, kNvidia, "L40S"},
    KnownPciDevice{0x10de, 0x27b8, kNvidia, "L4"},
    KnownPciDevice{0x10de, 0x1db8, kNvidia, "Tesla V100 SXM3 32GB"},
    KnownPciDevice{0x10de, 0x22a3, kNvidia, "NVSwitch (3rd gen)"},
    KnownPciDevice{0x10de, 0x1af1, kNvidia, "NVSwitch (2nd gen)"},
    KnownPciDevice{0x10de, 0x1ac2, kNvidia, "NVSwitch (1st gen)"},
    KnownPciDevice{0x1002, 0x74a1, kAmd, "Instinct MI300X"},
    KnownPciDevice{0x1002, 0x74a2, kAmd, "Instinct MI308X"},
    KnownPciDevice{0x1002, 0x74a5, kAmd, "Instinct MI325X"},
    KnownPciDevice{0x1002, 0x740f, kAmd, "Instinct MI210"},
    KnownPciDevice{0x1002, 0x740c, kAmd, "Instinct MI250X/MI250"},
    KnownPciDevice{0x1da3, 0x1020, kHabana, "Gaudi2 AI Training Accelerator"},
    KnownPciDevice{0x1da3, 0x1060, kHabana, "Gaudi3 AI Accelerator"},
    KnownPciDevice{0x15b3, 0x101b, kMellanox, "MT28908 Family [ConnectX-6]"},
    KnownPciDevice{0x15b3, 0x101d, kMellanox, "MT2892 Family [ConnectX-6 Dx]"},
    KnownPciDevice{0x15b3, 0x1021, kMellanox, "MT2910 Family [ConnectX-7]"},
    KnownPciDevice{0x15b3, 0x1023, kMellanox, "CX8 Family [ConnectX-8]"},
    KnownPciDevice{0x15b3, 0xa2dc, kMellanox, "MT43244 BlueField-3 integrated ConnectX-7"},
    KnownPciDevice{0x1000, 0xc030, kBroadcom, "PEX890xx PCIe Gen 5 Switch"},
    KnownPciDevice{0x8086, 0x0bd5, kIntel, "Ponte Vecchio XT (Data Center GPU Max 1550)"},
};

constexpr std::array<std::pair<std::uint16_t, std::string_view>, 7> kKnownVendors{{
    {0x10de, kNvidia},
    {0x1002, kAmd},
    {0x1da3, kHabana},
    {0x15b3, kMellanox},
    {0x8086, kIntel},
    {0x1000, kBroadcom},
    {0x10b5, "PLX Technology, Inc."},
}};

}  // namespace

std::optional<KnownPciDevice> find_known_pci_device(std::uint16_t vendor_id,
                                                    std::uint16_t device_id) {
  for (const KnownPciDevice& d : kKnownDevices) {
    if (d.vendor_id == vendor_id && d.device_id == device_id) return d;
  }
  return std::nullopt;
}

std::optional<std::string_view> find_known_pci_vendor(std::uint16_t vendor_id) {
  for (const auto& [id, name] : kKnownVendors) {
    if (id == vendor_id) return name;
  }
  return std::nullopt;
}

}  // namespace nodetopo::probes
