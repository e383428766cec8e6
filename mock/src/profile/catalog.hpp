// The catalog of device models a profile can name (`model: h100-sxm5`): PCI identity, link,
// driver and the vendor facts the fake host exposes. Values are those the real parts report.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/mock/profile.hpp>
#include <nodetopo/topology/pci.hpp>

namespace nodetopo::mock::detail {

/// KFD node properties of an AMD GPU model (sys/class/kfd/kfd/topology/nodes/N/properties).
struct KfdModel {
  std::uint32_t simd_count = 0;
  std::uint32_t gfx_target_version = 0;
  std::uint32_t array_count = 0;
  std::uint32_t simd_arrays_per_engine = 1;
  std::uint32_t cu_per_simd_array = 0;
  std::uint32_t simd_per_cu = 4;
  std::uint32_t num_sdma_engines = 2;
  std::uint32_t num_sdma_xgmi_engines = 0;
  std::uint32_t max_engine_clk_fcompute = 0;
  std::uint32_t num_xcc = 1;
  std::uint32_t fw_version = 0;
  std::uint32_t sdma_fw_version = 0;
  std::uint32_t pcie_bandwidth_mbs = 0;  ///< io_link max_bandwidth to the CPU node
  std::uint32_t xgmi_bandwidth_mbs = 0;  ///< per xGMI link
  std::uint32_t xgmi_weight = 15;
  std::string_view gfx_name{};  ///< "gfx942"
};

/// An endpoint model.
struct Model {
  std::string_view key{};
  DeviceType type = DeviceType::kOther;
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  std::uint16_t subsystem_vendor = 0;
  std::uint16_t subsystem_device = 0;
  std::uint32_t class_code = 0;  ///< for NICs: the class of Ethernet ports
  std::uint8_t revision = 0;
  std::string_view driver{};
  PcieLink link;
  std::string_view product{};
  std::uint64_t memory_bytes = 0;
  // NVIDIA
  std::uint32_t nvml_architecture = 0;  ///< NVML numbering: 6 Turing, 7 Ampere, 9 Hopper
  std::uint32_t nvlinks = 0;            ///< NVLinks of a GPU, ports of an NVSwitch
  // AMD
  const KfdModel* kfd = nullptr;
  // Network ports (NICs, Gaudi)
  std::string_view hca_type{};
  std::string_view fw_ver{};
  std::string_view board_id{};
  std::string_view rdma_prefix{};  ///< "mlx5_", "hbl_"
  bool port_per_function = true;   ///< ConnectX: one PCI function per port
  std::uint32_t default_rate_gbps = 0;
  std::string_view default_link_layer = "Ethernet";
  std::uint16_t vf_device = 0;
  std::string_view netdev_driver{};  ///< driver of the netdevs when not the PCI driver
  // NVMe
  std::uint64_t capacity_bytes = 0;
};

/// A bridge model: root port or switch port.
struct BridgeModel {
  std::string_view key{};
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  std::uint16_t subsystem_vendor = 0;
  std::uint16_t subsystem_device = 0;
  std::uint8_t revision = 0;
  PcieLink link;  ///< capability of the ports
};

const Model* find_model(std::string_view key);
const BridgeModel* find_switch_model(std::string_view key);
const BridgeModel* find_root_port_model(std::string_view key);

/// Keys of the models of one type, for "unknown model" messages.
std::string model_keys(DeviceType type);
std::string switch_model_keys();
std::string root_port_model_keys();

/// Class code of a NIC whose ports all run InfiniBand (0x0207xx) or not (0x0200xx).
std::uint32_t nic_class(const Model& model, bool infiniband);

}  // namespace nodetopo::mock::detail
