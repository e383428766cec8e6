// The plan: a profile resolved into the concrete host it describes — CPU numbering, every PCI
// function with its address, bus numbers, link state and locality, device names, network
// interfaces, RDMA devices and accelerator links. Writers render files from it and from nothing
// else, so everything the fake root says is decided (and validated) here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/mock/profile.hpp>
#include <nodetopo/topology/cpu_set.hpp>
#include <nodetopo/topology/pci.hpp>

#include "profile/catalog.hpp"

namespace nodetopo::mock::detail {

/// Where a logical CPU sits.
struct CpuPlace {
  std::uint32_t socket = 0;
  std::uint32_t core = 0;    ///< core index within the socket
  std::uint32_t thread = 0;  ///< SMT thread index within the core
  std::uint32_t numa = 0;
};

enum class FunctionRole : std::uint8_t {
  kRootPort,
  kUpstreamPort,
  kDownstreamPort,
  kEndpoint,            ///< a function of a device behind a port
  kIntegratedEndpoint,  ///< a function on a root bus
  kVirtualFunction,
};

struct PlanFunction {
  PciAddress address;
  std::string dir;  ///< root-relative sysfs directory ("sys/devices/pci0000:15/0000:15:01.0")
  FunctionRole role = FunctionRole::kEndpoint;
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  std::uint16_t subsystem_vendor = 0;
  std::uint16_t subsystem_device = 0;
  std::uint32_t class_code = 0;
  std::uint8_t revision = 0;
  std::string driver;   ///< "" when unbound
  PcieLink cap;         ///< Link Capabilities (max_link_*); zero for VFs
  PcieLink current;     ///< Link Status (current_link_*); zero for VFs
  bool link_up = true;  ///< ports: a device is attached and the data link is active
  bool bridge = false;
  std::uint8_t primary = 0;
  std::uint8_t secondary = 0;
  std::uint8_t subordinate = 0;
  int numa = -1;
  bool multifunction = false;
  std::optional<std::uint32_t> physical_slot;  ///< ports with a slot
  std::uint8_t port_number = 0;
  std::optional<std::size_t> device_index;  ///< Plan::devices entry of endpoint functions/VFs
  std::uint32_t function_index = 0;         ///< position among the device's physical functions
  // SR-IOV
  std::uint32_t total_vfs = 0;
  std::uint32_t num_vfs = 0;
  std::uint16_t vf_offset = 0;
  std::uint16_t vf_stride = 1;
  std::uint16_t vf_device = 0;
  std::vector<std::size_t> vfs;   ///< PF: its VFs (Plan::functions indexes)
  std::optional<std::size_t> pf;  ///< VF: its PF
  std::uint64_t dsn = 0;          ///< PCIe Device Serial Number capability value, 0 = none
};

/// One network interface of a PCI function.
struct PlanNetPort {
  std::string netdev;
  std::string mac;  ///< 6 bytes (Ethernet) or the 20-byte IPoIB hardware address
  bool infiniband = false;
  std::uint32_t mtu = 1500;
  std::uint32_t rate_gbps = 0;
  bool up = true;
  std::size_t function = 0;    ///< Plan::functions index
  std::uint32_t dev_port = 0;  ///< index among the function's interfaces
  std::uint32_t ifindex = 0;
  std::string driver;               ///< driver of the interface (uevent, ethtool)
  std::string phys_port_name;       ///< "p0" on ConnectX Ethernet uplinks, else empty
  std::optional<std::size_t> rdma;  ///< Plan::rdma index
  std::uint32_t rdma_port = 1;      ///< port number on that RDMA device
  std::uint64_t port_guid = 0;
};

struct PlanRdma {
  std::string name;
  std::size_t function = 0;
  std::uint64_t node_guid = 0;
  std::vector<std::size_t> ports;  ///< PlanNetPort indexes, port number = position + 1
  const Model* model = nullptr;
};

struct PlanDevice {
  const DeviceSpec* spec = nullptr;
  const Model* model = nullptr;  ///< null for devices described by IDs only
  std::string name;
  DeviceType type = DeviceType::kOther;
  std::vector<std::size_t> functions;  ///< physical functions, in address order
  int numa = -1;
  std::string product;
  std::uint64_t memory_bytes = 0;
  std::uint64_t capacity_bytes = 0;
  std::string serial;
  std::string uuid;
  std::vector<std::size_t> net_ports;
  std::optional<std::size_t> ordinal;  ///< NVML index, DRM card, accel or nvme number
};

/// One NVLink of a GPU (NVML link index = position in Plan::nvlinks[gpu]).
struct PlanNvlink {
  std::optional<std::size_t> remote;  ///< Plan::devices index; nullopt = not wired
  bool active = false;
};

/// An xGMI connection between two AMD GPUs (Plan::devices indexes, a < b).
struct PlanXgmi {
  std::size_t a = 0;
  std::size_t b = 0;
  std::uint32_t count = 1;
};

struct Plan {
  const Profile* profile = nullptr;
  std::vector<CpuPlace> cpus;  ///< by logical CPU number
  CpuSet all_cpus;
  std::vector<CpuSet> numa_cpus;                           ///< by NUMA node id
  std::vector<std::vector<std::uint32_t>> distances;       ///< SLIT, by node id
  std::vector<PlanFunction> functions;                     ///< creation order
  std::vector<std::size_t> function_order;                 ///< functions sorted by address
  std::vector<std::string> root_buses;                     ///< "pci0000:15", sorted
  std::vector<PlanDevice> devices;                         ///< sorted by first function address
  std::vector<PlanNetPort> net_ports;                      ///< sorted by function address, dev_port
  std::vector<PlanRdma> rdma;                              ///< sorted by function address
  std::map<std::size_t, std::vector<PlanNvlink>> nvlinks;  ///< NVIDIA GPU device -> links
  std::vector<PlanXgmi> xgmi;
  std::vector<std::string> virtual_netdevs;  ///< with ifindex after the PCI ones
  std::string fabric_cluster_uuid;           ///< when profile.nvidia.fabric
};

/// Resolves and validates a profile. Errors name the profile (path) and the field (message).
Result<Plan> make_plan(const Profile& profile);

/// CPU list of a NUMA node, or of every CPU for numa -1 (the kernel's fallback).
const CpuSet& locality(const Plan& plan, int numa);

}  // namespace nodetopo::mock::detail
