#include "profile/synthetic.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "profile/catalog.hpp"

namespace nodetopo::mock::detail {

namespace {

// Each GPU/NIC "slot" (GPU k with NIC k, plus NVMe k) hangs below its own root complex.
// Buses one slot needs: the root bus, an upstream and an internal bus per switch level, and one
// bus per leaf device (behind a root port or the last switch's downstream port).
std::uint32_t slot_buses(std::uint32_t depth, std::uint32_t leaves) {
  return 1 + 2 * depth + leaves;
}

DeviceSpec device(DeviceType type, const std::string& model, const std::string& field) {
  DeviceSpec d;
  d.type = type;
  d.model = model;
  d.origin = {field, 0};
  return d;
}

PortSpec port_to(DeviceSpec d, const std::string& field) {
  PortSpec p;
  p.origin = {field, 0};
  p.device = std::move(d);
  return p;
}

}  // namespace

Result<void> generate_synthetic(Profile& profile) {
  const SyntheticSpec& s = *profile.synthetic;
  const std::string where = "synthetic";
  auto fail = [&](const std::string& key, const std::string& message) -> Result<void> {
    return make_error(ErrorCode::kInvalid, where + "." + key + ": " + message, profile.source);
  };
  const Model* gpu = find_model(s.gpu_model);
  if (gpu == nullptr || (gpu->type != DeviceType::kGpu && gpu->type != DeviceType::kAccelerator)) {
    return fail("gpu_model", "unknown GPU model '" + s.gpu_model +
                                 "' (known: " + model_keys(DeviceType::kGpu) + ")");
  }
  const Model* nic = find_model(s.nic_model);
  if (nic == nullptr || nic->type != DeviceType::kNic) {
    return fail("nic_model", "unknown NIC model '" + s.nic_model +
                                 "' (known: " + model_keys(DeviceType::kNic) + ")");
  }
  if (s.cores_per_socket % s.numa_per_socket != 0) {
    return fail("numa_per_socket", std::to_string(s.cores_per_socket) +
                                       " cores per socket do not split over " +
                                       std::to_string(s.numa_per_socket) + " NUMA nodes");
  }
  if (s.nvlinks_per_gpu != 0 && s.nvswitches == 0) {
    return fail("nvlinks_per_gpu", "NVLinks go to NVSwitches: set nvswitches too");
  }
  // NVSwitches and NVLinks belong to NVIDIA GPUs with NVLink: other models ignore those two
  // parameters and NVLink counts are capped at the model's, so that `gpu_model=mi300x` or
  // `gpu_model=a100-sxm4-80gb` work with the profile's defaults.
  const bool nvlink = gpu->vendor == pci_vendor::kNvidia && gpu->nvlinks != 0;
  const std::uint32_t nvswitches = nvlink ? s.nvswitches : 0;
  const std::uint32_t nvlinks_per_gpu = nvlink ? std::min(s.nvlinks_per_gpu, gpu->nvlinks) : 0;
  if (s.nic_vfs != 0 && nic->vf_device == 0) {
    return fail("nic_vfs", s.nic_model + " has no virtual functions");
  }
  const bool amd = s.cpu_vendor == "amd";

  CpuSpec& cpu = profile.cpu;
  cpu.vendor = amd ? "AuthenticAMD" : "GenuineIntel";
  cpu.model_name = amd ? "AMD EPYC 9654 96-Core Processor" : "Intel(R) Xeon(R) Platinum 8480C";
  cpu.family = amd ? 25 : 6;
  cpu.model = amd ? 17 : 143;
  cpu.stepping = amd ? 1 : 8;
  cpu.mhz = 2000;
  cpu.sockets = s.sockets;
  cpu.cores_per_socket = s.cores_per_socket;
  cpu.threads_per_core = s.threads_per_core;
  cpu.origin = {where, 0};

  const std::uint32_t numa_nodes = s.sockets * s.numa_per_socket;
  for (std::uint32_t i = 0; i < numa_nodes; ++i) {
    NumaSpec n;
    n.id = i;
    n.socket = i / s.numa_per_socket;
    n.memory_bytes = s.memory_per_numa;
    n.origin = {where + ".memory_per_numa", 0};
    profile.numa.push_back(n);
  }

  const std::uint32_t slots = std::max(s.gpus, s.nics);
  const std::string root_model = amd ? "amd-genoa" : "intel-spr";
  std::uint32_t domain = 0;
  std::uint32_t next_bus = 0;
  // Reserves `need` buses for one root complex, moving to the next PCI domain when the current
  // one is full (large machines use several PCI segments).
  auto reserve = [&](std::uint32_t need) -> std::pair<std::uint32_t, std::uint32_t> {
    if (next_bus + need > 256) {
      ++domain;
      next_bus = 0;
    }
    const std::uint32_t bus = next_bus;
    next_bus += need;
    return {domain, bus};
  };

  for (std::uint32_t k = 0; k < slots; ++k) {
    const std::string field = where + ".slot" + std::to_string(k);
    std::vector<DeviceSpec> leaves;
    if (k < s.gpus) leaves.push_back(device(gpu->type, s.gpu_model, field + ".gpu"));
    if (k < s.nics) {
      DeviceSpec d = device(DeviceType::kNic, s.nic_model, field + ".nic");
      if (s.nic_vfs != 0) d.sriov = {s.nic_vfs, s.nic_vfs};
      leaves.push_back(std::move(d));
    }
    if (k < s.nvme) leaves.push_back(device(DeviceType::kNvme, "pm1733", field + ".nvme"));
    const auto leaf_count = static_cast<std::uint32_t>(leaves.size());
    const auto [dom, bus] = reserve(slot_buses(s.switch_depth, leaf_count));

    RootComplexSpec rc;
    rc.origin = {field, 0};
    rc.domain = dom;
    rc.bus = static_cast<std::uint8_t>(bus);
    rc.numa = static_cast<int>(k * numa_nodes / slots);
    rc.port_model = root_model;
    if (s.switch_depth == 0) {
      for (std::uint32_t i = 0; i < leaf_count; ++i) {
        rc.ports.push_back(port_to(std::move(leaves[i]), field + ".port" + std::to_string(i)));
      }
    } else {
      // The leaf switch holds the devices; the levels above it have one downstream port each.
      auto leaf = std::make_unique<SwitchSpec>();
      leaf->origin = {field + ".switch" + std::to_string(s.switch_depth), 0};
      for (std::uint32_t i = 0; i < leaf_count; ++i) {
        leaf->ports.push_back(port_to(std::move(leaves[i]), leaf->origin.field));
      }
      for (std::uint32_t level = s.switch_depth; level > 1; --level) {
        auto upper = std::make_unique<SwitchSpec>();
        upper->origin = {field + ".switch" + std::to_string(level - 1), 0};
        PortSpec down;
        down.origin = upper->origin;
        down.below_switch = std::move(leaf);
        upper->ports.push_back(std::move(down));
        leaf = std::move(upper);
      }
      PortSpec root_port;
      root_port.origin = {field + ".root_port", 0};
      root_port.below_switch = std::move(leaf);
      rc.ports.push_back(std::move(root_port));
    }
    profile.pci.push_back(std::move(rc));
  }

  if (gpu->vendor == pci_vendor::kAmd && s.gpus > 1) {
    // AMD GPUs of one box form an all-to-all xGMI hive.
    LinkSpec link;
    link.origin = {where + ".gpus", 0};
    link.kind = FabricKind::kXgmi;
    link.from = {"GPU*"};
    link.to = {"GPU*"};
    profile.links.push_back(std::move(link));
  }
  if (nvswitches != 0 && s.gpus != 0) {
    // NVSwitches come per 8-GPU baseboard (as on HGX boards); each GPU spreads its NVLinks as
    // evenly as possible over the switches of its own board.
    const std::uint32_t boards = (s.gpus + 7) / 8;
    const std::string model = gpu->nvml_architecture >= 9 ? "nvswitch-gen3" : "nvswitch-gen2";
    for (std::uint32_t board = 0; board < boards; ++board) {
      const std::string field = where + ".nvswitches";
      const auto [dom, bus] = reserve(1 + nvswitches);
      RootComplexSpec rc;
      rc.origin = {field, 0};
      rc.domain = dom;
      rc.bus = static_cast<std::uint8_t>(bus);
      rc.numa = static_cast<int>(board * numa_nodes / boards);
      rc.port_model = root_model;
      for (std::uint32_t i = 0; i < nvswitches; ++i) {
        DeviceSpec sw = device(DeviceType::kNvSwitch, model, field);
        sw.name = "NVSWITCH" + std::to_string(board * nvswitches + i);
        rc.ports.push_back(port_to(std::move(sw), field));
      }
      profile.pci.push_back(std::move(rc));
      if (nvlinks_per_gpu == 0) continue;
      std::vector<std::string> gpus;
      for (std::uint32_t g = board * 8; g < std::min(s.gpus, board * 8 + 8); ++g) {
        gpus.push_back("GPU" + std::to_string(g));
      }
      for (std::uint32_t w = 0; w < nvswitches; ++w) {
        const std::uint32_t count =
            nvlinks_per_gpu / nvswitches + (w < nvlinks_per_gpu % nvswitches ? 1 : 0);
        if (count == 0) continue;
        LinkSpec link;
        link.origin = {where + ".nvlinks_per_gpu", 0};
        link.kind = FabricKind::kNvlink;
        link.from = gpus;
        link.to = {"NVSWITCH" + std::to_string(board * nvswitches + w)};
        link.count = count;
        profile.links.push_back(std::move(link));
      }
    }
  }
  return {};
}

}  // namespace nodetopo::mock::detail
