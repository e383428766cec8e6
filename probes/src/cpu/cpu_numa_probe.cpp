#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <hwloc.h>
#include <spdlog/spdlog.h>

#include <nodetopo/base/log.hpp>
#include <nodetopo/probes/cpu_numa_probe.hpp>
#include <nodetopo/probes/environment.hpp>
#include <nodetopo/probes/parsers.hpp>
#include <nodetopo/topology/ids.hpp>

#include "cpu/hwloc_environment.hpp"
#include "cpu/hwloc_guard.hpp"

namespace nodetopo::probes {

namespace {

// Components hwloc must not use, by its API (hwloc_topology_set_components): x86 would describe
// this machine's CPU by CPUID, not the root's; no_os would add this machine's uname
// (Architecture) to a capture's; xml and synthetic would replace the sysfs backend. What remains
// is the Linux sysfs backend alone, as HWLOC_COMPONENTS=linux,stop gave (checked with
// HWLOC_COMPONENTS_VERBOSE: "enabled discovery components: linux(0x7a)", identical XML). Not
// "linuxio": hwloc 2.9 maps that old name onto the Linux backend's own I/O and annotation phases.
constexpr const char* kBlacklistedComponents[] = {"x86", "no_os", "xml", "synthetic"};

class HwlocTopology {
 public:
  HwlocTopology() = default;
  ~HwlocTopology() {
    if (topo_ != nullptr) hwloc_topology_destroy(topo_);
  }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;
  hwloc_topology_t* out() { return &topo_; }
  hwloc_topology_t get() const { return topo_; }

 private:
  hwloc_topology_t topo_ = nullptr;
};

CpuSet to_cpu_set(hwloc_const_bitmap_t bitmap) {
  CpuSet set;
  if (bitmap == nullptr || hwloc_bitmap_weight(bitmap) < 0) return set;
  for (int i = hwloc_bitmap_first(bitmap); i >= 0; i = hwloc_bitmap_next(bitmap, i)) {
    set.insert(static_cast<std::uint32_t>(i));
  }
  return set;
}

std::string info(hwloc_obj_t obj, const char* key) {
  const char* value = hwloc_obj_get_info_by_name(obj, key);
  return value != nullptr ? std::string(value) : std::string();
}

hwloc_obj_t ancestor_package(hwloc_obj_t obj) {
  for (hwloc_obj_t cur = obj->parent; cur != nullptr; cur = cur->parent) {
    if (cur->type == HWLOC_OBJ_PACKAGE) return cur;
  }
  return nullptr;
}

}  // namespace

std::vector<EnvVar> hwloc_environment(const SysRoot& root) {
  std::vector<EnvVar> vars = {
      {"HWLOC_FSROOT",
       root.path() == "/" ? std::nullopt : std::optional<std::string>(root.path().string())},
      {"HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES", "1"},
      {"HWLOC_XMLFILE", std::nullopt},
      {"HWLOC_SYNTHETIC", std::nullopt},
      // A user's component list would override the blacklist above.
      {"HWLOC_COMPONENTS", std::nullopt},
      // hwloc's Linux backend creates (or truncates) the file this names and writes the host's
      // name, OS and page size into it: a discovery reads, it never writes a file.
      {"HWLOC_DUMP_NOFILE_INFO", std::nullopt},
      // The Linux backend is part of libhwloc itself; its plugins (PCI through libpciaccess, GL,
      // OpenCL, libxml2) are I/O discovery this probe turns off anyway. Not loading them saves
      // about 1.5 ms of dlopen per discovery.
      {"HWLOC_PLUGINS_PATH", std::string("/nonexistent/nodetopo-no-hwloc-plugins")},
  };
  // hwloc prints its critical errors on stderr itself; with JSON logs every stderr line must be a
  // JSON object, so it stays silent there (the probe reports the failure itself).
  if (current_log_format() == LogFormat::kJson) vars.push_back({"HWLOC_HIDE_ERRORS", "2"});
  return vars;
}

Result<void> CpuNumaProbe::discover(ProbeContext& ctx, TopologyBuilder& builder) {
  const SysRoot& root = ctx.root();
  // The environment is main's (nodetopo/probes/environment.hpp): here it is only checked.
  if (auto wrong = environment_mismatch(hwloc_environment(root))) {
    return make_error(ErrorCode::kInvalid, environment_not_written(*wrong));
  }
  HwlocTopology topo;
  if (hwloc_topology_init(topo.out()) != 0) {
    return make_error(ErrorCode::kIo, "hwloc_topology_init failed");
  }
  for (const char* component : kBlacklistedComponents) {
    if (hwloc_topology_set_components(topo.get(), HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                      component) != 0) {
      ctx.log().debug("hwloc has no component {} to leave out", component);
    }
  }
  // A cgroup CPU limit on the agent's container must not shrink the machine it reports. Memory
  // attributes and CPU kinds are not part of the model: without them hwloc skips reading
  // every CPU's cpufreq and every node's access classes (680 failed opens on dgx-h100).
  hwloc_topology_set_flags(topo.get(), HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED |
                                           HWLOC_TOPOLOGY_FLAG_NO_MEMATTRS |
                                           HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS);
  hwloc_topology_set_io_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_cache_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_icache_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_type_filter(topo.get(), HWLOC_OBJ_MISC, HWLOC_TYPE_FILTER_KEEP_NONE);
  // Cores and dies are not part of the model either: without them hwloc reads one file per CPU
  // (package_cpus) instead of four (core_cpus, core_id, cluster_cpus, die_cpus). Groups stay:
  // hwloc makes one for a NUMA node that is a part of a package (AMD NPS4, Intel SNC), which is
  // how the node keeps its own CPU set.
  for (const hwloc_obj_type_t type : {HWLOC_OBJ_CORE, HWLOC_OBJ_DIE})
    hwloc_topology_set_type_filter(topo.get(), type, HWLOC_TYPE_FILTER_KEEP_NONE);
  // Everything hwloc opens under a root other than "/" is resolved inside it by the kernel; on
  // every root, the cache and cluster descriptions nothing here uses are not read, cpuinfo is
  // cut to what hwloc's parser reads of it, and a package's mask is read for its first CPU only
  // (with no cores, dies or clusters kept, hwloc drops the other CPUs' copies; hwloc_guard.hpp).
  std::optional<detail::HwlocGuard> guard;
  guard.emplace(root, detail::HwlocGuard::Mode{.contain = root.path() != "/",
                                               .skip_unused_descriptions = true,
                                               .shorten_cpuinfo = true,
                                               .skip_known_package_siblings = true});
  const int loaded = hwloc_topology_load(topo.get());
  const int load_errno = errno;
  if (guard) {
    for (const std::string& refusal : guard->refusals())
      ctx.warn("hwloc: " + refusal);
    guard.reset();
  }
  if (loaded != 0) {
    errno = load_errno;
    return make_error(ErrorCode::kIo,
                      std::string("hwloc could not load the CPU topology: ") + std::strerror(errno),
                      root.host_path("sys/devices/system"));
  }

  hwloc_obj_t machine_obj = hwloc_get_root_obj(topo.get());
  auto& machine = builder.node(builder.root()).as<MachineInfo>();
  machine.architecture = info(machine_obj, "Architecture");
  machine.product_name = info(machine_obj, "DMIProductName");
  machine.board_vendor = info(machine_obj, "DMIBoardVendor");
  machine.sys_vendor = info(machine_obj, "DMISysVendor");
  machine.os_release = info(machine_obj, "OSRelease");
  machine.memory_bytes = machine_obj->total_memory;

  const int npackages = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_PACKAGE);
  // Packages are named by their OS index (physical_package_id) when every package has its own.
  // s390x, POWER and ia64 report none or repeat one: then all are named by hwloc's logical
  // index, as lstopo numbers them, instead of collapsing into one node.
  std::set<unsigned> os_indexes;
  bool os_ids_usable = true;
  for (int i = 0; i < npackages; ++i) {
    hwloc_obj_t obj =
        hwloc_get_obj_by_type(topo.get(), HWLOC_OBJ_PACKAGE, static_cast<unsigned>(i));
    if (obj == nullptr || obj->os_index == HWLOC_UNKNOWN_INDEX ||
        !os_indexes.insert(obj->os_index).second) {
      os_ids_usable = false;
    }
  }
  std::map<hwloc_obj_t, NodeIndex> package_nodes;
  for (int i = 0; i < npackages; ++i) {
    hwloc_obj_t obj =
        hwloc_get_obj_by_type(topo.get(), HWLOC_OBJ_PACKAGE, static_cast<unsigned>(i));
    if (obj == nullptr) continue;  // hwloc's contract: NULL past the count; guards -O2 analysis
    const unsigned id = os_ids_usable ? obj->os_index : obj->logical_index;
    PackageInfo pkg;
    pkg.os_index = obj->os_index;
    pkg.cpus = to_cpu_set(obj->cpuset);
    pkg.cpu_vendor = info(obj, "CPUVendor");
    pkg.cpu_model = info(obj, "CPUModel");
    auto added =
        builder.add(NodeKind::kPackage, node_id::package(id), builder.root(), std::move(pkg));
    if (!added) {
      ctx.warn(added.error());
      continue;
    }
    package_nodes.emplace(obj, *added);
  }

  const int nnuma = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_NUMANODE);
  std::vector<NodeIndex> numa_index(static_cast<std::size_t>(std::max(nnuma, 0)), kNoNode);
  for (int i = 0; i < nnuma; ++i) {
    hwloc_obj_t obj =
        hwloc_get_obj_by_type(topo.get(), HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    if (obj == nullptr) continue;
    NumaInfo numa;
    numa.os_index = obj->os_index;
    numa.memory_bytes = obj->attr != nullptr ? obj->attr->numanode.local_memory : 0;
    if (obj->subtype != nullptr) numa.subtype = obj->subtype;
    // hwloc gives a CPU-less node the cpuset of the place it is attached to (its locality); the
    // model wants the node's own CPUs, which special memory nodes do not have.
    if (numa.subtype.empty()) numa.cpus = to_cpu_set(obj->cpuset);
    if (const std::string bus_id = info(obj, "PCIBusID"); !bus_id.empty()) {
      if (auto addr = parse_pci_address(bus_id)) numa.device = *addr;
    }
    NodeIndex parent = builder.root();
    // Where hwloc put it: under its package (found by object, not by a name that may repeat),
    // else under the machine.
    if (hwloc_obj_t pkg = ancestor_package(obj)) {
      if (auto found = package_nodes.find(pkg); found != package_nodes.end()) {
        parent = found->second;
      }
    }
    auto added =
        builder.add(NodeKind::kNumaNode, node_id::numa(obj->os_index), parent, std::move(numa));
    if (!added) {
      ctx.warn(added.error());
      continue;
    }
    numa_index[static_cast<std::size_t>(obj->logical_index)] = *added;
  }

  // NUMA distances as hwloc read them from the root's node*/distance files.
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hwloc_distances_get_by_name(topo.get(), "NUMALatency", &nr, &dist, 0) == 0 && nr == 1 &&
      dist != nullptr) {
    for (unsigned a = 0; a < dist->nbobjs; ++a) {
      for (unsigned b = 0; b < dist->nbobjs; ++b) {
        const hwloc_obj_t from = dist->objs[a];
        const hwloc_obj_t to = dist->objs[b];
        if (from == nullptr || to == nullptr || from->logical_index >= numa_index.size() ||
            to->logical_index >= numa_index.size()) {
          continue;
        }
        Link link;
        link.kind = LinkKind::kNumaDistance;
        link.from = numa_index[from->logical_index];
        link.to = numa_index[to->logical_index];
        link.value = static_cast<std::int64_t>(dist->values[a * dist->nbobjs + b]);
        if (link.from != kNoNode && link.to != kNoNode) builder.add_link(link);
      }
    }
    hwloc_distances_release(topo.get(), dist);
  }
  return {};
}

}  // namespace nodetopo::probes
