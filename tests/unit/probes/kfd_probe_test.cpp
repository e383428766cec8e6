// KFD probe: the real KFD captures (MI210 hives, MI300X and MI308X in CPX mode) combined with a
// minimal PCI tree holding one function per physical GPU, and hand-made broken trees.
#include <array>
#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "devices_fake_host.hpp"

namespace nodetopo::test {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

namespace fs = std::filesystem;

struct Gpu {
  std::string bdf;
  std::uint32_t kfd_node;    // first KFD node of the GPU
  std::uint32_t partitions;  // AcceleratorInfo::partitions
  std::uint64_t unique_id;
};

// A capture's nodes under sys/class/kfd/kfd/topology, plus one AMD PCI function per physical GPU
// at the addresses the machine had (domain + location_id of each GPU's first partition).
void build(FakeHost& host, const fs::path& nodes, const std::vector<Gpu>& gpus,
           std::uint16_t device_id, std::uint32_t class_code) {
  host.copy_kfd_nodes(nodes);
  for (const Gpu& gpu : gpus)
    host.add_pci({gpu.bdf, 0x1002, device_id, class_code, "amdgpu"});
}

std::string accel_id(const std::string& bdf) {
  return "accelerator/" + bdf;
}

// xGMI links as (from bdf, to bdf) pairs.
std::set<std::pair<std::string, std::string>> xgmi_pairs(const Topology& topo) {
  std::set<std::pair<std::string, std::string>> out;
  for (const Link& link : topo.links()) {
    if (link.kind != LinkKind::kXgmi) continue;
    out.emplace(topo.node(topo.node(link.from).parent).as<PciFunctionInfo>().address.to_string(),
                topo.node(topo.node(link.to).parent).as<PciFunctionInfo>().address.to_string());
  }
  return out;
}

std::vector<const Link*> xgmi_links(const Topology& topo) {
  std::vector<const Link*> out;
  for (const Link& link : topo.links()) {
    if (link.kind == LinkKind::kXgmi) out.push_back(&link);
  }
  return out;
}

std::string hex16(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Counts the opens of every file below `top`, by path: inotify watches on each directory report
// every open of a file in it, whoever makes it.
class OpenCounter {
 public:
  explicit OpenCounter(const fs::path& top) : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    EXPECT_GE(fd_, 0);
    watch(top);
    for (const auto& entry : fs::recursive_directory_iterator(top)) {
      if (entry.is_directory() && !entry.is_symlink()) watch(entry.path());
    }
  }
  OpenCounter(const OpenCounter&) = delete;
  OpenCounter& operator=(const OpenCounter&) = delete;
  ~OpenCounter() { ::close(fd_); }

  // Opens of files (not directories) since construction, by path.
  std::map<fs::path, int> file_opens() {
    alignas(inotify_event) std::array<char, 65536> events{};
    for (ssize_t n = 0; (n = ::read(fd_, events.data(), events.size())) > 0;) {
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(events.data() + at);  // NOLINT
        if ((event->mask & IN_OPEN) != 0 && (event->mask & IN_ISDIR) == 0 && event->len > 0) {
          ++opens_[dirs_.at(event->wd) / event->name];
        }
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    }
    return opens_;
  }

 private:
  void watch(const fs::path& dir) {
    const int wd = ::inotify_add_watch(fd_, dir.c_str(), IN_OPEN);
    ASSERT_GE(wd, 0) << dir;
    dirs_[wd] = dir;
  }
  int fd_;
  std::map<int, fs::path> dirs_;
  std::map<fs::path, int> opens_;
};

// ---------------------------------------------------------------------------------------------
// MI210: 8 GPUs in two xGMI hives of 4, no partitions.

const std::vector<Gpu> kMi210 = {
    {"0000:63:00.0", 2, 0, 1801979520617338022ULL},
    {"0000:43:00.0", 3, 0, 5847760019078012339ULL},
    {"0000:03:00.0", 4, 0, 10645161697164847644ULL},
    {"0000:26:00.0", 5, 0, 4847253685048710349ULL},
    {"0000:e3:00.0", 6, 0, 12585367064092601175ULL},
    {"0000:c3:00.0", 7, 0, 11779194899033552202ULL},
    {"0000:83:00.0", 8, 0, 17888023871577450191ULL},
    {"0000:a3:00.0", 9, 0, 14073402507705256557ULL},
};

TEST(KfdCaptures, Mi210TwoHivesOfFour) {
  FakeHost host;
  build(host, captures_dir() / "kfd/topo-mi210-xgmi-pcie/nodes", kMi210, 0x740f, 0x038000);
  const auto d = run(host.sys_root(), device_probes());
  const Topology& topo = d.topology;
  EXPECT_EQ(topo.nodes_of_kind(NodeKind::kAccelerator).size(), 8U);
  std::set<std::string> hives;
  for (const Gpu& gpu : kMi210) {
    const auto& a = topo.node(*topo.find(accel_id(gpu.bdf))).as<AcceleratorInfo>();
    EXPECT_EQ(a.vendor, AcceleratorVendor::kAmd);
    EXPECT_EQ(a.product, "AMD Instinct MI210");
    EXPECT_EQ(a.architecture, "gfx90a");
    EXPECT_EQ(a.index, gpu.kfd_node) << gpu.bdf;
    EXPECT_EQ(a.uuid, "GPU-" + hex16(gpu.unique_id)) << gpu.bdf;
    EXPECT_EQ(a.partitions, 0U);
    hives.insert(a.xgmi_hive_id);
  }
  EXPECT_EQ(hives, (std::set<std::string>{hex16(12609507387757274807ULL),
                                          hex16(18091350218769748594ULL)}));

  // Hive A: KFD nodes 2-5, hive B: 6-9. Every ordered pair inside a hive, none across.
  const std::vector<std::string> hive_a = {"0000:63:00.0", "0000:43:00.0", "0000:03:00.0",
                                           "0000:26:00.0"};
  const std::vector<std::string> hive_b = {"0000:e3:00.0", "0000:c3:00.0", "0000:83:00.0",
                                           "0000:a3:00.0"};
  std::set<std::pair<std::string, std::string>> expected;
  for (const auto* hive : {&hive_a, &hive_b}) {
    for (const std::string& a : *hive) {
      for (const std::string& b : *hive) {
        if (a != b) expected.emplace(a, b);
      }
    }
  }
  EXPECT_EQ(expected.size(), 24U);  // 6 pairs per hive, both directions
  EXPECT_EQ(xgmi_pairs(topo), expected);
  for (const Link* link : xgmi_links(topo)) {
    EXPECT_EQ(link->value, 1);
    EXPECT_EQ(link->bandwidth_mbps, 50000U);
    EXPECT_EQ(topo.node(link->from).kind, NodeKind::kAccelerator);
  }
  EXPECT_EQ(report_of(d, "kfd").status, ProbeStatus::kOk);
  EXPECT_EQ(report_of(d, "accelerator").status, ProbeStatus::kOk);
}

// ---------------------------------------------------------------------------------------------
// MI300X in CPX mode: 63 KFD GPU nodes on 8 GPUs (the GPU at e5 has 7 partitions here).

const std::vector<Gpu> kMi300 = {
    {"0000:05:00.0", 2, 8, 16404946649897475633ULL},
    {"0000:27:00.0", 10, 8, 2472748907779728154ULL},
    {"0000:47:00.0", 18, 8, 15565237874008425757ULL},
    {"0000:65:00.0", 26, 8, 12035684874187068538ULL},
    {"0000:85:00.0", 34, 8, 15304831566906821053ULL},
    {"0000:a7:00.0", 42, 8, 13644590235195043050ULL},
    {"0000:c7:00.0", 50, 8, 13326531576914550249ULL},
    {"0000:e5:00.0", 58, 7, 15931900197903628278ULL},
};

// The accelerator probe (identities, frame-buffer memory) and the KFD probe (partitions, links)
// share one reading of the tree: every properties file of the capture is opened once.
TEST(KfdCaptures, EveryFileOfTheTreeIsOpenedOnce) {
  FakeHost host;
  build(host, captures_dir() / "kfd/topo-mi210-xgmi-pcie/nodes", kMi210, 0x740f, 0x038000);
  // The capture has no mem_banks; one GPU gets two, which both probes would read.
  const fs::path nodes = host.root() / "sys/class/kfd/kfd/topology/nodes";
  host.write("sys/class/kfd/kfd/topology/nodes/2/mem_banks/0/properties",
             "heap_type 1\nsize_in_bytes 1024\n");
  host.write("sys/class/kfd/kfd/topology/nodes/2/mem_banks/1/properties",
             "heap_type 2\nsize_in_bytes 2048\n");
  std::size_t properties = 0;
  for (const auto& entry : fs::recursive_directory_iterator(nodes)) {
    if (entry.path().filename() == "properties" &&
        entry.path().string().find("p2p_links") == std::string::npos) {
      ++properties;
    }
  }
  OpenCounter counter(nodes);
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(xgmi_links(d.topology).size(), 24U);
  const auto opens = counter.file_opens();
  std::size_t read = 0;
  for (const auto& [path, count] : opens) {
    EXPECT_EQ(count, 1) << path;
    if (path.filename() == "properties") ++read;
  }
  // Node, io_link and mem_bank properties (p2p_links are not read).
  EXPECT_EQ(read, properties);
  EXPECT_GT(read, 40U);
  // What the accelerator probe took from the shared reading.
  const auto& gpu =
      d.topology.node(*d.topology.find(accel_id("0000:63:00.0"))).as<AcceleratorInfo>();
  EXPECT_EQ(gpu.memory_bytes, 3072U);
}

void expect_full_mesh(const Topology& topo, const std::vector<Gpu>& gpus) {
  std::set<std::pair<std::string, std::string>> expected;
  for (const Gpu& a : gpus) {
    for (const Gpu& b : gpus) {
      if (a.bdf != b.bdf) expected.emplace(a.bdf, b.bdf);
    }
  }
  EXPECT_EQ(xgmi_pairs(topo), expected);
  // One link per ordered pair of physical GPUs, whatever the number of partitions.
  EXPECT_EQ(xgmi_links(topo).size(), gpus.size() * (gpus.size() - 1));
  for (const Link* link : xgmi_links(topo)) {
    EXPECT_EQ(link->value, 1);
    EXPECT_EQ(link->bandwidth_mbps, 0U);  // KFD reports 0 between partitions of two GPUs
    EXPECT_NE(link->from, link->to);
  }
}

TEST(KfdCaptures, Mi300xCpxCollapsesPartitions) {
  FakeHost host;
  build(host, captures_dir() / "kfd/topo-mi300-cpx/topology/nodes", kMi300, 0x74a1, 0x120000);
  const auto d = run(host.sys_root(), device_probes());
  const Topology& topo = d.topology;
  ASSERT_EQ(topo.nodes_of_kind(NodeKind::kAccelerator).size(), 8U);
  std::uint32_t partitions = 0;
  for (const Gpu& gpu : kMi300) {
    const auto& a = topo.node(*topo.find(accel_id(gpu.bdf))).as<AcceleratorInfo>();
    EXPECT_EQ(a.product, "AMD Instinct MI300X");
    EXPECT_EQ(a.architecture, "gfx942");
    EXPECT_EQ(a.partitions, gpu.partitions) << gpu.bdf;
    EXPECT_EQ(a.index, gpu.kfd_node) << gpu.bdf;
    EXPECT_EQ(a.uuid, "GPU-" + hex16(gpu.unique_id)) << gpu.bdf;
    partitions += a.partitions;
  }
  EXPECT_EQ(partitions, 63U);
  expect_full_mesh(topo, kMi300);
  EXPECT_EQ(report_of(d, "kfd").status, ProbeStatus::kOk);
}

// ---------------------------------------------------------------------------------------------
// MI308X in CPX mode: 32 KFD GPU nodes, 4 per GPU, GPUs in PCI domains 0 and 1.

const std::vector<Gpu> kMi308 = {
    {"0000:0a:00.0", 2, 4, 598046273873802902ULL},
    {"0000:80:00.0", 6, 4, 11803749423592941193ULL},
    {"0000:a4:00.0", 10, 4, 10187445671099294242ULL},
    {"0000:c8:00.0", 14, 4, 9604994527082705072ULL},
    {"0001:0b:00.0", 18, 4, 17466021589395472075ULL},
    {"0001:81:00.0", 22, 4, 1044926823201815193ULL},
    {"0001:a5:00.0", 26, 4, 13372828617950681944ULL},
    {"0001:c9:00.0", 30, 4, 6576958293045616595ULL},
};

// The MI300X tree (65 nodes) is read by several threads where the process may use several CPUs;
// on one CPU by one. Both give the same topology, and the same warnings in the same order (one
// node's properties and one link spoilt, so that there are some).
TEST(KfdCaptures, ReadOnSeveralThreadsAsOnOne) {
  FakeHost host;
  build(host, captures_dir() / "kfd/topo-mi300-cpx/topology/nodes", kMi300, 0x74a1, 0x120000);
  host.write("sys/class/kfd/kfd/topology/nodes/40/properties", "simd_count many\n");
  host.write("sys/class/kfd/kfd/topology/nodes/7/io_links/3/properties", "type\n");
  if (!several_cpus()) GTEST_SKIP() << "one CPU: no second reader thread to compare with";
  const auto many = run(host.sys_root(), device_probes());
  const auto single = run_on_one_cpu(host.sys_root(), device_probes());
  EXPECT_EQ(xgmi_pairs(many.topology), xgmi_pairs(single.topology));
  EXPECT_EQ(xgmi_links(many.topology).size(), xgmi_links(single.topology).size());
  const auto& warnings = report_of(many, "kfd").warnings;
  EXPECT_EQ(warnings, report_of(single, "kfd").warnings);
  ASSERT_GE(warnings.size(), 2U);
  EXPECT_THAT(warnings[0], HasSubstr("nodes/7/io_links/3/properties"));
  EXPECT_THAT(warnings[1], HasSubstr("nodes/40/properties"));
}

TEST(KfdCaptures, Mi308xCpxAcrossTwoPciDomains) {
  FakeHost host;
  build(host, captures_dir() / "kfd/topology-parsing-mi308/topology/nodes", kMi308, 0x74a2,
        0x120000);
  const auto d = run(host.sys_root(), device_probes());
  const Topology& topo = d.topology;
  ASSERT_EQ(topo.nodes_of_kind(NodeKind::kAccelerator).size(), 8U);
  for (const Gpu& gpu : kMi308) {
    const auto& a = topo.node(*topo.find(accel_id(gpu.bdf))).as<AcceleratorInfo>();
    EXPECT_EQ(a.product, "AMD Instinct MI308X");
    EXPECT_EQ(a.partitions, 4U) << gpu.bdf;
    EXPECT_EQ(a.index, gpu.kfd_node) << gpu.bdf;
    // Each CPX partition reports its share of the GPU's 192 GiB as its frame buffer: 48 GiB,
    // the last one 16 MiB less (what the driver keeps).
    EXPECT_EQ(a.memory_bytes, 3 * 51539607552ULL + 51522830336ULL) << gpu.bdf;
  }
  expect_full_mesh(topo, kMi308);
  EXPECT_EQ(report_of(d, "kfd").status, ProbeStatus::kOk);
}

TEST(KfdCaptures, WithoutPciFunctionsEveryGpuIsReportedOnceAndSkipped) {
  FakeHost host;
  host.copy_kfd_nodes(captures_dir() / "kfd/topology-parsing-mi308/topology/nodes");
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_THAT(d.topology.nodes_of_kind(NodeKind::kAccelerator), IsEmpty());
  EXPECT_THAT(xgmi_links(d.topology), IsEmpty());
  const auto& warnings = report_of(d, "kfd").warnings;
  ASSERT_EQ(warnings.size(), 8U);  // one per physical GPU, not one per partition
  EXPECT_THAT(warnings[0], HasSubstr("nodes/2/properties: KFD GPU nodes 2, 3, 4, 5 skipped: no "
                                     "accelerator at PCI address 0000:0a:00.0"));
  EXPECT_THAT(warnings[7], HasSubstr("KFD GPU nodes 30, 31, 32, 33 skipped: no accelerator at "
                                     "PCI address 0001:c9:00.0"));
}

// ---------------------------------------------------------------------------------------------
// Hand-made trees

std::string gpu_properties(std::uint32_t location_id, std::uint64_t unique_id,
                           const std::string& domain = "0") {
  return "cpu_cores_count 0\nsimd_count 304\nmem_banks_count 1\nvendor_id 4098\n"
         "device_id 29857\nlocation_id " +
         std::to_string(location_id) + "\ndomain " + domain +
         "\ngfx_target_version 90402\nunique_id " + std::to_string(unique_id) + "\nhive_id 77\n";
}

std::string io_link(std::uint32_t type, std::uint32_t from, std::uint32_t to,
                    std::uint64_t bandwidth = 50000) {
  return "type " + std::to_string(type) + "\nnode_from " + std::to_string(from) + "\nnode_to " +
         std::to_string(to) + "\nweight 15\nmin_bandwidth " + std::to_string(bandwidth) +
         "\nmax_bandwidth " + std::to_string(bandwidth) + "\nflags 1\n";
}

constexpr std::string_view kNodes = "sys/class/kfd/kfd/topology/nodes";

// CPU node 0 and three GPUs (nodes 1-3 at 05, 06, 07:00.0), fully linked by xGMI, plus PCIe
// links to the CPU.
void three_gpus(FakeHost& host) {
  const std::string n(kNodes);
  host.write(n + "/0/properties", "cpu_cores_count 64\nsimd_count 0\nlocation_id 0\n");
  host.write(n + "/0/io_links/0/properties", io_link(2, 0, 1));
  for (std::uint32_t id = 1; id <= 3; ++id) {
    const std::uint32_t bus = 4 + id;
    host.write(n + "/" + std::to_string(id) + "/properties", gpu_properties(bus << 8, 100 + id));
    int m = 0;
    host.write(n + "/" + std::to_string(id) + "/io_links/" + std::to_string(m++) + "/properties",
               io_link(2, id, 0));
    for (std::uint32_t peer = 1; peer <= 3; ++peer) {
      if (peer == id) continue;
      host.write(n + "/" + std::to_string(id) + "/io_links/" + std::to_string(m++) + "/properties",
                 io_link(11, id, peer));
    }
    char bdf[16];
    std::snprintf(bdf, sizeof bdf, "0000:%02x:00.0", bus);
    host.add_pci({bdf, 0x1002, 0x74a1, 0x120000, "amdgpu"});
  }
}

TEST(KfdProbe, HandMadeMeshIsComplete) {
  FakeHost host;
  three_gpus(host);
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(xgmi_links(d.topology).size(), 6U);
  EXPECT_EQ(report_of(d, "kfd").status, ProbeStatus::kOk);
  EXPECT_EQ(d.topology.node(*d.topology.find("accelerator/0000:05:00.0"))
                .as<AcceleratorInfo>()
                .xgmi_hive_id,
            "000000000000004d");
}

TEST(KfdProbe, GarbagePropertiesSkipOneNodeWithOneWarning) {
  FakeHost host;
  three_gpus(host);
  host.write(std::string(kNodes) + "/2/properties", "simd_count\x01\x02 garbage ??\nlocation_id\n");
  const auto d = run(host.sys_root(), device_probes());
  const Topology& topo = d.topology;
  // Node 2 (06:00.0) is left out of KFD's view; KFD was the only sign of a GPU at 06:00.0 (the
  // hand-made function has no drm/ directory), so there is no accelerator there either. The
  // links between the other two remain.
  EXPECT_EQ(xgmi_pairs(topo),
            (std::set<std::pair<std::string, std::string>>{{"0000:05:00.0", "0000:07:00.0"},
                                                           {"0000:07:00.0", "0000:05:00.0"}}));
  const auto& warnings = report_of(d, "kfd").warnings;
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("topology/nodes/2/properties"));
  EXPECT_FALSE(topo.find("accelerator/0000:06:00.0"));
}

TEST(KfdProbe, NonNumericValueIsGarbageToo) {
  FakeHost host;
  three_gpus(host);
  host.write(std::string(kNodes) + "/3/properties", gpu_properties(0x700, 103, "zero"));
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(xgmi_links(d.topology).size(), 2U);
  const auto& warnings = report_of(d, "kfd").warnings;
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("nodes/3/properties"));
  EXPECT_THAT(warnings[0], HasSubstr("domain"));
}

TEST(KfdProbe, LinkToANodeThatDoesNotExistIsReported) {
  FakeHost host;
  three_gpus(host);
  host.write(std::string(kNodes) + "/1/io_links/9/properties", io_link(11, 1, 99));
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(xgmi_links(d.topology).size(), 6U);
  const auto& warnings = report_of(d, "kfd").warnings;
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("nodes/1/io_links/9/properties"));
  EXPECT_THAT(warnings[0], HasSubstr("KFD node 99, which does not exist"));
}

TEST(KfdProbe, GarbageIoLinkSkipsThatLink) {
  FakeHost host;
  three_gpus(host);
  host.write(std::string(kNodes) + "/1/io_links/1/properties", "type eleven\nnode_to 2\n");
  const auto d = run(host.sys_root(), device_probes());
  // 1 -> 2 is gone; 2 -> 1 is still reported by node 2.
  const auto pairs = xgmi_pairs(d.topology);
  EXPECT_EQ(pairs.size(), 5U);
  EXPECT_FALSE(pairs.contains({"0000:05:00.0", "0000:06:00.0"}));
  EXPECT_TRUE(pairs.contains({"0000:06:00.0", "0000:05:00.0"}));
  const auto& warnings = report_of(d, "kfd").warnings;
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("nodes/1/io_links/1/properties"));
}

// A key given twice spoils its file, and the message names the first line, in file order, whose
// key an earlier line has: in a short file (an io_link, every pair of lines compared) and in a
// long one (a node's properties padded past 48 lines, its keys sorted).
TEST(KfdProbe, KeyGivenTwiceNamesTheFirstRepeatedLine) {
  FakeHost host;
  three_gpus(host);
  // weight and flags both repeat; flags' second line comes first.
  host.write(std::string(kNodes) + "/1/io_links/1/properties",
             "type 11\nweight 15\nnode_to 2\nflags 1\nflags 1\nweight 15\n");
  std::string padded;
  for (int i = 0; i < 60; ++i)
    padded += "pad_" + std::to_string(i) + " 0\n";
  host.write(std::string(kNodes) + "/3/properties",
             padded + "hive_id 1\n" + gpu_properties(0x700, 103) + "pad_7 1\n");
  const auto d = run(host.sys_root(), device_probes());
  const auto pairs = xgmi_pairs(d.topology);
  EXPECT_FALSE(pairs.contains({"0000:05:00.0", "0000:06:00.0"}));
  EXPECT_FALSE(d.topology.find("accelerator/0000:07:00.0"));
  const auto& warnings = report_of(d, "kfd").warnings;
  ASSERT_EQ(warnings.size(), 2U);
  EXPECT_THAT(warnings[0], HasSubstr("nodes/1/io_links/1/properties"));
  EXPECT_THAT(warnings[0], HasSubstr("'flags' appears twice"));
  EXPECT_THAT(warnings[1], HasSubstr("nodes/3/properties"));
  EXPECT_THAT(warnings[1], HasSubstr("'hive_id' appears twice"));
}

// Directories of the tree that are links (a capture's, or a kernel's that moved them) are read
// by path through the root, with the same result and messages naming the tree's paths.
TEST(KfdProbe, DirectoriesThatAreLinksAreReadByPath) {
  FakeHost host;
  three_gpus(host);
  const fs::path nodes = host.root() / kNodes;
  const fs::path moved = host.root() / "sys/devices/virtual/kfd/moved";
  fs::create_directories(moved);
  // A node directory, and an io_link directory, each replaced by a link to where it went.
  fs::rename(nodes / "2", moved / "2");
  fs::create_symlink("../../../../../devices/virtual/kfd/moved/2", nodes / "2");
  fs::rename(nodes / "3/io_links/1", moved / "link31");
  fs::create_symlink("../../../../../../../devices/virtual/kfd/moved/link31",
                     nodes / "3/io_links/1");
  // And one whose target lacks its properties: the warning names the path in the tree.
  fs::create_directories(moved / "empty");
  fs::create_symlink("../../../../../../../devices/virtual/kfd/moved/empty",
                     nodes / "1/io_links/9");
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(xgmi_links(d.topology).size(), 6U);
  const auto& warnings = report_of(d, "kfd").warnings;
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("topology/nodes/1/io_links/9/properties"));
}

TEST(KfdProbe, GpuWithoutPciFunctionIsReportedAndItsLinksDropped) {
  FakeHost host;
  three_gpus(host);
  const std::string n(kNodes);
  host.write(n + "/4/properties", gpu_properties(0x0900, 104));
  host.write(n + "/4/io_links/0/properties", io_link(11, 4, 1));
  host.write(n + "/1/io_links/3/properties", io_link(11, 1, 4));
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(xgmi_links(d.topology).size(), 6U);
  const auto& warnings = report_of(d, "kfd").warnings;
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("nodes/4/properties: KFD GPU node 4 skipped: no "
                                     "accelerator at PCI address 0000:09:00.0"));
}

TEST(KfdProbe, XgmiToCpuNodesAndPcieLinksAreNotGpuLinks) {
  FakeHost host;
  three_gpus(host);
  host.write(std::string(kNodes) + "/1/io_links/7/properties", io_link(11, 1, 0));
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(xgmi_links(d.topology).size(), 6U);
  EXPECT_EQ(report_of(d, "kfd").status, ProbeStatus::kOk);
}

TEST(KfdProbe, PartitionWithAnotherUniqueIdIsNotFolded) {
  FakeHost host;
  three_gpus(host);
  // A node at 05:00.1 claiming a different GPU identity than node 1 at 05:00.0.
  host.write(std::string(kNodes) + "/4/properties", gpu_properties(0x0501, 999));
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(d.topology.node(*d.topology.find("accelerator/0000:05:00.0"))
                .as<AcceleratorInfo>()
                .partitions,
            0U);
  const auto& warnings = report_of(d, "kfd").warnings;
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], HasSubstr("unique_id differs"));
}

TEST(KfdProbe, NoKfdTreeMeansUnavailable) {
  FakeHost host;
  host.add_pci({"0000:05:00.0", 0x1002, 0x74a1, 0x120000, "amdgpu"});
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(report_of(d, "kfd").status, ProbeStatus::kUnavailable);
  EXPECT_THAT(report_of(d, "kfd").error, HasSubstr("no AMD KFD topology"));
}

}  // namespace
}  // namespace nodetopo::test
