// Mock host profiles: the declarative description of a fake machine (docs/mock.md).
//
// A profile says what a host is made of (CPUs, NUMA nodes, the PCIe tree with its switches and
// endpoints, NVLink/xGMI wiring) and the builder turns it into a root directory laid out like a
// capture of /sys and /proc, so the real probes run on it unchanged. Profiles are written in YAML
// (mock/profiles/*.yaml are shipped inside the library); parse_profile() validates them strictly
// and every error names the field ("pci[0].ports[2].device.numa: NUMA node 5 does not exist").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/topology/pci.hpp>

namespace nodetopo::mock {

/// Where a profile element was written: its field path and the YAML line (0 when generated).
struct Origin {
  std::string field;  ///< "pci[0].ports[1].device"
  int line = 0;       ///< 1-based line in the profile text; 0 for generated elements

  /// "line 42: pci[0].ports[1].device.numa" (the line part only when known).
  [[nodiscard]] std::string at(std::string_view subfield = {}) const;
};

/// What an endpoint is; decides its defaults, its sysfs extras and whether NVML/KFD list it.
enum class DeviceType : std::uint8_t { kGpu, kNvSwitch, kNic, kNvme, kAccelerator, kOther };
/// "gpu", "nvswitch", "nic", "nvme", "accelerator", "other" (the profile's `type` values).
std::string_view to_string(DeviceType type);

/// DMI identity of the machine (sys/class/dmi/id) and its host name.
struct MachineSpec {
  std::string hostname;  ///< default "mock-<profile name>"
  std::string product_name;
  std::string sys_vendor;
  std::string board_vendor;
  std::string board_name;
  std::string bios_vendor;
  std::string bios_version;
  std::string kernel_release = "6.8.0-mock";  ///< proc/sys/kernel/osrelease
  /// cloud-init's instance data (run/cloud-init/instance-data.json), written only when
  /// `cloud_init` is given, shaped as cloud-init writes it on EC2: v1.{cloud_name, platform,
  /// region, availability_zone, instance_id} and ds.meta_data.{instance-type,
  /// instance-life-cycle}. Empty fields are left out.
  struct CloudInit {
    bool present = false;
    std::string cloud_name;
    std::string platform;
    std::string region;
    std::string availability_zone;
    std::string instance_id;
    std::string instance_type;
    std::string life_cycle;  ///< "spot" or "on-demand"
  } cloud_init;
};

/// CPU caches, per core except L3 (shared by `l3_cores` cores of one socket).
struct CacheSpec {
  std::uint64_t l1d_bytes = 0;
  std::uint64_t l1i_bytes = 0;
  std::uint64_t l2_bytes = 0;
  std::uint64_t l3_bytes = 0;
  std::uint32_t l3_cores = 0;  ///< cores sharing one L3; 0 = the whole socket
};

/// Processors. Logical CPU numbers follow Linux on x86: all first threads of every core of
/// socket 0, then of socket 1, ..., then the second threads in the same order.
struct CpuSpec {
  std::string vendor = "GenuineIntel";  ///< "GenuineIntel" or "AuthenticAMD"
  std::string model_name;
  std::uint32_t family = 6;
  std::uint32_t model = 0;
  std::uint32_t stepping = 0;
  std::uint32_t mhz = 2000;
  std::uint32_t sockets = 1;
  std::uint32_t cores_per_socket = 1;
  std::uint32_t threads_per_core = 1;
  std::optional<CacheSpec> caches;
  Origin origin;
};

/// One NUMA node. Nodes of a socket share its cores equally, in id order.
struct NumaSpec {
  std::uint32_t id = 0;
  std::optional<std::uint32_t> socket;  ///< absent: a memory-only node without CPUs
  std::uint64_t memory_bytes = 0;
  std::vector<std::uint32_t> distances;  ///< SLIT row, one entry per node in id order
  Origin origin;
};

/// A network port of a NIC (one PCI function each on ConnectX) or of an accelerator.
struct NetPortSpec {
  std::string netdev;                   ///< interface name; empty: a predictable name
  std::string rdma;                     ///< RDMA device of this port's function; empty: auto
  std::string link_layer = "Ethernet";  ///< "Ethernet" or "InfiniBand"
  std::uint32_t rate_gbps = 0;          ///< 0: the model's default
  bool up = true;                       ///< operstate up / port ACTIVE
  std::uint32_t mtu = 0;                ///< 0: 1500 (Ethernet) or 4092 (IPoIB)
  Origin origin;
};

/// SR-IOV capability of each physical function of a device.
struct SriovSpec {
  std::uint32_t total_vfs = 0;
  std::uint32_t num_vfs = 0;  ///< enabled VFs: each becomes a PCI function
};

/// How a GPU is meant to be shared (HAMi-style fractional GPUs). Not visible in sysfs: it is
/// carried into nodetopo-mock/manifest.json for the exporters and tests.
struct SharingSpec {
  std::string mode;            ///< "fractional" or "time-sliced"
  std::uint32_t replicas = 0;  ///< consumers per device
};

/// An endpoint: one physical PCI device with one or more functions.
struct DeviceSpec {
  Origin origin;
  DeviceType type = DeviceType::kOther;
  std::string name;   ///< unique label used by `links` ("GPU0"); empty: assigned in PCI order
  std::string model;  ///< catalog key ("h100-sxm5"); its values are defaults for the fields below
  std::optional<std::uint16_t> vendor;
  std::optional<std::uint16_t> device;
  std::optional<std::uint16_t> subsystem_vendor;
  std::optional<std::uint16_t> subsystem_device;
  std::optional<std::uint32_t> class_code;
  std::optional<std::uint8_t> revision;
  std::optional<std::string> driver;     ///< "" means no driver bound
  std::optional<std::string> product;    ///< marketing name (NVML name, amdgpu product_name)
  PcieLink link;                         ///< link capability; unknown (0) = the model's
  std::optional<PcieLink> current_link;  ///< negotiated link when degraded
  std::optional<int> numa;           ///< locality override; -1 models firmware that reports none
  std::optional<std::uint8_t> slot;  ///< device number on the root bus (integrated devices)
  std::optional<std::uint8_t> function;  ///< first function number (integrated devices)
  std::uint32_t functions = 0;           ///< function count (`other` devices); 0 = derived
  std::uint64_t memory_bytes = 0;        ///< accelerator memory; 0 = the model's
  std::uint64_t capacity_bytes = 0;      ///< NVMe capacity
  std::string serial;                    ///< explicit identity; empty = derived from the seed
  std::string uuid;
  std::vector<NetPortSpec> ports;
  std::string rdma;  ///< RDMA device of a single-function multi-port device (Gaudi "hbl_0")
  SriovSpec sriov;
  std::optional<SharingSpec> sharing;
  std::map<std::string, int> nvml_fail;  ///< NVML fault injection for this GPU (mock-nvml.md)
};

struct SwitchSpec;

/// A bridge port that leads to one secondary bus: a root port or a switch downstream port.
/// Below it sits a switch, a device, or nothing (an empty slot).
struct PortSpec {
  Origin origin;
  std::optional<std::uint8_t> slot;            ///< device number on the parent bus
  std::optional<std::uint8_t> function;        ///< function number (root ports, e.g. AMD's 01.1)
  PcieLink link;                               ///< port capability; unknown = follows the child
  std::optional<std::uint8_t> bus;             ///< secondary bus number; absent = next free
  std::optional<std::uint32_t> physical_slot;  ///< PCIe slot number (sys/bus/pci/slots)
  std::unique_ptr<SwitchSpec> below_switch;
  std::optional<DeviceSpec> device;
};

/// A PCIe switch: one upstream port (device 0 on the parent's secondary bus) and its
/// downstream ports on the internal bus.
struct SwitchSpec {
  Origin origin;
  std::string name;
  std::string model;  ///< "pex89000" (Gen5) or "pex88000" (Gen4); default by link speed
  std::optional<std::uint16_t> vendor;
  std::optional<std::uint16_t> device;
  PcieLink link;                         ///< upstream port capability
  std::optional<PcieLink> current_link;  ///< negotiated upstream link when degraded
  std::optional<std::uint8_t> bus;       ///< internal bus number; absent = next free
  std::vector<PortSpec> ports;           ///< downstream ports
};

/// A PCI root complex (host bridge): the root bus "pciDDDD:BB" and what hangs on it.
struct RootComplexSpec {
  Origin origin;
  std::uint32_t domain = 0;
  std::uint8_t bus = 0;
  int numa = 0;            ///< NUMA node of everything below; -1 = none reported
  std::string port_model;  ///< root port IDs ("intel-spr", "amd-milan", ...); default by CPU
  std::vector<PortSpec> ports;
  std::vector<DeviceSpec> devices;  ///< root-complex integrated endpoints
};

enum class FabricKind : std::uint8_t { kNvlink, kXgmi };
std::string_view to_string(FabricKind kind);

/// Accelerator links: every device of `from` wired to every device of `to` with `count` links.
/// Names may end in '*' to match a prefix ("GPU*"). Pairs are unordered and each is wired once.
struct LinkSpec {
  Origin origin;
  FabricKind kind = FabricKind::kNvlink;
  std::vector<std::string> from;
  std::vector<std::string> to;
  std::uint32_t count = 1;
  std::uint32_t down = 0;  ///< how many of the `count` links report inactive (NVLink)
};

/// NVIDIA driver facts served by the mock NVML library.
struct NvidiaSpec {
  std::string driver_version = "550.54.15";
  std::uint32_t cuda_driver_version = 12040;
  bool fabric = false;  ///< GPUs report an NVLink fabric (cluster UUID + clique)
  std::uint32_t clique_id = 1;
  std::map<std::string, int> fail;  ///< top-level NVML fault injection
};

/// Parameters of the `synthetic` generator (see docs/mock.md). Generated profiles keep them.
struct SyntheticSpec {
  std::string cpu_vendor = "intel";  ///< "intel" or "amd"
  std::uint32_t sockets = 2;
  std::uint32_t numa_per_socket = 1;
  std::uint32_t cores_per_socket = 32;
  std::uint32_t threads_per_core = 2;
  std::uint64_t memory_per_numa = 256ULL << 30;
  std::uint32_t gpus = 8;
  std::string gpu_model = "h100-sxm5";
  std::uint32_t nics = 8;
  std::string nic_model = "cx7";
  std::uint32_t nic_vfs = 0;
  std::uint32_t nvme = 0;
  std::uint32_t switch_depth = 1;
  std::uint32_t nvswitches = 0;
  std::uint32_t nvlinks_per_gpu = 0;
};

/// A whole profile. Move-only (the PCI tree owns its switches).
struct Profile {
  std::string source;  ///< "dgx-h100 (shipped)" or the file it was read from
  std::string name;
  std::string description;
  std::string seed;
  MachineSpec machine;
  CpuSpec cpu;
  std::vector<NumaSpec> numa;
  std::vector<RootComplexSpec> pci;
  std::vector<LinkSpec> links;
  NvidiaSpec nvidia;
  std::vector<std::string> virtual_netdevs;
  std::optional<SyntheticSpec> synthetic;  ///< set when the profile was generated
};

/// Parses and validates a profile. `source` names the text in messages (a file or a profile
/// name); `overrides` ("gpus" -> "64") replace `synthetic` parameters. Errors have code
/// kInvalid, path = `source`, and a message that names the line and field.
Result<Profile> parse_profile(std::string_view yaml, std::string_view source,
                              const std::map<std::string, std::string>& overrides = {});

}  // namespace nodetopo::mock
