// CDI specs of prepared claims (kind <driver>/claim, one file per claim) and the lookup of vendor
// CDI devices for our GPUs. Field names follow the CDI specification (cdiVersion, kind, devices,
// containerEdits.env / deviceNodes); tests/kubelet validates every spec against its JSON schema.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <nodetopo/kubelet/cdi.hpp>

namespace nodetopo::kubelet {

namespace fs = std::filesystem;

namespace {

/// The vendor CDI kind whose devices serve GPUs of `vendor`.
std::string vendor_kind(const std::string& vendor) {
  if (vendor == "nvidia") return "nvidia.com/gpu";
  if (vendor == "amd") return "amd.com/gpu";
  return {};
}

const NodeDevice* find_device(const std::vector<NodeDevice>& devices, const std::string& name) {
  for (const NodeDevice& d : devices)
    if (d.name == name) return &d;
  return nullptr;
}

std::optional<std::string> capacity_value(const NodeDevice& device, const std::string& name) {
  const auto cap = device.slice_device.find("capacity");
  if (cap == device.slice_device.end() || !cap->contains(name)) return std::nullopt;
  const auto& entry = (*cap)[name];
  if (!entry.contains("value") || !entry["value"].is_string()) return std::nullopt;
  return entry["value"].get<std::string>();
}

std::string mebibytes(long double bytes) {
  return std::to_string(static_cast<long long>(std::floor(bytes / (1024.0L * 1024.0L)))) + "m";
}

/// The environment HAMi-core reads for a share: the memory limit of this device (index i among
/// the container's GPUs) in MiB, and the compute limit in percent of the GPU.
Result<void> share_env(const NodeDevice& device, const AllocatedDevice& alloc, int index,
                       std::map<std::string, std::string>& env) {
  const std::optional<std::string> total_cores = capacity_value(device, "cores");
  const std::optional<std::string> total_memory = capacity_value(device, "memory");
  std::optional<long double> cores_share;  // fraction of the GPU's compute
  if (auto c = alloc.consumed.find("cores"); c != alloc.consumed.end()) {
    const auto used = parse_quantity(c->second);
    const auto total = total_cores ? parse_quantity(*total_cores) : std::nullopt;
    if (!used || !total || *total <= 0)
      return make_error(ErrorCode::kInvalid,
                        "consumed cores \"" + c->second + "\" cannot be read against the capacity");
    cores_share = *used / *total;
  }
  std::optional<long double> memory_bytes;
  if (auto m = alloc.consumed.find("memory"); m != alloc.consumed.end()) {
    memory_bytes = parse_quantity(m->second);
    if (!memory_bytes)
      return make_error(ErrorCode::kInvalid,
                        "consumed memory \"" + m->second + "\" is no quantity");
  } else if (cores_share && total_memory) {
    // Only compute was requested: the share gets the same fraction of the memory, as HAMi does
    // for a core-only request on a GPU published without a memory capacity request.
    if (auto total = parse_quantity(*total_memory)) memory_bytes = *total * *cores_share;
  }
  const std::string i = std::to_string(index);
  if (memory_bytes) env["CUDA_DEVICE_MEMORY_LIMIT_" + i] = mebibytes(*memory_bytes);
  if (cores_share) {
    const long long percent = std::max(1LL, std::llround(*cores_share * 100.0L));
    env["CUDA_DEVICE_SM_LIMIT"] = std::to_string(percent);
  }
  if (!alloc.share_id.empty()) env["NODETOPO_GPU_" + i + "_SHARE_ID"] = alloc.share_id;
  return {};
}

}  // namespace

std::optional<long double> parse_quantity(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t end = 0;
  long double number = 0;
  try {
    number = std::stold(text, &end);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string suffix = text.substr(end);
  static const std::map<std::string, long double> factors = {{"", 1.0L},
                                                             {"m", 1e-3L},
                                                             {"k", 1e3L},
                                                             {"M", 1e6L},
                                                             {"G", 1e9L},
                                                             {"T", 1e12L},
                                                             {"Ki", 1024.0L},
                                                             {"Mi", 1048576.0L},
                                                             {"Gi", 1073741824.0L},
                                                             {"Ti", 1099511627776.0L}};
  const auto f = factors.find(suffix);
  if (f == factors.end() || number < 0) return std::nullopt;
  return number * f->second;
}

VendorCdiIndex VendorCdiIndex::scan(const std::vector<std::string>& dirs,
                                    const std::string& driver) {
  VendorCdiIndex index;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file(ec) && (ext == ".json" || ext == ".yaml" || ext == ".yml"))
        files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      try {
        const YAML::Node spec = YAML::LoadFile(file.string());
        const std::string kind = spec["kind"] ? spec["kind"].as<std::string>() : "";
        if (kind.empty() || kind.rfind(driver + "/", 0) == 0) continue;
        for (const auto& dev : spec["devices"]) {
          const std::string name = dev["name"].as<std::string>();
          index.by_kind_[kind].emplace(name, kind + "=" + name);
        }
      } catch (const YAML::Exception& e) {
        spdlog::warn("CDI spec {} skipped: {}", file.string(), e.what());
      }
    }
  }
  return index;
}

std::optional<VendorCdiDevice> VendorCdiIndex::find(const NodeDevice& device) const {
  if (device.kind == DeviceKind::kNic) return std::nullopt;
  const auto kind = by_kind_.find(vendor_kind(device.vendor));
  if (kind == by_kind_.end()) return std::nullopt;
  if (!device.uuid.empty())
    if (auto it = kind->second.find(device.uuid); it != kind->second.end())
      return VendorCdiDevice{it->second};
  if (device.vendor_index)
    if (auto it = kind->second.find(std::to_string(*device.vendor_index)); it != kind->second.end())
      return VendorCdiDevice{it->second};
  return std::nullopt;
}

Result<ClaimSpec> build_claim_spec(const std::string& driver, const std::string& claim_uid,
                                   const std::vector<AllocatedDevice>& allocated,
                                   const std::vector<NodeDevice>& node_devices,
                                   const VendorCdiIndex& vendor) {
  ClaimSpec out;
  const std::string kind = driver + "/claim";
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  int gpu_index = 0;
  int nic_index = 0;
  for (const AllocatedDevice& alloc : allocated) {
    const NodeDevice* device = find_device(node_devices, alloc.device);
    if (device == nullptr)
      return make_error(ErrorCode::kNotFound, "device " + alloc.device + " (request " +
                                                  alloc.request + ") is not on this node any more");
    std::map<std::string, std::string> env;
    std::vector<std::string> nodes;
    PreparedDevice prepared{alloc, {}};
    if (device->kind == DeviceKind::kNic) {
      const std::string j = std::to_string(nic_index++);
      env["NODETOPO_NIC_" + j + "_NETDEV"] = device->netdev;
      env["NODETOPO_NIC_" + j + "_RDMA_DEVICE"] = device->rdma_device;
      env["NODETOPO_NIC_" + j + "_PCI_BUS_ID"] = device->pci_bus_id;
      if (!device->mock) nodes = device->device_nodes;
    } else {
      const int i = gpu_index++;
      const std::string is = std::to_string(i);
      env["NODETOPO_GPU_" + is + "_UUID"] = device->uuid;
      env["NODETOPO_GPU_" + is + "_PCI_BUS_ID"] = device->pci_bus_id;
      if (device->mock) {
        env["NODETOPO_GPU_" + is + "_MOCK"] = "true";
      } else if (auto v = vendor.find(*device)) {
        prepared.cdi_ids.push_back(v->id);  // the vendor's edits: nodes, libraries, hooks
      } else {
        nodes = device->device_nodes;
      }
      if (!alloc.share_id.empty() || !alloc.consumed.empty()) {
        if (auto r = share_env(*device, alloc, i, env); !r)
          return make_error(ErrorCode::kInvalid,
                            "device " + alloc.device + ": " + r.error().message);
      }
    }
    const std::string name = claim_uid + "-" + alloc.device;
    nlohmann::ordered_json edits = nlohmann::ordered_json::object();
    nlohmann::ordered_json env_list = nlohmann::ordered_json::array();
    for (const auto& [k, v] : env)
      env_list.push_back(k + "=" + v);
    edits["env"] = env_list;
    if (!nodes.empty()) {
      nlohmann::ordered_json node_list = nlohmann::ordered_json::array();
      for (const std::string& n : nodes)
        node_list.push_back({{"path", n}});
      edits["deviceNodes"] = node_list;
    }
    devices.push_back({{"name", name}, {"containerEdits", edits}});
    prepared.cdi_ids.push_back(kind + "=" + name);
    out.devices.push_back(std::move(prepared));
  }
  out.spec = {{"cdiVersion", kCdiVersion}, {"kind", kind}, {"devices", devices}};
  return out;
}

std::string claim_spec_path(const std::string& cdi_dir, const std::string& driver,
                            const std::string& claim_uid) {
  return cdi_dir + "/" + driver + "-claim_" + claim_uid + ".json";
}

std::string render_spec(const nlohmann::ordered_json& spec) {
  return spec.dump(2) + "\n";
}

Result<void> write_file_atomic(const std::string& path, const std::string& contents) {
  const fs::path target(path);
  const fs::path tmp = target.parent_path() / ("." + target.filename().string() + ".tmp");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(ErrorCode::kIo, std::strerror(errno), tmp.string());
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return make_error(ErrorCode::kIo, why, tmp.string());
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return make_error(ErrorCode::kIo, why, tmp.string());
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return make_error(ErrorCode::kIo, why, path);
  }
  return {};
}

}  // namespace nodetopo::kubelet
