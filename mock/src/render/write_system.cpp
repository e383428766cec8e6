// CPUs, NUMA nodes, memory and machine identity, in the formats of Linux 6.x.
#include <array>
#include <cstdio>
#include <string>

#include <nodetopo/base/json_escape.hpp>
#include <nodetopo/base/str_cat.hpp>

#include "plan/identity.hpp"
#include "render/writers.hpp"

namespace nodetopo::mock::detail {

namespace {

constexpr std::string_view kIntelFlags =
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi "
    "mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc arch_perfmon pebs "
    "bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf tsc_known_freq pni pclmulqdq "
    "dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 "
    "x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm "
    "3dnowprefetch cpuid_fault epb cat_l3 cat_l2 cdp_l3 invpcid_single intel_ppin cdp_l2 ssbd "
    "mba ibrs ibpb stibp ibrs_enhanced tpr_shadow flexpriority ept vpid ept_ad fsgsbase "
    "tsc_adjust bmi1 avx2 smep bmi2 erms invpcid cqm rdt_a avx512f avx512dq rdseed adx smap "
    "avx512ifma clflushopt clwb intel_pt avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec "
    "xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local avx_vnni avx512_bf16 "
    "wbnoinvd dtherm ida arat pln pts hfi vnmi avx512vbmi umip pku ospke waitpkg avx512_vbmi2 "
    "gfni vaes vpclmulqdq avx512_vnni avx512_bitalg tme avx512_vpopcntdq la57 rdpid "
    "bus_lock_detect cldemote movdiri movdir64b enqcmd fsrm md_clear serialize tsxldtrk "
    "pconfig arch_lbr ibt amx_bf16 avx512_fp16 amx_tile amx_int8 flush_l1d arch_capabilities";

constexpr std::string_view kAmdFlags =
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr "
    "sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl "
    "nonstop_tsc cpuid extd_apicid aperfmperf rapl pni pclmulqdq monitor ssse3 fma cx16 pcid "
    "sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand lahf_lm cmp_legacy svm extapic "
    "cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw ibs skinit wdt tce topoext "
    "perfctr_core perfctr_nb bpext perfctr_llc mwaitx cpb cat_l3 cdp_l3 invpcid_single "
    "hw_pstate ssbd mba ibrs ibpb stibp vmmcall fsgsbase bmi1 avx2 smep bmi2 erms invpcid cqm "
    "rdt_a avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw "
    "avx512vl xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local "
    "avx512_bf16 clzero irperf xsaveerptr rdpru wbnoinvd amd_ppin arat npt lbrv svm_lock "
    "nrip_save tsc_scale vmcb_clean flushbyasid decodeassists pausefilter pfthreshold avic "
    "v_vmsave_vmload vgif x2avic v_spec_ctrl vnmi avx512vbmi umip pku ospke avx512_vbmi2 gfni "
    "vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq la57 rdpid overflow_recov "
    "succor smca fsrm flush_l1d";

std::string cpu_dir(std::uint32_t cpu) {
  return "sys/devices/system/cpu/cpu" + std::to_string(cpu);
}

std::string range_list(std::size_t count) {
  if (count == 0) return "";
  if (count == 1) return "0";
  return "0-" + std::to_string(count - 1);
}

// "Key:" padded to 16 columns, the value right-aligned in 8, then " kB" — /proc/meminfo's form.
std::string meminfo_line(std::string_view key, std::uint64_t bytes) {
  std::string label = std::string(key) + ":";
  if (label.size() < 16) label.append(16 - label.size(), ' ');
  return label + kb_field(bytes, 8) + "\n";
}

std::string count_line(std::string_view key, std::uint64_t value, int width) {
  std::string label = std::string(key) + ":";
  if (label.size() < 16) label.append(16 - label.size(), ' ');
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%*llu", width, static_cast<unsigned long long>(value));
  return label + buf.data() + "\n";
}

std::string size_k(std::uint64_t bytes) {
  return std::to_string(bytes / 1024) + "K";
}

void write_cpus(const Plan& plan, ImageWriter& out) {
  const CpuSpec& c = plan.profile->cpu;
  const auto total = static_cast<std::uint32_t>(plan.cpus.size());
  const std::string base = "sys/devices/system/cpu";
  out.attr(base + "/online", range_list(total));
  out.attr(base + "/possible", range_list(total));
  out.attr(base + "/present", range_list(total));
  out.attr(base + "/offline", "");
  out.attr(base + "/isolated", "");
  out.attr(base + "/kernel_max", "8191");

  // Sibling sets, computed once per core and per socket.
  std::vector<CpuSet> core_cpus(std::size_t{c.sockets} * c.cores_per_socket);
  std::vector<CpuSet> package_cpus(c.sockets);
  for (std::uint32_t cpu = 0; cpu < total; ++cpu) {
    const CpuPlace& p = plan.cpus[cpu];
    core_cpus[std::size_t{p.socket} * c.cores_per_socket + p.core].insert(cpu);
    package_cpus[p.socket].insert(cpu);
  }
  const std::uint32_t l3_cores =
      c.caches && c.caches->l3_cores != 0 ? c.caches->l3_cores : c.cores_per_socket;
  std::vector<CpuSet> l3_cpus(std::size_t{c.sockets} * (c.cores_per_socket / l3_cores));
  for (std::uint32_t cpu = 0; cpu < total; ++cpu) {
    const CpuPlace& p = plan.cpus[cpu];
    l3_cpus[std::size_t{p.socket} * (c.cores_per_socket / l3_cores) + p.core / l3_cores].insert(
        cpu);
  }

  for (std::uint32_t cpu = 0; cpu < total; ++cpu) {
    const CpuPlace& p = plan.cpus[cpu];
    const std::string dir = cpu_dir(cpu);
    if (cpu != 0) out.attr(dir + "/online", "1");  // cpu0 cannot be offlined: no attribute
    out.link("sys/bus/cpu/devices/cpu" + std::to_string(cpu), dir);
    const std::string topo = dir + "/topology";
    const CpuSet& core = core_cpus[std::size_t{p.socket} * c.cores_per_socket + p.core];
    const CpuSet& package = package_cpus[p.socket];
    out.attr(topo + "/physical_package_id", std::to_string(p.socket));
    out.attr(topo + "/die_id", "0");
    out.attr(topo + "/core_id", std::to_string(p.core));
    for (const auto& [name, set] :
         {std::pair{"core_cpus", &core}, std::pair{"thread_siblings", &core},
          std::pair{"core_siblings", &package}, std::pair{"package_cpus", &package},
          std::pair{"die_cpus", &package}}) {
      out.attr(topo + "/" + name, cpumask(*set, total));
      out.attr(topo + "/" + name + "_list", set->to_list());
    }
    if (!c.caches) continue;
    struct Level {
      int level;
      const char* type;
      std::uint64_t bytes;
      std::uint32_t ways;
      const CpuSet* shared;
      std::uint32_t id;
    };
    const std::uint32_t global_core = p.socket * c.cores_per_socket + p.core;
    const std::uint32_t l3_index = p.socket * (c.cores_per_socket / l3_cores) + p.core / l3_cores;
    const std::array<Level, 4> levels{{
        {1, "Data", c.caches->l1d_bytes, 12, &core, global_core},
        {1, "Instruction", c.caches->l1i_bytes, 8, &core, global_core},
        {2, "Unified", c.caches->l2_bytes, 16, &core, global_core},
        {3, "Unified", c.caches->l3_bytes, 15, &l3_cpus[l3_index], l3_index},
    }};
    for (std::size_t i = 0; i < levels.size(); ++i) {
      const Level& l = levels[i];
      const std::string cdir = dir + "/cache/index" + std::to_string(i);
      out.attr(cdir + "/level", std::to_string(l.level));
      out.attr(cdir + "/type", l.type);
      out.attr(cdir + "/size", size_k(l.bytes));
      out.attr(cdir + "/coherency_line_size", "64");
      out.attr(cdir + "/ways_of_associativity", std::to_string(l.ways));
      out.attr(cdir + "/number_of_sets", std::to_string(l.bytes / (64ULL * l.ways)));
      out.attr(cdir + "/physical_line_partition", "1");
      out.attr(cdir + "/shared_cpu_map", cpumask(*l.shared, total));
      out.attr(cdir + "/shared_cpu_list", l.shared->to_list());
      out.attr(cdir + "/id", std::to_string(l.id));
    }
  }
}

void write_numa(const Plan& plan, ImageWriter& out) {
  const Profile& p = *plan.profile;
  const auto total = static_cast<std::uint32_t>(plan.cpus.size());
  const std::string base = "sys/devices/system/node";
  CpuSet with_cpus;
  for (std::size_t i = 0; i < plan.numa_cpus.size(); ++i) {
    if (!plan.numa_cpus[i].empty()) with_cpus.insert(static_cast<std::uint32_t>(i));
  }
  out.attr(base + "/online", range_list(p.numa.size()));
  out.attr(base + "/possible", range_list(p.numa.size()));
  out.attr(base + "/has_cpu", with_cpus.to_list());
  out.attr(base + "/has_memory", range_list(p.numa.size()));
  out.attr(base + "/has_normal_memory", range_list(p.numa.size()));
  for (std::size_t i = 0; i < p.numa.size(); ++i) {
    const NumaSpec& n = p.numa[i];
    const std::string id = std::to_string(i);
    const std::string dir = base + "/node" + id;
    out.link("sys/bus/node/devices/node" + id, dir);
    out.attr(dir + "/cpulist", plan.numa_cpus[i].to_list());
    out.attr(dir + "/cpumap", cpumask(plan.numa_cpus[i], total));
    std::string distance;
    for (std::uint32_t d : plan.distances[i]) {
      str_append(distance, distance.empty() ? "" : " ", std::to_string(d));
    }
    out.attr(dir + "/distance", distance);
    for (std::uint32_t cpu : plan.numa_cpus[i].members()) {
      out.link(dir + "/cpu" + std::to_string(cpu), cpu_dir(cpu));
    }
    // A freshly booted node: 2% of its memory in use.
    const std::uint64_t used = n.memory_bytes / 50 / 4096 * 4096;
    const std::string prefix = "Node " + id + " ";
    std::string meminfo;
    meminfo += prefix + meminfo_line("MemTotal", n.memory_bytes);
    meminfo += prefix + meminfo_line("MemFree", n.memory_bytes - used);
    meminfo += prefix + meminfo_line("MemUsed", used);
    meminfo += prefix + meminfo_line("Active", used / 2);
    meminfo += prefix + meminfo_line("Inactive", used / 4);
    meminfo += prefix + meminfo_line("FilePages", used / 2);
    meminfo += prefix + meminfo_line("AnonPages", used / 4);
    meminfo += prefix + count_line("HugePages_Total", 0, 5);
    meminfo += prefix + count_line("HugePages_Free", 0, 5);
    meminfo += prefix + count_line("HugePages_Surp", 0, 5);
    out.file(dir + "/meminfo", meminfo);
    for (const char* size : {"hugepages-2048kB", "hugepages-1048576kB"}) {
      const std::string hp = dir + "/hugepages/" + size;
      out.attr(hp + "/nr_hugepages", "0");
      out.attr(hp + "/free_hugepages", "0");
      out.attr(hp + "/surplus_hugepages", "0");
    }
  }
  for (const char* size : {"hugepages-2048kB", "hugepages-1048576kB"}) {
    const std::string hp = std::string("sys/kernel/mm/hugepages/") + size;
    out.attr(hp + "/nr_hugepages", "0");
    out.attr(hp + "/free_hugepages", "0");
  }
}

void write_cpuinfo(const Plan& plan, ImageWriter& out) {
  const CpuSpec& c = plan.profile->cpu;
  const bool amd = c.vendor == "AuthenticAMD";
  // APIC IDs: socket in the high bits, then core, then thread (Linux x86 numbering).
  std::uint32_t core_bits = 0;
  while ((1U << core_bits) < c.cores_per_socket * c.threads_per_core)
    ++core_bits;
  const std::uint64_t l3 = c.caches ? c.caches->l3_bytes : 0;
  std::array<char, 32> mhz{};
  std::snprintf(mhz.data(), mhz.size(), "%u.000", c.mhz);
  std::array<char, 32> bogomips{};
  std::snprintf(bogomips.data(), bogomips.size(), "%u.00", c.mhz * 2);
  std::string text;
  text.reserve(plan.cpus.size() * 2048);
  for (std::uint32_t cpu = 0; cpu < plan.cpus.size(); ++cpu) {
    const CpuPlace& p = plan.cpus[cpu];
    const std::uint32_t apic = (p.socket << core_bits) | (p.core * c.threads_per_core + p.thread);
    text += "processor\t: " + std::to_string(cpu) + "\n";
    text += "vendor_id\t: " + c.vendor + "\n";
    text += "cpu family\t: " + std::to_string(c.family) + "\n";
    text += "model\t\t: " + std::to_string(c.model) + "\n";
    text += "model name\t: " + c.model_name + "\n";
    text += "stepping\t: " + std::to_string(c.stepping) + "\n";
    text += std::string("microcode\t: ") + (amd ? "0xa101148" : "0x2b000590") + "\n";
    text += std::string("cpu MHz\t\t: ") + mhz.data() + "\n";
    if (l3 != 0) text += "cache size\t: " + std::to_string(l3 / 1024) + " KB\n";
    text += "physical id\t: " + std::to_string(p.socket) + "\n";
    text += "siblings\t: " + std::to_string(c.cores_per_socket * c.threads_per_core) + "\n";
    text += "core id\t\t: " + std::to_string(p.core) + "\n";
    text += "cpu cores\t: " + std::to_string(c.cores_per_socket) + "\n";
    text += "apicid\t\t: " + std::to_string(apic) + "\n";
    text += "initial apicid\t: " + std::to_string(apic) + "\n";
    text += "fpu\t\t: yes\nfpu_exception\t: yes\n";
    text += std::string("cpuid level\t: ") + (amd ? "16" : "32") + "\n";
    text += "wp\t\t: yes\n";
    text += "flags\t\t: " + std::string(amd ? kAmdFlags : kIntelFlags) + "\n";
    text += "bugs\t\t: spectre_v1 spectre_v2 spec_store_bypass\n";
    text += std::string("bogomips\t: ") + bogomips.data() + "\n";
    text += "clflush size\t: 64\ncache_alignment\t: 64\n";
    text += std::string("address sizes\t: ") +
            (amd ? "52 bits physical, 57 bits virtual" : "46 bits physical, 57 bits virtual") +
            "\n";
    text += "power management:\n\n";
  }
  out.file("proc/cpuinfo", std::move(text));
}

void write_meminfo(const Plan& plan, ImageWriter& out) {
  std::uint64_t total = 0;
  for (const NumaSpec& n : plan.profile->numa)
    total += n.memory_bytes;
  const std::uint64_t used = total / 50 / 4096 * 4096;
  std::string m;
  m += meminfo_line("MemTotal", total);
  m += meminfo_line("MemFree", total - used);
  m += meminfo_line("MemAvailable", total - used / 2);
  m += meminfo_line("Buffers", used / 16);
  m += meminfo_line("Cached", used / 2);
  m += meminfo_line("SwapCached", 0);
  m += meminfo_line("Active", used / 2);
  m += meminfo_line("Inactive", used / 4);
  m += meminfo_line("SwapTotal", 0);
  m += meminfo_line("SwapFree", 0);
  m += meminfo_line("AnonPages", used / 4);
  m += meminfo_line("Shmem", used / 64);
  m += count_line("HugePages_Total", 0, 8);
  m += count_line("HugePages_Free", 0, 8);
  m += count_line("HugePages_Rsvd", 0, 8);
  m += count_line("HugePages_Surp", 0, 8);
  m += meminfo_line("Hugepagesize", 2048 * 1024);
  m += meminfo_line("Hugetlb", 0);
  out.file("proc/meminfo", std::move(m));
}

// One JSON object of the present fields, in the given order.
std::string json_object(std::initializer_list<std::pair<const char*, const std::string*>> fields) {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : fields) {
    if (value->empty()) continue;
    out += first ? "\n" : ",\n";
    first = false;
    out += "   ";
    json::append_string(out, key);
    out += ": ";
    json::append_string(out, *value);
  }
  return out + (first ? "}" : "\n  }");
}

void write_cloud_init(const MachineSpec::CloudInit& c, ImageWriter& out) {
  if (!c.present) return;
  std::string text = "{\n  \"ds\": {\n  \"meta_data\": " +
                     json_object({{"instance-id", &c.instance_id},
                                  {"instance-life-cycle", &c.life_cycle},
                                  {"instance-type", &c.instance_type}}) +
                     "\n  },\n  \"v1\": " +
                     json_object({{"availability_zone", &c.availability_zone},
                                  {"cloud_name", &c.cloud_name},
                                  {"instance_id", &c.instance_id},
                                  {"platform", &c.platform},
                                  {"region", &c.region}}) +
                     "\n}\n";
  out.file("run/cloud-init/instance-data.json", std::move(text));
}

void write_identity(const Plan& plan, ImageWriter& out) {
  const Profile& p = *plan.profile;
  const MachineSpec& m = p.machine;
  const std::string hostname = m.hostname.empty() ? "mock-" + p.name : m.hostname;
  out.attr("proc/sys/kernel/hostname", hostname);
  out.attr("proc/sys/kernel/osrelease", m.kernel_release);
  out.attr("proc/sys/kernel/ostype", "Linux");
  out.attr("proc/version",
           "Linux version " + m.kernel_release + " (nodetopo-mock) #1 SMP PREEMPT_DYNAMIC");
  out.link("sys/class/dmi/id", "sys/devices/virtual/dmi/id");
  const std::string dmi = "sys/devices/virtual/dmi/id";
  for (const auto& [key, value] :
       {std::pair{"product_name", m.product_name}, std::pair{"sys_vendor", m.sys_vendor},
        std::pair{"board_vendor", m.board_vendor}, std::pair{"board_name", m.board_name},
        std::pair{"bios_vendor", m.bios_vendor}, std::pair{"bios_version", m.bios_version}}) {
    if (!value.empty()) out.attr(dmi + "/" + key, value);
  }
  out.attr(dmi + "/chassis_type", "23");  // rack mount chassis
  out.attr(dmi + "/product_uuid", identity_uuid(p.seed, "dmi", "product_uuid"));
  write_cloud_init(m.cloud_init, out);
}

}  // namespace

void write_system(const Plan& plan, ImageWriter& out) {
  write_cpus(plan, out);
  write_numa(plan, out);
  write_cpuinfo(plan, out);
  write_meminfo(plan, out);
  write_identity(plan, out);
}

}  // namespace nodetopo::mock::detail
