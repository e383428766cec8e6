#include "profile/catalog.hpp"

#include <array>

namespace nodetopo::mock::detail {

namespace {

constexpr PcieLink kGen3x16{8000, 16};
constexpr PcieLink kGen4x16{16000, 16};
constexpr PcieLink kGen4x4{16000, 4};
constexpr PcieLink kGen4x2{16000, 2};
constexpr PcieLink kGen5x16{32000, 16};

// MI300X in SPX mode: 304 CUs over 8 XCDs, one KFD node per GPU.
constexpr KfdModel kMi300xKfd{.simd_count = 1216,
                              .gfx_target_version = 90402,
                              .array_count = 32,
                              .simd_arrays_per_engine = 1,
                              .cu_per_simd_array = 10,
                              .simd_per_cu = 4,
                              .num_sdma_engines = 2,
                              .num_sdma_xgmi_engines = 14,
                              .max_engine_clk_fcompute = 2100,
                              .num_xcc = 8,
                              .fw_version = 151,
                              .sdma_fw_version = 19,
                              .pcie_bandwidth_mbs = 64000,
                              .xgmi_bandwidth_mbs = 64000,
                              .xgmi_weight = 15,
                              .gfx_name = "gfx942"};

const std::array kModels{
    // NVIDIA GPUs: NVML reports memory in bytes; names are NVML's.
    Model{.key = "h100-sxm5",
          .type = DeviceType::kGpu,
          .vendor = pci_vendor::kNvidia,
          .device = 0x2330,
          .subsystem_vendor = pci_vendor::kNvidia,
          .subsystem_device = 0x16c1,
          .class_code = 0x030200,
          .revision = 0xa1,
          .driver = "nvidia",
          .link = kGen5x16,
          .product = "NVIDIA H100 80GB HBM3",
          .memory_bytes = 85520809984ULL,
          .nvml_architecture = 9,
          .nvlinks = 18},
    Model{.key = "h200-sxm5",
          .type = DeviceType::kGpu,
          .vendor = pci_vendor::kNvidia,
          .device = 0x2335,
          .subsystem_vendor = pci_vendor::kNvidia,
          .subsystem_device = 0x18be,
          .class_code = 0x030200,
          .revision = 0xa1,
          .driver = "nvidia",
          .link = kGen5x16,
          .product = "NVIDIA H200",
          .memory_bytes = 150754820096ULL,
          .nvml_architecture = 9,
          .nvlinks = 18},
    Model{.key = "a100-sxm4-80gb",
          .type = DeviceType::kGpu,
          .vendor = pci_vendor::kNvidia,
          .device = 0x20b2,
          .subsystem_vendor = pci_vendor::kNvidia,
          .subsystem_device = 0x1463,
          .class_code = 0x030200,
          .revision = 0xa1,
          .driver = "nvidia",
          .link = kGen4x16,
          .product = "NVIDIA A100-SXM4-80GB",
          .memory_bytes = 85899345920ULL,
          .nvml_architecture = 7,
          .nvlinks = 12},
    Model{.key = "a100-sxm4-40gb",
          .type = DeviceType::kGpu,
          .vendor = pci_vendor::kNvidia,
          .device = 0x20b0,
          .subsystem_vendor = pci_vendor::kNvidia,
          .subsystem_device = 0x134f,
          .class_code = 0x030200,
          .revision = 0xa1,
          .driver = "nvidia",
          .link = kGen4x16,
          .product = "NVIDIA A100-SXM4-40GB",
          .memory_bytes = 42949672960ULL,
          .nvml_architecture = 7,
          .nvlinks = 12},
    Model{.key = "t4",
          .type = DeviceType::kGpu,
          .vendor = pci_vendor::kNvidia,
          .device = 0x1eb8,
          .subsystem_vendor = pci_vendor::kNvidia,
          .subsystem_device = 0x12a2,
          .class_code = 0x030200,
          .revision = 0xa1,
          .driver = "nvidia",
          .link = kGen3x16,
          .product = "Tesla T4",
          .memory_bytes = 16106127360ULL,
          .nvml_architecture = 6,
          .nvlinks = 0},
    // AMD
    Model{.key = "mi300x",
          .type = DeviceType::kGpu,
          .vendor = pci_vendor::kAmd,
          .device = 0x74a1,
          .subsystem_vendor = pci_vendor::kAmd,
          .subsystem_device = 0x74a1,
          .class_code = 0x120000,
          .revision = 0x00,
          .driver = "amdgpu",
          .link = kGen5x16,
          .product = "AMD Instinct MI300X",
          .memory_bytes = 192ULL << 30,
          .kfd = &kMi300xKfd},
    // Intel Gaudi: the scale-out Ethernet ports are netdevs of the accelerator's function.
    Model{.key = "gaudi3",
          .type = DeviceType::kAccelerator,
          .vendor = pci_vendor::kHabana,
          .device = 0x1060,
          .subsystem_vendor = pci_vendor::kHabana,
          .subsystem_device = 0x1060,
          .class_code = 0x120000,
          .revision = 0x00,
          .driver = "habanalabs",
          .link = kGen5x16,
          .product = "Intel Gaudi 3 AI Accelerator",
          .memory_bytes = 128ULL << 30,
          .rdma_prefix = "hbl_",
          .port_per_function = false,
          .default_rate_gbps = 200,
          .default_link_layer = "Ethernet",
          .netdev_driver = "habanalabs_en"},
    Model{.key = "gaudi2",
          .type = DeviceType::kAccelerator,
          .vendor = pci_vendor::kHabana,
          .device = 0x1020,
          .subsystem_vendor = pci_vendor::kHabana,
          .subsystem_device = 0x1020,
          .class_code = 0x120000,
          .revision = 0x00,
          .driver = "habanalabs",
          .link = kGen4x16,
          .product = "Habana Gaudi2 AI Training Accelerator",
          .memory_bytes = 96ULL << 30,
          .rdma_prefix = "hbl_",
          .port_per_function = false,
          .default_rate_gbps = 100,
          .default_link_layer = "Ethernet",
          .netdev_driver = "habanalabs_en"},
    // NVSwitch: a bridge-class device (0x0680) managed by nvidia-nvswitch.
    Model{.key = "nvswitch-gen3",
          .type = DeviceType::kNvSwitch,
          .vendor = pci_vendor::kNvidia,
          .device = 0x22a3,
          .subsystem_vendor = pci_vendor::kNvidia,
          .subsystem_device = 0x1796,
          .class_code = 0x068000,
          .revision = 0xa1,
          .driver = "nvidia-nvswitch",
          .link = kGen4x2,
          .product = "NVIDIA NVSwitch (third generation)",
          .nvlinks = 64},
    Model{.key = "nvswitch-gen2",
          .type = DeviceType::kNvSwitch,
          .vendor = pci_vendor::kNvidia,
          .device = 0x1af1,
          .subsystem_vendor = pci_vendor::kNvidia,
          .subsystem_device = 0x1609,
          .class_code = 0x068000,
          .revision = 0xa1,
          .driver = "nvidia-nvswitch",
          .link = kGen4x2,
          .product = "NVIDIA NVSwitch (second generation)",
          .nvlinks = 36},
    // NICs: class 0x020000 for Ethernet ports, 0x020700 when they run InfiniBand.
    Model{.key = "cx7",
          .type = DeviceType::kNic,
          .vendor = pci_vendor::kMellanox,
          .device = 0x1021,
          .subsystem_vendor = pci_vendor::kMellanox,
          .subsystem_device = 0x0041,
          .class_code = 0x020000,
          .revision = 0x00,
          .driver = "mlx5_core",
          .link = kGen5x16,
          .product = "NVIDIA ConnectX-7",
          .hca_type = "MT4129",
          .fw_ver = "28.39.1002",
          .board_id = "MT_0000000838",
          .rdma_prefix = "mlx5_",
          .port_per_function = true,
          .default_rate_gbps = 400,
          .default_link_layer = "InfiniBand",
          .vf_device = 0x101e},
    Model{.key = "cx6",
          .type = DeviceType::kNic,
          .vendor = pci_vendor::kMellanox,
          .device = 0x101b,
          .subsystem_vendor = pci_vendor::kMellanox,
          .subsystem_device = 0x0007,
          .class_code = 0x020000,
          .revision = 0x00,
          .driver = "mlx5_core",
          .link = kGen4x16,
          .product = "NVIDIA ConnectX-6",
          .hca_type = "MT4123",
          .fw_ver = "20.35.1012",
          .board_id = "MT_0000000222",
          .rdma_prefix = "mlx5_",
          .port_per_function = true,
          .default_rate_gbps = 200,
          .default_link_layer = "InfiniBand",
          .vf_device = 0x101c},
    Model{.key = "bf3",
          .type = DeviceType::kNic,
          .vendor = pci_vendor::kMellanox,
          .device = 0xa2dc,
          .subsystem_vendor = pci_vendor::kMellanox,
          .subsystem_device = 0x0051,
          .class_code = 0x020000,
          .revision = 0x01,
          .driver = "mlx5_core",
          .link = kGen5x16,
          .product = "NVIDIA BlueField-3",
          .hca_type = "MT41692",
          .fw_ver = "32.39.1002",
          .board_id = "MT_0000000884",
          .rdma_prefix = "mlx5_",
          .port_per_function = true,
          .default_rate_gbps = 400,
          .default_link_layer = "Ethernet",
          .vf_device = 0x101e},
    // NVMe
    Model{.key = "pm9a3",
          .type = DeviceType::kNvme,
          .vendor = 0x144d,
          .device = 0xa80a,
          .subsystem_vendor = 0x144d,
          .subsystem_device = 0xa813,
          .class_code = 0x010802,
          .revision = 0x00,
          .driver = "nvme",
          .link = kGen4x4,
          .product = "SAMSUNG MZQL23T8HCLS-00A07",
          .capacity_bytes = 3840755982336ULL},
    Model{.key = "pm1733",
          .type = DeviceType::kNvme,
          .vendor = 0x144d,
          .device = 0xa824,
          .subsystem_vendor = 0x144d,
          .subsystem_device = 0xa809,
          .class_code = 0x010802,
          .revision = 0x00,
          .driver = "nvme",
          .link = kGen4x4,
          .product = "SAMSUNG MZWLJ3T8HBLS-00007",
          .capacity_bytes = 3840755982336ULL},
};

const std::array kSwitchModels{
    BridgeModel{"pex89000", 0x1000, 0xc030, 0x1000, 0xa064, 0xb0, kGen5x16},
    BridgeModel{"pex88000", 0x1000, 0xc010, 0x1000, 0xa064, 0xb0, kGen4x16},
};

const std::array kRootPortModels{
    BridgeModel{"intel-spr", 0x8086, 0x352a, 0x8086, 0x0000, 0x04, kGen5x16},
    BridgeModel{"amd-milan", 0x1022, 0x1483, 0x1022, 0x1453, 0x00, kGen4x16},
    BridgeModel{"amd-genoa", 0x1022, 0x14ab, 0x1022, 0x14ab, 0x01, kGen5x16},
};

template <class Array>
auto find_key(const Array& array, std::string_view key) -> decltype(&array[0]) {
  for (const auto& entry : array) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

template <class Array>
std::string join_keys(const Array& array) {
  std::string out;
  for (const auto& entry : array) {
    if (!out.empty()) out += ", ";
    out += entry.key;
  }
  return out;
}

}  // namespace

const Model* find_model(std::string_view key) {
  return find_key(kModels, key);
}
const BridgeModel* find_switch_model(std::string_view key) {
  return find_key(kSwitchModels, key);
}
const BridgeModel* find_root_port_model(std::string_view key) {
  return find_key(kRootPortModels, key);
}

std::string model_keys(DeviceType type) {
  std::string out;
  for (const Model& m : kModels) {
    if (m.type != type) continue;
    if (!out.empty()) out += ", ";
    out += m.key;
  }
  return out.empty() ? "none" : out;
}

std::string switch_model_keys() {
  return join_keys(kSwitchModels);
}
std::string root_port_model_keys() {
  return join_keys(kRootPortModels);
}

std::uint32_t nic_class(const Model& model, bool infiniband) {
  if (model.type != DeviceType::kNic) return model.class_code;
  return infiniband ? 0x020700 : 0x020000;
}

}  // namespace nodetopo::mock::detail
