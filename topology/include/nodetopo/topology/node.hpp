// Node kinds of the topology tree and their typed payloads.
//
// The tree is containment: Machine > Package > NUMA node > PCI host bridge > PCI bridges/switch
// ports > PCI functions > OS-level devices (accelerator, NVSwitch, network interface, RDMA device).
// Where hardware does not nest that way (a NUMA node spanning two packages, a host bridge of
// unknown locality) a node hangs under the nearest container that does hold it, down to the
// Machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nodetopo/topology/cpu_set.hpp>
#include <nodetopo/topology/pci.hpp>

namespace nodetopo {

/// Index of a node inside one Topology (or TopologyBuilder). Not stable across runs: use Node::id.
using NodeIndex = std::uint32_t;
inline constexpr NodeIndex kNoNode = UINT32_MAX;

enum class NodeKind : std::uint8_t {
  kMachine,
  kPackage,
  kNumaNode,
  kHostBridge,
  kPciBridge,
  kPciDevice,
  kAccelerator,
  kNvSwitch,
  kNetDevice,
  kRdmaDevice,
};

/// "machine", "package", "numa_node", "host_bridge", "pci_bridge", "pci_device", "accelerator",
/// "nvswitch", "net_device", "rdma_device" (the `kind` field of the JSON model).
std::string_view to_string(NodeKind kind);

struct MachineInfo {
  std::string architecture;  ///< "x86_64", "aarch64", "ppc64le"
  std::string product_name;  ///< DMI product name, where the platform has DMI
  std::string board_vendor;  ///< DMI board vendor
  /// DMI system vendor. Not in the JSON model: the instance labels show it as the platform.
  std::string sys_vendor;
  std::string os_release;          ///< kernel release of the described host
  std::uint64_t memory_bytes = 0;  ///< total memory of all NUMA nodes
};

struct PackageInfo {
  std::uint32_t os_index = 0;
  CpuSet cpus;
  std::string cpu_vendor;  ///< "GenuineIntel", "AuthenticAMD", ...
  std::string cpu_model;   ///< marketing model string from /proc/cpuinfo
};

struct NumaInfo {
  std::uint32_t os_index = 0;
  CpuSet cpus;  ///< empty for memory-only nodes (GPU or CXL memory)
  std::uint64_t memory_bytes = 0;
  std::string subtype;  ///< kind of special memory ("GPUMemory", "CXL-DRAM"); empty for DRAM
  std::optional<PciAddress> device;  ///< the device whose memory this node is (coherent GPUs)
};

struct HostBridgeInfo {
  std::uint32_t domain = 0;
  std::uint8_t bus = 0;
  std::string root_name;                   ///< "pci0000:17": the first component under sys/devices
  std::optional<std::uint32_t> numa_node;  ///< locality of the devices below it, when known
};

/// A PCI function: either a bridge (switch port, root port) or a device.
struct PciFunctionInfo {
  PciAddress address;
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint16_t subsystem_vendor_id = 0;
  std::uint16_t subsystem_device_id = 0;
  std::uint32_t class_code = 0;          ///< 24-bit: base class, subclass, programming interface
  std::optional<std::uint8_t> revision;  ///< unknown without `revision` and config space
  std::string vendor_name;  ///< from the project's table or pci.ids; empty when unknown
  std::string device_name;
  std::string class_name;                  ///< "Ethernet controller", "3D controller" (pci.ids)
  std::string driver;                      ///< bound kernel driver, empty when none
  std::optional<std::uint32_t> numa_node;  ///< never -1: unknown is nullopt
  CpuSet local_cpus;
  PcieLink link_current;
  PcieLink link_max;
  std::optional<PciePortType> port_type;        ///< from the PCIe capability, when readable
  std::optional<std::uint8_t> secondary_bus;    ///< bridges only
  std::optional<std::uint8_t> subordinate_bus;  ///< bridges only
  std::string sysfs_path;  ///< resolved, root-relative: "sys/devices/pci0000:17/0000:17:00.0"
  std::string pcie_root;   ///< "pci0000:17"
  bool is_virtual_function = false;             ///< an SR-IOV VF (has a physfn link)
  std::optional<PciAddress> physical_function;  ///< the PF of a VF
  std::optional<std::uint32_t> sriov_total_vfs;
  std::optional<std::uint32_t> sriov_num_vfs;
};

enum class AcceleratorVendor : std::uint8_t { kNvidia, kAmd, kIntel, kHabana, kOther };
std::string_view to_string(AcceleratorVendor vendor);

/// An accelerator (GPU, AI accelerator) or an NVSwitch, hanging under its PCI function.
struct AcceleratorInfo {
  AcceleratorVendor vendor = AcceleratorVendor::kOther;
  std::string product;       ///< "NVIDIA H100 80GB HBM3", "AMD Instinct MI300X"
  std::string architecture;  ///< "hopper", "gfx942", ...
  std::string uuid;          ///< vendor UUID when known (NVML, KFD unique_id)
  std::string serial;
  std::uint64_t memory_bytes = 0;
  std::string driver_version;
  std::optional<std::uint32_t> index;  ///< vendor device index (NVML index, KFD node id)
  std::string fabric_cluster_uuid;     ///< NVLink fabric (NVL domain) cluster UUID
  std::optional<std::uint32_t> fabric_clique_id;
  std::uint32_t partitions = 0;  ///< compute partitions (AMD CPX/DPX), 0 when not partitioned
  std::string xgmi_hive_id;      ///< AMD xGMI hive (KFD hive_id, 16 hex digits); empty when none
};

struct NetDeviceInfo {
  std::string name;  ///< interface name, e.g. "ens1f0np0"
  std::string mac;
  std::optional<std::uint32_t> mtu;
  std::optional<std::uint64_t> speed_mbps;  ///< absent when the link is down or unknown
  std::string operstate;                    ///< "up", "down", ...
  std::string driver;
  bool is_virtual = false;  ///< no PCI parent (bridges, veth, ...)
  std::string link_type;    ///< "ether", "infiniband", ...
  /// For the interface of an SR-IOV virtual function: the interface of its physical function.
  std::string physical_function_netdev;
};

struct RdmaPort {
  std::uint32_t number = 0;
  std::string state;       ///< "ACTIVE", "DOWN", ...
  std::string rate;        ///< "400 Gb/sec (4X NDR)"
  std::string link_layer;  ///< "InfiniBand" or "Ethernet"
  std::string netdev;      ///< the port's network interface (RoCE netdev, IPoIB), when known
};

struct RdmaDeviceInfo {
  std::string name;  ///< "mlx5_0"
  std::string node_guid;
  std::vector<RdmaPort> ports;
  bool is_virtual = false;  ///< no PCI parent (software RDMA: rxe, siw)
};

using NodePayload = std::variant<MachineInfo, PackageInfo, NumaInfo, HostBridgeInfo,
                                 PciFunctionInfo, AcceleratorInfo, NetDeviceInfo, RdmaDeviceInfo>;

/// One node of the tree. `id` is derived from hardware (BDF, OS index, interface name) so it is
/// stable across runs and machines of the same model; `index`, `parent` and `children` are
/// positions inside the Topology and only valid there.
struct Node {
  NodeKind kind = NodeKind::kMachine;
  std::string id;
  NodeIndex parent = kNoNode;
  std::vector<NodeIndex> children;
  NodePayload payload;

  template <class T>
  [[nodiscard]] const T& as() const {
    return std::get<T>(payload);
  }
  template <class T>
  [[nodiscard]] T& as() {
    return std::get<T>(payload);
  }
  template <class T>
  [[nodiscard]] const T* get_if() const {
    return std::get_if<T>(&payload);
  }
  [[nodiscard]] bool is_pci() const {
    return kind == NodeKind::kPciBridge || kind == NodeKind::kPciDevice;
  }
};

/// Whether `payload` holds the payload type that `kind` requires.
bool payload_matches(NodeKind kind, const NodePayload& payload);

}  // namespace nodetopo
