// Vendor-specific device trees: AMD (DRM cards, amdgpu attributes, the KFD topology), Habana
// (accel devices), NVMe controllers, and NVIDIA's /proc/driver/nvidia.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "plan/identity.hpp"
#include "render/writers.hpp"

namespace nodetopo::mock::detail {

namespace {

bool is_amd_gpu(const Plan& plan, const PlanDevice& d) {
  return d.type == DeviceType::kGpu &&
         plan.functions[d.functions.front()].vendor == pci_vendor::kAmd;
}

bool is_nvidia_gpu(const Plan& plan, const PlanDevice& d) {
  return d.type == DeviceType::kGpu &&
         plan.functions[d.functions.front()].vendor == pci_vendor::kNvidia;
}

std::string hex16(std::uint64_t v) {
  std::array<char, 24> buf{};
  std::snprintf(buf.data(), buf.size(), "%016llx", static_cast<unsigned long long>(v));
  return buf.data();
}

void write_drm(const Plan& plan, const PlanDevice& d, ImageWriter& out) {
  const PlanFunction& f = plan.functions[d.functions.front()];
  const std::size_t n = *d.ordinal;
  for (const auto& [name, minor] : {std::pair{"card" + std::to_string(n), n},
                                    std::pair{"renderD" + std::to_string(128 + n), 128 + n}}) {
    const std::string dir = f.dir + "/drm/" + name;
    out.attr(dir + "/dev", "226:" + std::to_string(minor));
    out.file(dir + "/uevent",
             "MAJOR=226\nMINOR=" + std::to_string(minor) + "\nDEVNAME=dri/" + name + "\n");
    out.link(dir + "/device", f.dir);
    out.link(dir + "/subsystem", "sys/class/drm");
    out.link("sys/class/drm/" + name, dir);
  }
  // amdgpu's own attributes on the PCI function.
  const std::uint64_t unique =
      identity_hash(plan.profile->seed, "kfd-unique-id", f.address.to_string());
  out.attr(f.dir + "/mem_info_vram_total", std::to_string(d.memory_bytes));
  out.attr(f.dir + "/mem_info_vis_vram_total", std::to_string(d.memory_bytes));
  out.attr(f.dir + "/unique_id", hex16(unique));
  out.attr(f.dir + "/serial_number", d.serial);
  out.attr(f.dir + "/product_name", d.product);
}

// Key-value lines in the order the kernel prints them.
class Properties {
 public:
  void add(std::string_view key, std::uint64_t value) {
    text_ += std::string(key) + " " + std::to_string(value) + "\n";
  }
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

struct KfdNode {
  bool gpu = false;
  std::uint32_t numa = 0;      // CPU nodes: their NUMA node
  std::size_t device = 0;      // GPU nodes: Plan::devices index
  std::uint32_t cpu_node = 0;  // GPU nodes: KFD id of the CPU node they hang off
};

struct IoLink {
  std::uint32_t type = 0;
  std::uint32_t to = 0;
  std::uint32_t weight = 0;
  std::uint32_t min_bandwidth = 0;
  std::uint32_t max_bandwidth = 0;
  std::uint32_t flags = 0;
};

void write_io_links(const std::string& dir, std::uint32_t from, const std::vector<IoLink>& links,
                    ImageWriter& out) {
  for (std::size_t i = 0; i < links.size(); ++i) {
    const IoLink& l = links[i];
    Properties p;
    p.add("type", l.type);
    p.add("version_major", 0);
    p.add("version_minor", 0);
    p.add("node_from", from);
    p.add("node_to", l.to);
    p.add("weight", l.weight);
    p.add("min_latency", 0);
    p.add("max_latency", 0);
    p.add("min_bandwidth", l.min_bandwidth);
    p.add("max_bandwidth", l.max_bandwidth);
    p.add("recommended_transfer_size", 0);
    p.add("flags", l.flags);
    out.file(dir + "/io_links/" + std::to_string(i) + "/properties", p.take());
  }
}

void write_kfd(const Plan& plan, ImageWriter& out) {
  std::vector<std::size_t> gpus;
  for (std::size_t i = 0; i < plan.devices.size(); ++i) {
    if (is_amd_gpu(plan, plan.devices[i])) gpus.push_back(i);
  }
  if (gpus.empty()) return;
  const Profile& profile = *plan.profile;
  const std::string base = "sys/devices/virtual/kfd/kfd";
  out.link("sys/class/kfd/kfd", base);
  const std::string topo = base + "/topology";
  out.attr(topo + "/generation_id", "1");
  Properties sys;
  sys.add("platform_oem", identity_hash(profile.seed, "kfd", "oem") >> 16);
  sys.add("platform_id", identity_hash(profile.seed, "kfd", "platform") >> 16);
  sys.add("platform_rev", 2);
  out.file(topo + "/system_properties", sys.take());

  // KFD nodes: one CPU node per NUMA node with CPUs, then the GPUs in PCI order.
  std::vector<KfdNode> nodes;
  std::vector<std::uint32_t> cpu_node_of_numa(plan.numa_cpus.size(), 0);
  for (std::uint32_t n = 0; n < plan.numa_cpus.size(); ++n) {
    if (plan.numa_cpus[n].empty()) continue;
    cpu_node_of_numa[n] = static_cast<std::uint32_t>(nodes.size());
    nodes.push_back({false, n, 0, 0});
  }
  const auto cpu_nodes = static_cast<std::uint32_t>(nodes.size());
  std::vector<std::uint32_t> kfd_of_device(plan.devices.size(), 0);
  for (std::size_t g : gpus) {
    const int numa = plan.devices[g].numa;
    kfd_of_device[g] = static_cast<std::uint32_t>(nodes.size());
    nodes.push_back({true, 0, g, numa >= 0 ? cpu_node_of_numa[static_cast<std::size_t>(numa)] : 0});
  }
  const std::uint64_t hive = plan.xgmi.empty() ? 0 : identity_hash(profile.seed, "kfd", "hive");
  const bool amd_host = profile.cpu.vendor == "AuthenticAMD";

  for (std::uint32_t id = 0; id < nodes.size(); ++id) {
    const KfdNode& node = nodes[id];
    const std::string dir = topo + "/nodes/" + std::to_string(id);
    std::vector<IoLink> links;
    Properties p;
    if (!node.gpu) {
      for (std::uint32_t other = 0; other < cpu_nodes; ++other) {
        if (other == id) continue;
        // HyperTransport (1) between AMD sockets, QPI (5) on Intel hosts; weight = SLIT.
        links.push_back(
            {amd_host ? 1U : 5U, other, plan.distances[node.numa][nodes[other].numa], 0, 0, 0});
      }
      for (std::uint32_t g = cpu_nodes; g < nodes.size(); ++g) {
        if (nodes[g].cpu_node != id) continue;
        const Model* m = plan.devices[nodes[g].device].model;
        const std::uint32_t bw =
            m != nullptr && m->kfd != nullptr ? m->kfd->pcie_bandwidth_mbs : 32000;
        links.push_back({2, g, 20, 312, bw, 3});
      }
      const CpuSet& cpus = plan.numa_cpus[node.numa];
      p.add("cpu_cores_count", cpus.count());
      p.add("simd_count", 0);
      p.add("mem_banks_count", 1);
      p.add("caches_count", 0);
      p.add("io_links_count", links.size());
      p.add("p2p_links_count", 0);
      p.add("cpu_core_id_base", cpus.members().front());
      for (const char* key : {"simd_id_base",
                              "max_waves_per_simd",
                              "lds_size_in_kb",
                              "gds_size_in_kb",
                              "num_gws",
                              "wave_front_size",
                              "array_count",
                              "simd_arrays_per_engine",
                              "cu_per_simd_array",
                              "simd_per_cu",
                              "max_slots_scratch_cu",
                              "gfx_target_version",
                              "vendor_id",
                              "device_id",
                              "location_id",
                              "domain",
                              "drm_render_minor",
                              "hive_id",
                              "num_sdma_engines",
                              "num_sdma_xgmi_engines",
                              "num_sdma_queues_per_engine",
                              "num_cp_queues"}) {
        p.add(key, 0);
      }
      p.add("max_engine_clk_ccompute", profile.cpu.mhz);
      out.file(dir + "/properties", p.take());
      out.attr(dir + "/gpu_id", "0");
      out.attr(dir + "/name", "");
      Properties bank;
      bank.add("heap_type", 0);
      std::uint64_t memory = profile.numa[node.numa].memory_bytes;
      bank.add("size_in_bytes", memory);
      bank.add("flags", 0);
      bank.add("width", 64);
      bank.add("mem_clk_max", 4800);
      out.file(dir + "/mem_banks/0/properties", bank.take());
      write_io_links(dir, id, links, out);
      continue;
    }
    const PlanDevice& d = plan.devices[node.device];
    const PlanFunction& f = plan.functions[d.functions.front()];
    static const KfdModel kGeneric{};
    const KfdModel& k = d.model != nullptr && d.model->kfd != nullptr ? *d.model->kfd : kGeneric;
    links.push_back({2, node.cpu_node, 20, 312, k.pcie_bandwidth_mbs, 1});
    std::vector<std::pair<std::uint32_t, std::uint32_t>> peers;  // (kfd node, link count)
    for (const PlanXgmi& x : plan.xgmi) {
      if (x.a == node.device) peers.emplace_back(kfd_of_device[x.b], x.count);
      if (x.b == node.device) peers.emplace_back(kfd_of_device[x.a], x.count);
    }
    std::sort(peers.begin(), peers.end());
    for (const auto& [peer, count] : peers) {
      const std::uint32_t bw = k.xgmi_bandwidth_mbs * count;
      links.push_back({11, peer, k.xgmi_weight, bw, bw, 1});
    }
    const std::uint64_t unique =
        identity_hash(profile.seed, "kfd-unique-id", f.address.to_string());
    p.add("cpu_cores_count", 0);
    p.add("simd_count", k.simd_count);
    p.add("mem_banks_count", 1);
    p.add("caches_count", 0);
    p.add("io_links_count", links.size());
    p.add("p2p_links_count", 0);
    p.add("cpu_core_id_base", 0);
    p.add("simd_id_base", 2147487744ULL + *d.ordinal * 4096ULL);
    p.add("max_waves_per_simd", 8);
    p.add("lds_size_in_kb", 64);
    p.add("gds_size_in_kb", 0);
    p.add("num_gws", 64);
    p.add("wave_front_size", 64);
    p.add("array_count", k.array_count);
    p.add("simd_arrays_per_engine", k.simd_arrays_per_engine);
    p.add("cu_per_simd_array", k.cu_per_simd_array);
    p.add("simd_per_cu", k.simd_per_cu);
    p.add("max_slots_scratch_cu", 32);
    p.add("gfx_target_version", k.gfx_target_version);
    p.add("vendor_id", f.vendor);
    p.add("device_id", f.device);
    p.add("location_id", (std::uint32_t{f.address.bus} << 8) |
                             (std::uint32_t{f.address.device} << 3) | f.address.function);
    p.add("domain", f.address.domain);
    p.add("drm_render_minor", 128 + *d.ordinal);
    p.add("hive_id", peers.empty() ? 0 : hive);
    p.add("num_sdma_engines", k.num_sdma_engines);
    p.add("num_sdma_xgmi_engines", k.num_sdma_xgmi_engines);
    p.add("num_sdma_queues_per_engine", 8);
    p.add("num_cp_queues", 24);
    p.add("max_engine_clk_fcompute", k.max_engine_clk_fcompute);
    p.add("local_mem_size", 0);
    p.add("fw_version", k.fw_version);
    p.add("capability", 746037888);
    p.add("debug_prop", 1511);
    p.add("sdma_fw_version", k.sdma_fw_version);
    p.add("unique_id", unique);
    p.add("num_xcc", k.num_xcc);
    p.add("max_engine_clk_ccompute", profile.cpu.mhz);
    out.file(dir + "/properties", p.take());
    // gpu_id: a non-zero 16-bit hash, as KFD derives it from the device.
    out.attr(dir + "/gpu_id", std::to_string(1 + unique % 65535));
    out.attr(dir + "/name", "ip discovery");
    Properties bank;
    bank.add("heap_type", 1);
    bank.add("size_in_bytes", d.memory_bytes);
    bank.add("flags", 0);
    bank.add("width", 8192);
    bank.add("mem_clk_max", 1300);
    out.file(dir + "/mem_banks/0/properties", bank.take());
    write_io_links(dir, id, links, out);
  }
}

void write_accel(const Plan& plan, const PlanDevice& d, ImageWriter& out) {
  const PlanFunction& f = plan.functions[d.functions.front()];
  const std::string name = "accel" + std::to_string(*d.ordinal);
  const std::string dir = f.dir + "/accel/" + name;
  out.attr(dir + "/dev", "261:" + std::to_string(*d.ordinal));
  out.file(dir + "/uevent",
           "MAJOR=261\nMINOR=" + std::to_string(*d.ordinal) + "\nDEVNAME=accel/" + name + "\n");
  std::string type = d.model != nullptr ? std::string(d.model->key) : "habana";
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  out.attr(dir + "/device_type", type);
  out.attr(dir + "/module_id", std::to_string(*d.ordinal));
  out.attr(dir + "/pci_addr", f.address.to_string());
  out.attr(dir + "/serial_number", d.serial);
  out.attr(dir + "/status", "operational");
  out.link(dir + "/device", f.dir);
  out.link(dir + "/subsystem", "sys/class/accel");
  out.link("sys/class/accel/" + name, dir);
}

void write_nvme(const Plan& plan, const PlanDevice& d, ImageWriter& out) {
  const PlanFunction& f = plan.functions[d.functions.front()];
  const std::string ctrl = "nvme" + std::to_string(*d.ordinal);
  const std::string dir = f.dir + "/nvme/" + ctrl;
  out.attr(dir + "/model", d.product);
  out.attr(dir + "/serial", d.serial);
  out.attr(dir + "/firmware_rev", "GDC7302Q");
  out.attr(dir + "/transport", "pcie");
  out.attr(dir + "/address", f.address.to_string());
  out.attr(dir + "/state", "live");
  out.attr(dir + "/dev", "240:" + std::to_string(*d.ordinal));
  out.link(dir + "/device", f.dir);
  out.link(dir + "/subsystem", "sys/class/nvme");
  out.link("sys/class/nvme/" + ctrl, dir);
  const std::string ns = ctrl + "n1";
  const std::string ns_dir = dir + "/" + ns;
  out.attr(ns_dir + "/size", std::to_string(d.capacity_bytes / 512));
  out.attr(ns_dir + "/dev", "259:" + std::to_string(*d.ordinal));
  out.attr(ns_dir + "/queue/logical_block_size", "512");
  out.attr(ns_dir + "/queue/rotational", "0");
  out.file(ns_dir + "/uevent", "MAJOR=259\nMINOR=" + std::to_string(*d.ordinal) +
                                   "\nDEVNAME=" + ns + "\nDEVTYPE=disk\n");
  out.link(ns_dir + "/subsystem", "sys/class/block");
  out.link("sys/class/block/" + ns, ns_dir);
  out.link("sys/block/" + ns, ns_dir);
}

void write_nvidia_proc(const Plan& plan, ImageWriter& out) {
  const NvidiaSpec& nv = plan.profile->nvidia;
  bool any = false;
  for (const PlanDevice& d : plan.devices) {
    if (!is_nvidia_gpu(plan, d)) continue;
    any = true;
    const PlanFunction& f = plan.functions[d.functions.front()];
    std::string info;
    info += "Model: \t\t " + d.product + "\n";
    info += "IRQ:   \t\t 0\n";
    info += "GPU UUID: \t " + d.uuid + "\n";
    info += "Video BIOS: \t 96.00.99.00.01\n";
    info += "Bus Type: \t PCIe\n";
    info += "DMA Size: \t 52 bits\n";
    info += "DMA Mask: \t 0xfffffffffffff\n";
    info += "Bus Location: \t " + f.address.to_string() + "\n";
    info += "Device Minor: \t " + std::to_string(*d.ordinal) + "\n";
    info += "GPU Firmware: \t " + nv.driver_version + "\n";
    info += "GPU Excluded:\t No\n";
    out.file("proc/driver/nvidia/gpus/" + f.address.to_string() + "/information", info);
  }
  if (any) {
    out.file("proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + nv.driver_version +
                 "  (nodetopo mock)\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
  }
}

}  // namespace

void write_accelerators(const Plan& plan, ImageWriter& out) {
  for (const PlanDevice& d : plan.devices) {
    const std::uint16_t vendor = plan.functions[d.functions.front()].vendor;
    if (is_amd_gpu(plan, d)) write_drm(plan, d, out);
    if (vendor == pci_vendor::kHabana) write_accel(plan, d, out);
    if (d.type == DeviceType::kNvme) write_nvme(plan, d, out);
  }
  write_kfd(plan, out);
  write_nvidia_proc(plan, out);
}

}  // namespace nodetopo::mock::detail
