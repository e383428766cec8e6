// Files of the mock itself: the NVML fixture (docs/mock-nvml.md, read by the mock
// libnvidia-ml.so.1) and the manifest (the resolved profile, for exporters and tests).
#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "render/writers.hpp"

namespace nodetopo::mock::detail {

namespace {

using Json = nlohmann::ordered_json;

std::string hex32(std::uint32_t v) {
  std::array<char, 16> buf{};
  std::snprintf(buf.data(), buf.size(), "0x%08x", v);
  return buf.data();
}

std::string hex4(std::uint32_t v) {
  std::array<char, 8> buf{};
  std::snprintf(buf.data(), buf.size(), "%04x", v);
  return buf.data();
}

std::string dump(const Json& j) {
  return j.dump(2) + "\n";
}

void write_nvml(const Plan& plan, ImageWriter& out) {
  const NvidiaSpec& nv = plan.profile->nvidia;
  Json devices = Json::array();
  for (const auto& [index, links] : plan.nvlinks) {
    const PlanDevice& d = plan.devices[index];
    const PlanFunction& f = plan.functions[d.functions.front()];
    Json dev;
    dev["index"] = *d.ordinal;
    dev["pci_bus_id"] = f.address.to_string();
    dev["pci_device_id"] = hex32((std::uint32_t{f.device} << 16) | f.vendor);
    dev["pci_subsystem_id"] = hex32((std::uint32_t{f.subsystem_device} << 16) | f.subsystem_vendor);
    dev["uuid"] = d.uuid;
    dev["name"] = d.product;
    dev["serial"] = d.serial;
    dev["memory_total_bytes"] = d.memory_bytes;
    dev["architecture"] = d.model != nullptr ? d.model->nvml_architecture : 0;
    if (d.numa >= 0) dev["numa_node"] = d.numa;
    if (!plan.fabric_cluster_uuid.empty()) {
      dev["fabric"] = {{"cluster_uuid", plan.fabric_cluster_uuid},
                       {"clique_id", nv.clique_id},
                       {"state", 3},
                       {"status", 0}};
    }
    Json jl = Json::array();
    for (std::size_t i = 0; i < links.size(); ++i) {
      const PlanNvlink& l = links[i];
      Json link;
      link["link"] = i;
      link["active"] = l.active && l.remote.has_value();
      if (l.active && l.remote) {
        const PlanDevice& remote = plan.devices[*l.remote];
        link["remote_pci_bus_id"] = plan.functions[remote.functions.front()].address.to_string();
        link["remote_type"] = remote.type == DeviceType::kNvSwitch ? "switch" : "gpu";
      }
      jl.push_back(std::move(link));
    }
    dev["nvlinks"] = std::move(jl);
    if (!d.spec->nvml_fail.empty()) dev["fail"] = d.spec->nvml_fail;
    devices.push_back(std::move(dev));
  }
  // The fixture lists devices by NVML index, which follows PCI order.
  std::sort(devices.begin(), devices.end(),
            [](const Json& a, const Json& b) { return a["index"] < b["index"]; });
  Json doc;
  doc["driver_version"] = nv.driver_version;
  doc["cuda_driver_version"] = nv.cuda_driver_version;
  if (!nv.fail.empty()) doc["fail"] = nv.fail;
  doc["devices"] = std::move(devices);
  // Compact: the mock library parses this file on every nvmlInit, and a discovery of a 64-GPU
  // host spent more time lexing its indentation than in the NVML probe itself.
  out.file(std::string(kNvmlFixtureFile), doc.dump() + "\n");
}

Json synthetic_json(const SyntheticSpec& s) {
  Json j;
  j["cpu_vendor"] = s.cpu_vendor;
  j["sockets"] = s.sockets;
  j["numa_per_socket"] = s.numa_per_socket;
  j["cores_per_socket"] = s.cores_per_socket;
  j["threads_per_core"] = s.threads_per_core;
  j["memory_per_numa"] = s.memory_per_numa;
  j["gpus"] = s.gpus;
  j["gpu_model"] = s.gpu_model;
  j["nics"] = s.nics;
  j["nic_model"] = s.nic_model;
  j["nic_vfs"] = s.nic_vfs;
  j["nvme"] = s.nvme;
  j["switch_depth"] = s.switch_depth;
  j["nvswitches"] = s.nvswitches;
  j["nvlinks_per_gpu"] = s.nvlinks_per_gpu;
  return j;
}

void write_manifest(const Plan& plan, ImageWriter& out) {
  const Profile& p = *plan.profile;
  Json doc;
  doc["format"] = 1;
  doc["profile"] = p.name;
  doc["description"] = p.description;
  doc["seed"] = p.seed;
  if (p.synthetic) doc["synthetic"] = synthetic_json(*p.synthetic);
  doc["cpus"] = plan.cpus.size();
  doc["sockets"] = p.cpu.sockets;
  Json numa = Json::array();
  for (std::size_t i = 0; i < p.numa.size(); ++i) {
    Json n;
    n["id"] = i;
    if (p.numa[i].socket) n["socket"] = *p.numa[i].socket;
    n["cpus"] = plan.numa_cpus[i].to_list();
    n["memory_bytes"] = p.numa[i].memory_bytes;
    n["distances"] = plan.distances[i];
    numa.push_back(std::move(n));
  }
  doc["numa_nodes"] = std::move(numa);
  doc["pci_functions"] = plan.functions.size();

  Json devices = Json::array();
  for (const PlanDevice& d : plan.devices) {
    const PlanFunction& f = plan.functions[d.functions.front()];
    Json j;
    j["name"] = d.name;
    j["type"] = std::string(to_string(d.type));
    if (d.model != nullptr) j["model"] = std::string(d.model->key);
    j["pci"] = f.address.to_string();
    Json functions = Json::array();
    for (std::size_t fi : d.functions) {
      functions.push_back(plan.functions[fi].address.to_string());
      for (std::size_t vf : plan.functions[fi].vfs) {
        functions.push_back(plan.functions[vf].address.to_string());
      }
    }
    j["functions"] = std::move(functions);
    j["vendor"] = hex4(f.vendor);
    j["device"] = hex4(f.device);
    j["class"] = hex4(f.class_code >> 8);
    j["numa"] = d.numa;
    j["local_cpus"] = locality(plan, d.numa).to_list();
    if (f.cap.known()) {
      j["link"] = {{"speed_mts", f.current.speed_mts},
                   {"width", f.current.width},
                   {"max_speed_mts", f.cap.speed_mts},
                   {"max_width", f.cap.width}};
    }
    // Bridges from the root port down to the port this device sits behind.
    Json bridges = Json::array();
    for (const PlanFunction& b : plan.functions) {
      if (b.bridge && b.address.domain == f.address.domain && b.secondary <= f.address.bus &&
          f.address.bus <= b.subordinate) {
        bridges.push_back(b.address.to_string());
      }
    }
    j["bridges"] = std::move(bridges);
    if (!d.product.empty()) j["product"] = d.product;
    if (d.memory_bytes != 0) j["memory_bytes"] = d.memory_bytes;
    if (d.capacity_bytes != 0) j["capacity_bytes"] = d.capacity_bytes;
    if (!d.serial.empty()) j["serial"] = d.serial;
    if (!d.uuid.empty()) j["uuid"] = d.uuid;
    if (d.ordinal) j["ordinal"] = *d.ordinal;
    Json net = Json::array();
    for (std::size_t ni : d.net_ports) {
      const PlanNetPort& np = plan.net_ports[ni];
      Json n;
      n["netdev"] = np.netdev;
      n["pci"] = plan.functions[np.function].address.to_string();
      n["mac"] = np.mac;
      n["link_layer"] = np.infiniband ? "InfiniBand" : "Ethernet";
      n["rate_gbps"] = np.rate_gbps;
      n["state"] = np.up ? "up" : "down";
      if (np.rdma) {
        n["rdma"] = plan.rdma[*np.rdma].name;
        n["rdma_port"] = np.rdma_port;
      }
      net.push_back(std::move(n));
    }
    if (!net.empty()) j["ports"] = std::move(net);
    if (d.spec->sharing) {
      j["sharing"] = {{"mode", d.spec->sharing->mode}, {"replicas", d.spec->sharing->replicas}};
    }
    devices.push_back(std::move(j));
  }
  doc["devices"] = std::move(devices);

  Json links = Json::array();
  for (const auto& [gpu, slots] : plan.nvlinks) {
    std::map<std::size_t, std::pair<std::uint32_t, std::uint32_t>> per_remote;  // total, active
    for (const PlanNvlink& l : slots) {
      if (!l.remote) continue;
      auto& [total, active] = per_remote[*l.remote];
      ++total;
      active += l.active ? 1 : 0;
    }
    for (const auto& [remote, counts] : per_remote) {
      // A GPU-to-GPU link is listed once, from the lower-numbered GPU.
      if (plan.devices[remote].type == DeviceType::kGpu && remote < gpu) continue;
      links.push_back({{"kind", "nvlink"},
                       {"from", plan.devices[gpu].name},
                       {"to", plan.devices[remote].name},
                       {"count", counts.first},
                       {"active", counts.second}});
    }
  }
  for (const PlanXgmi& x : plan.xgmi) {
    links.push_back({{"kind", "xgmi"},
                     {"from", plan.devices[x.a].name},
                     {"to", plan.devices[x.b].name},
                     {"count", x.count},
                     {"active", x.count}});
  }
  doc["links"] = std::move(links);
  out.file(std::string(kManifestFile), dump(doc));
}

// A profile whose GPUs are meant to be shared (the HAMi lab) ships the node's export settings
// (etc/nodetopo/export.yaml, read by `topo export`), as an operator would on such a node. sysfs has
// no place for a sharing policy: it is configuration, not hardware. Fractional and time-sliced
// sharing both map to DRA's consumable capacity (allowMultipleAllocations).
void write_export_settings(const Plan& plan, ImageWriter& out) {
  const SharingSpec* sharing = nullptr;
  for (const PlanDevice& d : plan.devices) {
    if (d.spec->sharing) sharing = &*d.spec->sharing;
  }
  if (sharing == nullptr) return;
  out.file("etc/nodetopo/export.yaml", "# Written by `topo mock build` for profile " +
                                           plan.profile->name + ": GPUs shared " + sharing->mode +
                                           " by up to " + std::to_string(sharing->replicas) +
                                           " consumers.\nsharing:\n  mode: consumable\n");
}

}  // namespace

void write_fixtures(const Plan& plan, ImageWriter& out) {
  if (!plan.nvlinks.empty()) write_nvml(plan, out);
  write_manifest(plan, out);
  write_export_settings(plan, out);
}

}  // namespace nodetopo::mock::detail
