// Broken host roots: real captures copied into a temporary directory and damaged, or minimal
// trees. Each damage gives a clear message naming the file, or a skipped device with a warning
// naming it; never a crash, never a NUMA node of -1, never a read outside the root.
#include <algorithm>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nodetopo/base/log.hpp>
#include <nodetopo/exporters/json_model.hpp>
#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/sys_root.hpp>

#include "captures.hpp"
#include "discover.hpp"
#include "path_walks.hpp"
#include "test_support.hpp"

namespace nodetopo::probes {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

constexpr const char* kSmall = "2pa-pcidomain32bits";       // 9 functions, one NUMA node
constexpr const char* kSwitches = "32intel64-2p8co2t+8ve";  // PLX switches, two NUMA nodes

class BrokenRoot : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { configure_logging(spdlog::level::off, LogFormat::kText); }

  // Copies a real capture to <tmp>/root. Files are hard links to the unpacked capture where the
  // file system allows (seven times faster than copying thousands of sysfs files), so damage
  // must replace a file (overwrite(), relink()), never write into it.
  fs::path copy_capture(const std::string& name) {
    const fs::path src = test::capture_root(name);
    if (!fs::is_directory(src)) {
      ADD_FAILURE() << src << " is missing: run through ctest (the captures fixture unpacks it)";
      return {};
    }
    root_ = tmp_.path() / "root";
    std::error_code ec;
    fs::copy(src, root_,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks |
                 fs::copy_options::create_hard_links,
             ec);
    if (ec) {  // another file system: copy
      fs::remove_all(root_);
      fs::copy(src, root_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    }
    for (auto it = fs::recursive_directory_iterator(root_); it != fs::end(it); ++it) {
      if (it->is_directory() && !it->is_symlink()) {
        fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add);
      }
    }
    return root_;
  }

  // Replaces the file or link at root-relative `rel`.
  void overwrite(const std::string& rel, const std::string& content) {
    fs::remove(root_ / rel);
    test::write_file(root_ / rel, content);
  }
  // Empties the uevent of device directory `dev`, as hwloc's gatherer leaves it: class, ids and
  // driver then come from the separate attribute files, whose damage a test can reach.
  void drop_uevent(const std::string& dev) { overwrite(dev + "/uevent", ""); }
  void relink(const std::string& rel, const std::string& target) {
    fs::remove(root_ / rel);
    test::make_symlink(target, root_ / rel);
  }

  Discovery discover() {
    auto root = SysRoot::open(root_, SysRoot::Liveness::kAuto, walk_);
    EXPECT_TRUE(root.ok()) << (root.ok() ? "" : root.error().describe());
    Discovery d = ::nodetopo::test::discover(root.value());
    const std::string json = exporters::render_json_model(d.topology, d.reports);
    EXPECT_EQ(json.find("\"numa_node\": -1"), std::string::npos);
    EXPECT_EQ(json.find(root_.string()), std::string::npos) << "reports name root-relative paths";
    return d;
  }

  static const ProbeReport& report(const Discovery& d, const std::string& probe) {
    auto it = std::find_if(d.reports.begin(), d.reports.end(),
                           [&](const ProbeReport& r) { return r.probe == probe; });
    if (it == d.reports.end()) throw std::runtime_error("no report of probe " + probe);
    return *it;
  }

  // The one warning of `probe` that names `path`; fails the test when none or several do.
  static std::string warning_naming(const Discovery& d, const std::string& probe,
                                    const std::string& path) {
    std::vector<std::string> found;
    for (const std::string& w : report(d, probe).warnings) {
      if (w.starts_with(path + ":")) found.push_back(w);
    }
    EXPECT_EQ(found.size(), 1U) << "warnings naming " << path << ": "
                                << testing::PrintToString(report(d, probe).warnings);
    return found.empty() ? std::string() : found.front();
  }

  static const PciFunctionInfo* function(const Discovery& d, const std::string& bdf) {
    auto idx = d.topology.find("pci/" + bdf);
    return idx ? &d.topology.node(*idx).as<PciFunctionInfo>() : nullptr;
  }

  static std::string parent_of(const Discovery& d, const std::string& bdf) {
    auto idx = d.topology.find("pci/" + bdf);
    if (!idx) return "<absent>";
    return d.topology.node(d.topology.node(*idx).parent).id;
  }

  TempDir tmp_;
  fs::path root_;
  SysRoot::PathWalk walk_ = SysRoot::PathWalk::kKernelChecked;
};

// Every damage must be found whether paths are walked with kernel-checked opens (the default)
// or in user space alone (kernels without openat2): discovery tests run both ways.
class BrokenRootWalk : public BrokenRoot, public ::testing::WithParamInterface<SysRoot::PathWalk> {
 protected:
  void SetUp() override { walk_ = GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Walks, BrokenRootWalk, test::all_path_walks(), test::path_walk_name);

// ---------------------------------------------------------------------------------------------
// the root itself

TEST_F(BrokenRoot, MissingSysExitsOneNamingThePath) {
  fs::create_directories(tmp_.path() / "proc");
  const fs::path topo = test::build_dir() / "topo";
  const test::CommandResult r =
      test::run_command({topo.string(), "dump", "--root", tmp_.path().string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find((tmp_.path() / "sys").string()), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(BrokenRoot, MissingRootDirectoryExitsOneNamingIt) {
  const fs::path missing = tmp_.path() / "nowhere";
  const test::CommandResult r = test::run_command(
      {(test::build_dir() / "topo").string(), "dump", "--root", missing.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(missing.string()), std::string::npos) << r.err;
}

TEST_F(BrokenRoot, HostRootEnvironmentIsUsedAndNamedToo) {
  const fs::path missing = tmp_.path() / "host";
  const test::CommandResult r = test::run_command({(test::build_dir() / "topo").string(), "dump"},
                                                  {"HOST_ROOT=" + missing.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(missing.string()), std::string::npos) << r.err;
}

TEST_P(BrokenRootWalk, EmptySysGivesAMachineAndSaysPciIsUnavailable) {
  fs::create_directories(tmp_.path() / "sys");
  fs::create_directories(tmp_.path() / "proc");
  root_ = tmp_.path();
  const Discovery d = discover();
  EXPECT_EQ(report(d, "pci").status, ProbeStatus::kUnavailable);
  EXPECT_NE(report(d, "pci").error.find("sys/bus/pci/devices"), std::string::npos)
      << report(d, "pci").error;
  EXPECT_GE(d.topology.size(), 1U);

  // No CPU topology at all: the cpu probe failed, so the result is degraded and dump exits 1,
  // still printing what it found. With one CPU it is complete, PCI merely absent: exit 0.
  const test::CommandResult r = test::run_command(
      {(test::build_dir() / "topo").string(), "dump", "--root", tmp_.path().string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("pci: unavailable"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("degraded result: probe cpu failed"), std::string::npos) << r.err;
  test::write_minimal_cpu(tmp_.path());
  const test::CommandResult ok = test::run_command(
      {(test::build_dir() / "topo").string(), "dump", "--root", tmp_.path().string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("pci: unavailable"), std::string::npos) << ok.out;
}

TEST_P(BrokenRootWalk, PciDevicesDirectoryThatLoopsFailsOnlyThePciProbe) {
  copy_capture(kSmall);
  fs::remove_all(root_ / "sys/bus/pci/devices");
  relink("sys/bus/pci/devices", "devices");
  const Discovery d = discover();
  EXPECT_EQ(report(d, "pci").status, ProbeStatus::kFailed);
  EXPECT_NE(report(d, "pci").error.find("sys/bus/pci/devices"), std::string::npos);
  EXPECT_EQ(report(d, "cpu").status, ProbeStatus::kOk) << "one failing probe never stops others";
  EXPECT_FALSE(d.topology.nodes_of_kind(NodeKind::kNumaNode).empty());
}

// ---------------------------------------------------------------------------------------------
// one damaged function

TEST_P(BrokenRootWalk, TruncatedConfigKeepsTheBridgeAndItsChildren) {
  copy_capture(kSwitches);
  const std::string dev = "sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0";
  const std::string config = test::read_file(root_ / dev / "config");
  ASSERT_EQ(config.size(), 64U);
  overwrite(dev + "/config", config.substr(0, 10));

  const Discovery d = discover();
  const std::string w = warning_naming(d, "pci", dev + "/config");
  EXPECT_NE(w.find("config space"), std::string::npos) << w;
  const PciFunctionInfo* f = function(d, "0000:18:00.0");
  ASSERT_NE(f, nullptr) << "a short config drops attributes, not the device";
  EXPECT_EQ(f->vendor_id, 0x10b5) << "identity comes from the sysfs attributes";
  EXPECT_FALSE(f->secondary_bus.has_value());
  EXPECT_FALSE(f->port_type.has_value());
  EXPECT_EQ(d.topology.node(d.topology.find("pci/0000:18:00.0").value()).kind, NodeKind::kPciBridge)
      << "classified as a bridge by its class code";
  EXPECT_EQ(parent_of(d, "0000:19:04.0"), "pci/0000:18:00.0") << "the hierarchy is sysfs'";
  EXPECT_EQ(parent_of(d, "0000:18:00.0"), "pci/0000:17:00.0");
}

TEST_P(BrokenRootWalk, EmptyConfigOfADevice) {
  copy_capture(kSmall);
  overwrite("sys/devices/pci0000:00/0000:00:03.0/config", "");
  const Discovery d = discover();
  warning_naming(d, "pci", "sys/devices/pci0000:00/0000:00:03.0/config");
  ASSERT_NE(function(d, "0000:00:03.0"), nullptr);
  EXPECT_EQ(function(d, "0000:00:03.0")->vendor_id, 0x1af4);
}

// The probe reads the 256 bytes of standard config space (nothing it decodes lies beyond). A PCI
// Express capability placed at the very end of that space has its Link Status register past byte
// 256: the whole file is then read and decoded, so reading less never changes what is published.
TEST_P(BrokenRootWalk, PcieCapabilityRunningPastTheStandardSpaceIsDecodedWhole) {
  copy_capture(kSmall);
  std::string config(4096, '\0');
  const auto put16 = [&config](std::size_t at, unsigned v) {
    config[at] = static_cast<char>(v & 0xff);
    config[at + 1] = static_cast<char>((v >> 8) & 0xff);
  };
  put16(0x00, 0x1af4);  // vendor, device: as the function's own files say
  put16(0x02, 0x1000);
  put16(0x06, 0x0010);  // status: capability list present
  config[0x34] = static_cast<char>(0xf0);
  config[0xf0] = 0x10;                 // PCI Express capability, last in the list
  put16(0xf2, 0x0002);                 // version 2, endpoint
  put16(0xfc, (16U << 4) | 4U);        // Link Capabilities: 16 GT/s x16
  put16(0xf0 + 0x12, (8U << 4) | 3U);  // Link Status at 0x102, past the 256: 8 GT/s x8
  overwrite("sys/devices/pci0000:00/0000:00:03.0/config", config);

  const Discovery d = discover();
  const PciFunctionInfo* f = function(d, "0000:00:03.0");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->port_type, PciePortType::kEndpoint);
  EXPECT_EQ(f->link_max.speed_mts, 16000U);
  EXPECT_EQ(f->link_max.width, 16U);
  EXPECT_EQ(f->link_current.speed_mts, 8000U) << "Link Status comes from byte 0x102 of the file";
  EXPECT_EQ(f->link_current.width, 8U);
}

TEST_P(BrokenRootWalk, GarbageNumaNodeIsIgnoredAndDerivedFromLocalCpus) {
  copy_capture(kSwitches);
  const std::string dev =
      "sys/devices/pci0000:5d/0000:5d:02.0/0000:5e:00.0/0000:5f:03.0/0000:60:00.0";
  ASSERT_TRUE(fs::exists(root_ / dev / "numa_node")) << "capture layout changed";
  overwrite(dev + "/numa_node", "garbage\n");
  overwrite(dev + "/local_cpulist", "8-15,24-31\n");  // all in NUMA node 1
  const Discovery d = discover();
  const std::string w = warning_naming(d, "pci", dev + "/numa_node");
  EXPECT_NE(w.find("'garbage"), std::string::npos) << "quotes the content: " << w;
  const PciFunctionInfo* f = function(d, "0000:60:00.0");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->numa_node, std::optional<std::uint32_t>(1));
}

TEST_P(BrokenRootWalk, NumaNodeThatDoesNotExistIsNotPublished) {
  copy_capture(kSwitches);
  const std::string dev =
      "sys/devices/pci0000:5d/0000:5d:02.0/0000:5e:00.0/0000:5f:03.0/0000:60:00.0";
  overwrite(dev + "/numa_node", "7\n");  // the machine has nodes 0 and 1
  overwrite(dev + "/local_cpulist", "8-15\n");
  const Discovery d = discover();
  const std::string w = warning_naming(d, "pci", dev + "/numa_node");
  EXPECT_NE(w.find("7"), std::string::npos) << w;
  EXPECT_EQ(function(d, "0000:60:00.0")->numa_node, std::optional<std::uint32_t>(1))
      << "derived from local_cpulist instead";
  for (NodeIndex i : d.topology.nodes_of_kind(NodeKind::kHostBridge)) {
    const auto& hb = d.topology.node(i).as<HostBridgeInfo>();
    if (hb.numa_node) {
      EXPECT_TRUE(d.topology.find("numa/" + std::to_string(*hb.numa_node)).has_value());
    }
  }
}

TEST_P(BrokenRootWalk, MinusOneNumaNodeIsResolvedFromLocalCpusOrLeftUnknown) {
  copy_capture(kSwitches);
  // In two hierarchies: within one, the functions that name the same node share one read of
  // the local CPUs (LocalCpusAreReadOncePerNodeInAHierarchy).
  const std::string f0 =
      "sys/devices/pci0000:5d/0000:5d:02.0/0000:5e:00.0/0000:5f:03.0/0000:60:00.0";
  const std::string f1 =
      "sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:04.0/0000:1a:00.0";
  overwrite(f0 + "/numa_node", "-1\n");
  overwrite(f0 + "/local_cpulist", "9,25\n");  // inside NUMA node 1
  overwrite(f1 + "/numa_node", "-1\n");
  overwrite(f1 + "/local_cpulist", "0-31\n");  // spans both nodes
  const Discovery d = discover();
  EXPECT_EQ(function(d, "0000:60:00.0")->numa_node, std::optional<std::uint32_t>(1));
  EXPECT_FALSE(function(d, "0000:1a:00.0")->numa_node.has_value());
  for (const std::string& w : report(d, "pci").warnings) {
    EXPECT_EQ(w.find("numa_node"), std::string::npos) << "-1 is valid, not a warning: " << w;
  }
  EXPECT_EQ(d.topology.numa_of(d.topology.find("pci/0000:60:00.0").value()),
            std::optional<std::uint32_t>(1));
}

TEST_P(BrokenRootWalk, MissingClassSkipsTheFunctionAndReparentsItsChildren) {
  copy_capture(kSwitches);
  const std::string bridge = "sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:04.0";
  drop_uevent(bridge);
  fs::remove(root_ / bridge / "class");
  const Discovery d = discover();
  const std::string w = warning_naming(d, "pci", bridge + "/class");
  EXPECT_NE(w.find("skipped"), std::string::npos) << w;
  EXPECT_EQ(function(d, "0000:19:04.0"), nullptr);
  EXPECT_EQ(parent_of(d, "0000:1a:00.0"), "pci/0000:18:00.0")
      << "the child hangs under the nearest function that is still there";
  EXPECT_EQ(d.topology.nodes_of_kind(NodeKind::kPciBridge).size() +
                d.topology.nodes_of_kind(NodeKind::kPciDevice).size(),
            27U);
}

TEST_P(BrokenRootWalk, GarbageAttributesDropOneAttributeEach) {
  copy_capture(kSwitches);
  // The root port is the first function of its hierarchy to read the local CPUs of node 0.
  const std::string port = "sys/devices/pci0000:17/0000:17:00.0";
  const std::string dev = port + "/0000:18:00.0/0000:19:04.0/0000:1a:00.0";
  overwrite(dev + "/current_link_speed", "fast\n");
  overwrite(dev + "/max_link_width", "x99\n");
  overwrite(port + "/local_cpulist", "0-3,zz\n");
  const Discovery d = discover();
  EXPECT_NE(warning_naming(d, "pci", dev + "/current_link_speed").find("attribute ignored"),
            std::string::npos);
  warning_naming(d, "pci", dev + "/max_link_width");
  warning_naming(d, "pci", port + "/local_cpulist");
  const PciFunctionInfo* f = function(d, "0000:1a:00.0");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->link_current.speed_mts, 0U);
  EXPECT_EQ(f->link_current.width, 16U) << "the other attributes stay";
  EXPECT_EQ(f->link_max.speed_mts, 8000U);
  EXPECT_EQ(f->link_max.width, 0U);
  EXPECT_EQ(function(d, "0000:17:00.0")->local_cpus.to_list(), "0-7,16-23")
      << "falls back to the local_cpus mask";
  EXPECT_EQ(f->local_cpus.to_list(), "0-7,16-23");
  EXPECT_EQ(f->numa_node, std::optional<std::uint32_t>(0));
}

// The kernel prints local_cpulist from the node numa_node names (every online CPU for -1), so a
// hierarchy's functions that name one node read it once: the first in path order. What the
// others' files say is not read; a function without a usable numa_node reads its own, and so
// does the next one when a read found nothing.
TEST_P(BrokenRootWalk, LocalCpusAreReadOncePerNodeInAHierarchy) {
  copy_capture(kSwitches);
  const std::string port = "sys/devices/pci0000:17/0000:17:00.0";
  const std::string up = port + "/0000:18:00.0";
  const std::string down = up + "/0000:19:04.0";
  const std::string dev = down + "/0000:1a:00.0";
  for (const std::string& f : {port, up, down, dev}) {
    ASSERT_EQ(test::read_file(root_ / f / "numa_node"), "0\n") << "capture layout changed: " << f;
  }
  overwrite(port + "/local_cpulist", "0-3\n");
  overwrite(down + "/local_cpulist", "zz\n");  // never read: no warning
  overwrite(up + "/numa_node", "garbage\n");
  overwrite(up + "/local_cpulist", "4-5\n");  // read: its numa_node is unusable
  const std::string other = "sys/devices/pci0000:5d/0000:5d:02.0";  // another hierarchy
  overwrite(other + "/local_cpulist", "6\n");
  const Discovery d = discover();
  EXPECT_EQ(function(d, "0000:17:00.0")->local_cpus.to_list(), "0-3");
  EXPECT_EQ(function(d, "0000:18:00.0")->local_cpus.to_list(), "4-5");
  EXPECT_EQ(function(d, "0000:19:04.0")->local_cpus.to_list(), "0-3");
  EXPECT_EQ(function(d, "0000:1a:00.0")->local_cpus.to_list(), "0-3");
  EXPECT_EQ(function(d, "0000:5d:02.0")->local_cpus.to_list(), "6");
  for (const std::string& w : report(d, "pci").warnings) {
    EXPECT_EQ(w.find(down + "/local_cpulist"), std::string::npos) << w;
  }

  // The first read finds nothing: the next function of the node reads its own.
  fs::remove(root_ / port / "local_cpulist");
  fs::remove(root_ / port / "local_cpus");
  const Discovery again = discover();
  EXPECT_TRUE(function(again, "0000:17:00.0")->local_cpus.empty());
  EXPECT_EQ(function(again, "0000:19:04.0")->local_cpus.to_list(), "0-7,16-23")
      << "its own file's garbage falls back to its local_cpus mask";
  warning_naming(again, "pci", down + "/local_cpulist");
}

// ---------------------------------------------------------------------------------------------
// the bus/pci/devices links

TEST_P(BrokenRootWalk, DeviceLinkClimbingOutOfTheRootIsSkipped) {
  copy_capture(kSmall);
  test::write_file(tmp_.path() / "outside/0000:00:03.0/class", "0x020000\n");
  relink("sys/bus/pci/devices/0000:00:03.0", "../../../../../outside/0000:00:03.0");
  const Discovery d = discover();
  const std::string w = warning_naming(d, "pci", "sys/bus/pci/devices/0000:00:03.0");
  EXPECT_NE(w.find("skipped"), std::string::npos) << w;
  EXPECT_NE(w.find("above the host root"), std::string::npos) << w;
  EXPECT_EQ(function(d, "0000:00:03.0"), nullptr);
  EXPECT_NE(function(d, "0000:00:02.0"), nullptr) << "the other functions stay";
}

TEST_P(BrokenRootWalk, AbsoluteDeviceLinkInACaptureIsSkipped) {
  copy_capture(kSmall);
  relink("sys/bus/pci/devices/0000:00:03.0", "/sys/devices/pci0000:00/0000:00:03.0");
  const Discovery d = discover();
  const std::string w = warning_naming(d, "pci", "sys/bus/pci/devices/0000:00:03.0");
  EXPECT_NE(w.find("absolute symlink"), std::string::npos) << w;
  EXPECT_EQ(function(d, "0000:00:03.0"), nullptr);
}

TEST_P(BrokenRootWalk, AttributeLinkLeavingTheRootIsNotRead) {
  // An attribute that is a link out of the root (absolute, or ".." past the root) must not make
  // the probe read a file of the machine running the tool; a FIFO must not block it.
  copy_capture(kSmall);
  test::write_file(tmp_.path() / "outside/vendor", "0x1234\n");
  const std::string dev = "sys/devices/pci0000:00/0000:00:03.0";
  drop_uevent(dev);
  drop_uevent("sys/devices/pci0000:00/0000:00:01.2");
  relink(dev + "/vendor", (tmp_.path() / "outside/vendor").string());
  relink("sys/devices/pci0000:00/0000:00:02.0/config", "../../../../../outside/vendor");
  fs::remove(root_ / "sys/devices/pci0000:00/0000:00:01.2/class");
  ASSERT_EQ(::mkfifo((root_ / "sys/devices/pci0000:00/0000:00:01.2/class").c_str(), 0600), 0);
  const Discovery d = discover();  // a FIFO opened for reading would block here forever
  EXPECT_NE(warning_naming(d, "pci", dev + "/vendor").find("leaves the host root"),
            std::string::npos);
  EXPECT_NE(warning_naming(d, "pci", "sys/devices/pci0000:00/0000:00:02.0/config")
                .find("above the host root"),
            std::string::npos);
  // The functions stay, without what could not be read: ids unknown, config unknown.
  ASSERT_NE(function(d, "0000:00:03.0"), nullptr);
  EXPECT_EQ(function(d, "0000:00:03.0")->vendor_id, 0);
  ASSERT_NE(function(d, "0000:00:02.0"), nullptr);
  EXPECT_FALSE(function(d, "0000:00:02.0")->port_type.has_value());
  // Without a readable class a function cannot be classified: skipped.
  EXPECT_NE(warning_naming(d, "pci", "sys/devices/pci0000:00/0000:00:01.2/class")
                .find("not a regular file"),
            std::string::npos);
  EXPECT_EQ(function(d, "0000:00:01.2"), nullptr);
  for (const Node& n : d.topology.nodes()) {
    if (const auto* f = n.get_if<PciFunctionInfo>()) {
      EXPECT_NE(f->vendor_id, 0x1234) << n.id << " was read from outside the root";
    }
  }
}

TEST_P(BrokenRootWalk, MissingIdsAndConfigAreReportedRelativeToTheRoot) {
  copy_capture(kSmall);
  const std::string dev = "sys/devices/pci0000:00/0000:00:03.0";
  drop_uevent(dev);
  for (const char* attr : {"vendor", "device", "config"}) {
    fs::remove(root_ / dev / attr);
  }
  const Discovery d = discover();  // asserts that no report names the root's absolute path
  const std::string w = warning_naming(d, "pci", dev + "/vendor");
  EXPECT_NE(w.find("vendor/device ids unreadable"), std::string::npos) << w;
  ASSERT_NE(function(d, "0000:00:03.0"), nullptr) << "kept, with ids reported as 0000:0000";
  EXPECT_EQ(function(d, "0000:00:03.0")->vendor_id, 0);
}

// uevent holds class, ids and driver in one file; the separate attribute files are not needed
// when it is readable.
TEST_P(BrokenRootWalk, UeventAloneIdentifiesAFunction) {
  copy_capture(kSmall);
  const std::string dev = "sys/devices/pci0000:00/0000:00:02.0";
  for (const char* attr : {"class", "vendor", "device", "driver"}) {
    fs::remove(root_ / dev / attr);
  }
  const Discovery d = discover();
  EXPECT_TRUE(report(d, "pci").warnings.end() ==
              std::find_if(report(d, "pci").warnings.begin(), report(d, "pci").warnings.end(),
                           [&](const std::string& w) { return w.starts_with(dev); }))
      << testing::PrintToString(report(d, "pci").warnings);
  const PciFunctionInfo* f = function(d, "0000:00:02.0");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->class_code, 0x030000U);
  EXPECT_EQ(f->vendor_id, 0x1013);
  EXPECT_EQ(f->device_id, 0x00b8);
  EXPECT_EQ(f->driver, "cirrus");
}

// A damaged uevent (garbage, or copied from another function) is reported and the attribute
// files are read instead: nothing is lost, nothing is taken from the wrong device.
TEST_P(BrokenRootWalk, DamagedUeventFallsBackToTheAttributeFiles) {
  copy_capture(kSmall);
  const std::string garbage = "sys/devices/pci0000:00/0000:00:02.0";
  const std::string copied = "sys/devices/pci0000:00/0000:00:03.0";
  overwrite(garbage + "/uevent", "DRIVER=cirrus\nPCI_CLASS=zz\nPCI_ID=1013:00B8\n");
  overwrite(copied + "/uevent", "PCI_CLASS=30000\nPCI_ID=1013:00B8\nPCI_SLOT_NAME=0000:00:02.0\n");
  const Discovery d = discover();
  EXPECT_NE(warning_naming(d, "pci", garbage + "/uevent").find("PCI_CLASS"), std::string::npos);
  EXPECT_NE(warning_naming(d, "pci", copied + "/uevent").find("0000:00:02.0"), std::string::npos);
  const PciFunctionInfo* f = function(d, "0000:00:02.0");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->class_code, 0x030000U) << "from the class file";
  EXPECT_EQ(f->driver, "cirrus") << "from the driver link";
  const PciFunctionInfo* other = function(d, "0000:00:03.0");
  ASSERT_NE(other, nullptr);
  EXPECT_NE(other->device_id, 0x00b8) << "ids of 0000:00:02.0 must not be taken for 0000:00:03.0";
}

TEST_P(BrokenRootWalk, DeviceLinkLoopIsSkipped) {
  copy_capture(kSmall);
  relink("sys/bus/pci/devices/0000:00:03.0", "0000:00:03.0");
  relink("sys/bus/pci/devices/0000:00:02.0", "../../../devices/pci0000:00/loop");
  test::make_symlink("loop", root_ / "sys/devices/pci0000:00/loop");
  const Discovery d = discover();
  EXPECT_NE(warning_naming(d, "pci", "sys/bus/pci/devices/0000:00:03.0").find("symbolic links"),
            std::string::npos);
  EXPECT_NE(warning_naming(d, "pci", "sys/bus/pci/devices/0000:00:02.0").find("symbolic links"),
            std::string::npos);
  EXPECT_EQ(function(d, "0000:00:03.0"), nullptr);
  EXPECT_EQ(function(d, "0000:00:02.0"), nullptr);
  EXPECT_NE(function(d, "0000:00:01.0"), nullptr);
}

TEST_P(BrokenRootWalk, EntryThatIsNotAPciAddressIsSkipped) {
  copy_capture(kSmall);
  test::make_symlink("../../../devices/pci0000:00/0000:00:03.0",
                     root_ / "sys/bus/pci/devices/not-a-device");
  test::write_file(root_ / "sys/bus/pci/devices/0000:00:1f.9", "");  // function 9 does not exist
  const Discovery d = discover();
  EXPECT_NE(warning_naming(d, "pci", "sys/bus/pci/devices/not-a-device").find("not a PCI address"),
            std::string::npos);
  warning_naming(d, "pci", "sys/bus/pci/devices/0000:00:1f.9");
  EXPECT_NE(function(d, "0000:00:03.0"), nullptr) << "the real link to the same device stays";
  EXPECT_EQ(d.topology.nodes_of_kind(NodeKind::kPciDevice).size() +
                d.topology.nodes_of_kind(NodeKind::kPciBridge).size(),
            9U);
}

TEST_P(BrokenRootWalk, LinkToAnotherFunctionIsSkipped) {
  copy_capture(kSmall);
  test::make_symlink("../../../devices/pci0000:00/0000:00:03.0",
                     root_ / "sys/bus/pci/devices/0000:00:07.0");
  const Discovery d = discover();
  const std::string w = warning_naming(d, "pci", "sys/bus/pci/devices/0000:00:07.0");
  EXPECT_NE(w.find("0000:00:03.0"), std::string::npos) << "says where it leads: " << w;
  EXPECT_EQ(function(d, "0000:00:07.0"), nullptr);
  EXPECT_NE(function(d, "0000:00:03.0"), nullptr);
}

// The kernel writes a device's directory as a real directory. One replaced by a symlink makes
// the bus link's joined path non-canonical: the function is resolved in full and placed where
// the link really leads, or skipped with a warning saying where that is — the same either walk.
TEST_P(BrokenRootWalk, DeviceDirectoryThatIsASymlinkIsResolvedInFull) {
  copy_capture(kSmall);
  fs::create_directories(root_ / "sys/devices/elsewhere");
  fs::rename(root_ / "sys/devices/pci0000:00/0000:00:03.0",
             root_ / "sys/devices/elsewhere/0000:00:03.0");
  test::make_symlink("../elsewhere/0000:00:03.0", root_ / "sys/devices/pci0000:00/0000:00:03.0");
  const Discovery d = discover();
  const std::string w = warning_naming(d, "pci", "sys/bus/pci/devices/0000:00:03.0");
  EXPECT_NE(w.find("sys/devices/elsewhere/0000:00:03.0"), std::string::npos) << w;
  EXPECT_EQ(function(d, "0000:00:03.0"), nullptr);
  EXPECT_NE(function(d, "0000:00:02.0"), nullptr) << "the other functions stay";
}

TEST_P(BrokenRootWalk, MalformedRootBusDirectoryIsNotARootBus) {
  // "pci0000::0" has the shape of a root bus name but no bus number: once taken for one, parsing
  // its bus threw and the whole PCI probe failed.
  copy_capture(kSmall);
  fs::create_directories(root_ / "sys/devices/pci0000::0");
  fs::rename(root_ / "sys/devices/pci0000:00/0000:00:03.0",
             root_ / "sys/devices/pci0000::0/0000:00:03.0");
  relink("sys/bus/pci/devices/0000:00:03.0", "../../../devices/pci0000::0/0000:00:03.0");
  const Discovery d = discover();
  EXPECT_EQ(report(d, "pci").status, ProbeStatus::kWarnings) << report(d, "pci").error;
  const std::string w = warning_naming(d, "pci", "sys/bus/pci/devices/0000:00:03.0");
  EXPECT_NE(w.find("skipped"), std::string::npos) << w;
  EXPECT_EQ(function(d, "0000:00:03.0"), nullptr);
  EXPECT_NE(function(d, "0000:00:02.0"), nullptr);
}

TEST_F(BrokenRoot, DamagedRootThroughTheBinary) {
  copy_capture(kSmall);
  overwrite("sys/devices/pci0000:00/0000:00:03.0/numa_node", "garbage\n");
  drop_uevent("sys/devices/pci0000:00/0000:00:02.0");
  fs::remove(root_ / "sys/devices/pci0000:00/0000:00:02.0/class");
  relink("sys/bus/pci/devices/0000:00:01.0", "/etc");
  for (const char* format : {"text", "json"}) {
    const test::CommandResult r = test::run_command({(test::build_dir() / "topo").string(), "dump",
                                                     "--root", root_.string(), "--format", format});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const char* named :
         {"sys/devices/pci0000:00/0000:00:03.0/numa_node",
          "sys/devices/pci0000:00/0000:00:02.0/class", "sys/bus/pci/devices/0000:00:01.0"}) {
      EXPECT_NE(r.out.find(named), std::string::npos) << format << " output lacks " << named;
    }
  }
}

}  // namespace
}  // namespace nodetopo::probes
