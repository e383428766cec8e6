// The hostile-root corpus: roots built to make `topo` read outside them, hang, or grow without
// bound, and what it must do instead. Each case runs the real binary under a time limit (and,
// outside sanitizer builds, an address-space limit) and checks: nothing from outside the root in
// the output, a result within the limit, and a message naming the path at fault.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/environment.hpp>
#include <nodetopo/probes/sys_root.hpp>

#include "discover.hpp"
#include "path_walks.hpp"
#include "test_support.hpp"

namespace nodetopo {
namespace {

namespace fs = std::filesystem;
using probes::SysRoot;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// Text planted outside every root: it must never appear in an output.
constexpr const char* kSecret = "SECRET-OUTSIDE-THE-ROOT";

class HostileRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    // Readable by everyone: some cases run topo as nobody.
    fs::permissions(tmp_.path(),
                    fs::perms::all & ~fs::perms::others_write & ~fs::perms::group_write);
    root_ = tmp_.path() / "root";
    secret_ = tmp_.path() / "secret.txt";
    test::write_file(secret_, std::string(kSecret) + "\n");
    const auto built = test::run_command({topo(), "mock", "build", "cpu-only", root_.string()});
    ASSERT_EQ(built.exit_code, 0) << built.err;
  }

  static std::string topo() { return (test::build_dir() / "topo").string(); }

  // Runs topo with a wall-clock limit and, outside sanitizer builds, a 2 GiB address space.
  static test::CommandResult run_limited(const std::vector<std::string>& args,
                                         const std::vector<std::string>& prefix = {}) {
    std::vector<std::string> argv = {"timeout", "-s", "KILL", "30"};
    argv.insert(argv.end(), prefix.begin(), prefix.end());
    if (!kSanitized) {
      argv.insert(argv.end(), {"prlimit", "--as=2147483648", "--"});
    }
    argv.push_back(topo());
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_command(argv);
  }

  test::CommandResult dump(const std::string& format = "text") {
    return run_limited({"dump", "--root", root_.string(), "--format", format});
  }

  // Replaces the file at root-relative `rel` (whatever it was) with nothing.
  fs::path clear(const std::string& rel) {
    const fs::path p = root_ / rel;
    fs::remove_all(p);
    fs::create_directories(p.parent_path());
    return p;
  }

  static void expect_finished(const test::CommandResult& r) {
    EXPECT_NE(r.exit_code, 137) << "killed by the time limit: a hang";
    EXPECT_NE(r.exit_code, 124) << "killed by the time limit: a hang";
    EXPECT_LE(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out.find(kSecret), std::string::npos) << "read outside the root";
    EXPECT_EQ(r.err.find(kSecret), std::string::npos) << "read outside the root";
  }

  test::TempDir tmp_;
  fs::path root_;
  fs::path secret_;
};

// hwloc's Linux backend writes the file HWLOC_DUMP_NOFILE_INFO names (the host's name, OS and page
// size); from a user's environment it must not make a discovery write anything.
TEST_F(HostileRoot, HwlocDumpFileVariableWritesNothing) {
  const fs::path target = tmp_.path() / "nofile-info";
  expect_finished(run_limited({"dump", "--root", root_.string()},
                              {"env", "HWLOC_DUMP_NOFILE_INFO=" + target.string()}));
  EXPECT_FALSE(fs::exists(target)) << "hwloc wrote " << target;
}

// --- links out of the root, in what hwloc reads and in what SysRoot reads ---------------------

// A relative link target that climbs far above any root, then down to `outside`.
std::string climbing_link_to(const fs::path& outside) {
  std::string up;
  for (std::size_t i = 0; i < 40; ++i)
    up += "../";
  return up + outside.relative_path().string();
}

TEST_F(HostileRoot, AbsoluteAndClimbingLinksInHwlocFilesStayInside) {
  const std::vector<std::string> files = {"sys/devices/virtual/dmi/id/product_name",
                                          "sys/devices/virtual/dmi/id/board_vendor",
                                          "sys/devices/system/cpu/online",
                                          "proc/cpuinfo",
                                          "proc/meminfo",
                                          "sys/devices/system/node/node0/meminfo"};
  for (const std::string& rel : files) {
    SCOPED_TRACE(rel);
    const fs::path p = clear(rel);
    fs::create_symlink(secret_, p);
    expect_finished(dump());
    fs::remove(p);
    fs::create_symlink(climbing_link_to(secret_), p);
    expect_finished(dump());
  }
}

// hwloc 2.9 opens `<root>/proc/mounts` by name, through setmntent(), when it looks for cgroup
// mounts: the kernel would follow a link out of the root there, and a FIFO nobody writes at the
// other end would hang the load.
TEST_F(HostileRoot, MountTableLinkedOutsideIsNotOpened) {
  const fs::path fifo = tmp_.path() / "outside-fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const fs::path p = clear("proc/mounts");
  fs::create_symlink(fifo, p);
  expect_finished(dump());
  fs::remove(p);
  fs::create_symlink(climbing_link_to(fifo), p);
  expect_finished(dump());
}

TEST_F(HostileRoot, ProcLinkedToTheLiveProcIsNotTheLiveMachine) {
  fs::remove_all(root_ / "proc");
  const auto without = dump("json");
  fs::create_symlink("/proc", root_ / "proc");
  const auto linked = dump("json");
  expect_finished(linked);
  // Inside the root "/proc" is the root's own proc: absent, exactly as without it (only the
  // warnings about the link differ).
  const auto machine = [](const std::string& out) {
    const auto doc = nlohmann::json::parse(out, nullptr, false);
    return doc.is_object() && doc.contains("machine") ? doc["machine"].dump() : std::string("?");
  };
  EXPECT_EQ(machine(linked.out), machine(without.out));
  EXPECT_NE(linked.out.find("proc/cpuinfo"), std::string::npos) << "the link is reported";
  fs::remove(root_ / "proc");
  fs::create_symlink("../../../../../../../../proc", root_ / "proc");
  EXPECT_EQ(machine(dump("json").out), machine(without.out));
}

TEST_F(HostileRoot, DmiDirectoryLinkedOutsideIsNotFollowed) {
  const fs::path outside = tmp_.path() / "dmi";
  fs::create_directories(outside);
  test::write_file(outside / "product_name", std::string(kSecret) + "\n");
  fs::remove_all(root_ / "sys/devices/virtual/dmi/id");
  fs::create_symlink(outside, root_ / "sys/devices/virtual/dmi/id");
  expect_finished(dump());
  fs::remove_all(root_ / "sys/class/dmi/id");
  fs::create_directories(root_ / "sys/class/dmi");
  fs::create_symlink(outside, root_ / "sys/class/dmi/id");
  expect_finished(dump());
}

TEST_F(HostileRoot, PciDeviceLinkedOutsideIsRefusedNamingIt) {
  const fs::path link = root_ / "sys/bus/pci/devices/0000:01:00.0";
  const fs::path outside = tmp_.path() / "dev";
  fs::copy(fs::canonical(link), outside,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  test::write_file(outside / "uevent", "PCI_CLASS=30000\nPCI_ID=DEAD:BEEF\n");
  fs::remove(link);
  fs::create_symlink(outside, link);
  const auto r = dump();
  expect_finished(r);
  EXPECT_EQ(r.out.find("dead:beef"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0000:01:00.0"), std::string::npos) << r.out;
}

TEST_F(HostileRoot, LinkLoopsEndWithAMessage) {
  const fs::path dmi = clear("sys/devices/virtual/dmi/id/product_name");
  fs::create_symlink("product_name", dmi);
  const fs::path pci = root_ / "sys/bus/pci/devices/0000:01:00.0";
  fs::remove(pci);
  fs::create_symlink("0000:01:00.0", pci);
  const auto r = dump();
  expect_finished(r);
  EXPECT_NE(r.out.find("0000:01:00.0"), std::string::npos) << r.out;
}

// --- FIFOs, sockets, device nodes, huge files where files are expected ------------------------

// Every file hwloc reads, and attributes SysRoot/SysDir read.
const std::vector<std::string>& special_file_places() {
  static const std::vector<std::string> places = {
      "sys/devices/system/cpu/online",
      "proc/cpuinfo",
      "proc/meminfo",
      "sys/devices/virtual/dmi/id/product_name",
      "sys/devices/system/cpu/cpu0/topology/physical_package_id",
      "sys/devices/system/node/node0/distance",
      "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/uevent",
      "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/config",
      "proc/sys/kernel/hostname",
      // hwloc opens this one by name (setmntent), not through its root descriptor.
      "proc/mounts",
  };
  return places;
}

void expect_named(const test::CommandResult& r, const std::string& rel) {
  // Files hwloc reads are named in the cpu probe's warnings; the others in their probe's.
  EXPECT_TRUE(r.out.find(rel) != std::string::npos || r.err.find(rel) != std::string::npos ||
              rel == "proc/sys/kernel/hostname")
      << rel << "\nstdout:\n"
      << r.out << "\nstderr:\n"
      << r.err;
}

TEST_F(HostileRoot, FifosNeitherHangNorCountAsValues) {
  for (const std::string& rel : special_file_places()) {
    SCOPED_TRACE(rel);
    const fs::path p = clear(rel);
    ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0);
    const auto r = dump();
    expect_finished(r);
    expect_named(r, rel);
    fs::remove(p);
  }
}

TEST_F(HostileRoot, SocketsAreRefusedNamingThePath) {
  for (const std::string& rel : special_file_places()) {
    SCOPED_TRACE(rel);
    const fs::path p = clear(rel);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    // Bound through a short relative name: socket paths are limited to 108 bytes.
    const fs::path cwd = fs::current_path();
    fs::current_path(p.parent_path());
    std::strncpy(addr.sun_path, p.filename().c_str(), sizeof(addr.sun_path) - 1);
    const int bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    fs::current_path(cwd);
    ASSERT_EQ(bound, 0) << std::strerror(errno);
    const auto r = dump();
    ::close(fd);
    expect_finished(r);
    expect_named(r, rel);
    fs::remove(p);
  }
}

TEST_F(HostileRoot, DeviceNodesAreNeverRead) {
  // /dev/zero (1,5) never ends, /dev/urandom (1,9) is binary garbage, /dev/full (1,7).
  for (const auto& [major, minor] : {std::pair{1, 5}, std::pair{1, 9}}) {
    for (const std::string& rel : special_file_places()) {
      SCOPED_TRACE(rel + " as char device " + std::to_string(major) + "," + std::to_string(minor));
      const fs::path p = clear(rel);
      if (::mknod(p.c_str(), S_IFCHR | 0644, makedev(major, minor)) != 0) {
        GTEST_SKIP() << "mknod needs CAP_MKNOD (run as root to test device nodes): "
                     << std::strerror(errno);
      }
      const auto r = dump();
      expect_finished(r);
      expect_named(r, rel);
      fs::remove(p);
    }
  }
}

TEST_F(HostileRoot, NvmlFixtureThatIsAFifoOrDeviceDoesNotHang) {
  fs::remove_all(root_);
  ASSERT_EQ(test::run_command({topo(), "mock", "build", "hgx-a100", root_.string()}).exit_code, 0);
  const fs::path fixture = root_ / "nodetopo-mock/nvml.json";
  ASSERT_TRUE(fs::exists(fixture));
  fs::remove(fixture);
  ASSERT_EQ(::mkfifo(fixture.c_str(), 0644), 0);
  // The NVML probe's report (in the JSON model) names the fixture and the refusal, not "library
  // not found".
  auto r = dump("json");
  expect_finished(r);
  EXPECT_NE(r.out.find("nodetopo-mock/nvml.json: not read: a FIFO, not a regular file"),
            std::string::npos)
      << r.out;
  fs::remove(fixture);
  if (::mknod(fixture.c_str(), S_IFCHR | 0644, makedev(1, 5)) == 0) {
    r = dump("json");
    expect_finished(r);
    EXPECT_NE(r.out.find("nodetopo-mock/nvml.json: not read: a character device"),
              std::string::npos)
        << r.out;
  }
}

TEST_F(HostileRoot, HugeAndSparseFilesAreBounded) {
  for (const std::string& rel : special_file_places()) {
    SCOPED_TRACE(rel);
    const fs::path p = clear(rel);
    { std::ofstream(p) << "0\n"; }
    fs::resize_file(p, std::uintmax_t{20} << 30);  // 20 GiB, sparse
    const auto started = std::chrono::steady_clock::now();
    const auto r = dump();
    expect_finished(r);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
    fs::remove(p);
  }
}

// --- garbage in every string the output carries ------------------------------------------------

TEST_F(HostileRoot, GarbageStringsReachNoTerminalAndKeepJsonValid) {
  const std::string garbage =
      "X\xff\xfe\x1b]0;pwned\x07\x1b[2J\xc3\x28\x80\x9b"
      "31m\r\x7f";
  for (const char* rel :
       {"sys/devices/virtual/dmi/id/product_name", "sys/devices/virtual/dmi/id/board_vendor",
        "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/uevent"}) {
    const fs::path p = clear(rel);
    const std::string content = std::string(rel).ends_with("uevent")
                                    ? "DRIVER=" + garbage + "\nPCI_CLASS=30000\nPCI_ID=1A03:2000\n"
                                    : garbage + "\n";
    test::write_file(p, content);
  }
  {
    std::string cpuinfo;
    std::ifstream in(root_ / "proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("model name")) line = "model name\t: " + garbage;
      cpuinfo += line + "\n";
    }
    test::write_file(root_ / "proc/cpuinfo", cpuinfo);
  }
  for (const char* format : {"text", "dot"}) {
    const auto r = dump(format);
    expect_finished(r);
    for (char c : r.out) {
      const auto u = static_cast<unsigned char>(c);
      ASSERT_TRUE(u >= 0x20 || c == '\n' || c == '\t')
          << "control byte " << int(u) << " in " << format << " output";
      ASSERT_NE(u, 0x7f);
    }
    EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << "C1 control (CSI) in " << format;
  }
  const auto json = dump("json");
  expect_finished(json);
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_FALSE(nlohmann::json::parse(json.out, nullptr, /*allow_exceptions=*/false).is_discarded())
      << "JSON output is not valid UTF-8 JSON";
}

TEST_F(HostileRoot, AbsurdNumbersEndWithinLimits) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"sys/devices/system/cpu/online", "0-4294967295\n"},
      {"sys/devices/system/cpu/online", "99999999999999999999999\n"},
      {"sys/devices/system/node/node0/distance", "-1 99999999999999999999 0x7fffffff\n"},
      {"sys/devices/system/cpu/cpu0/topology/physical_package_id", "-99999999999999\n"},
      {"sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/numa_node", "18446744073709551617\n"},
      {"sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/local_cpulist", "0-4294967294\n"},
      {"sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/sriov_totalvfs", "4294967296\n"},
      {"proc/meminfo", "MemTotal: 99999999999999999999999 kB\n"},
  };
  for (const auto& [rel, content] : cases) {
    SCOPED_TRACE(rel + " = " + content);
    const fs::path p = root_ / rel;
    const std::string before = fs::exists(p) ? test::read_file(p) : std::string();
    test::write_file(p, content);
    expect_finished(dump());
    test::write_file(p, before);
  }
}

// --- deep and wide trees -----------------------------------------------------------------------

TEST_F(HostileRoot, DeepAndWideTreesFinish) {
  // Wide: 20000 bogus entries among the PCI devices, each a link to nowhere.
  const fs::path devices = root_ / "sys/bus/pci/devices";
  for (int i = 0; i < 20000; ++i) {
    fs::create_symlink("../../../devices/nowhere/" + std::to_string(i),
                       devices / ("ffff:ff:" + std::to_string(i)));
  }
  // Deep: a device link through 300 nested directories.
  fs::path deep = root_ / "sys/devices/deep";
  std::string rel = "../../../devices/deep";
  for (int i = 0; i < 300; ++i) {
    deep /= "d";
    rel += "/d";
  }
  fs::create_directories(deep);
  fs::create_symlink(rel, devices / "0000:fe:00.0");
  const auto started = std::chrono::steady_clock::now();
  const auto r = dump();
  expect_finished(r);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(25));
  EXPECT_NE(r.out.find("ffff:ff:1"), std::string::npos) << "the bogus entries are reported";
}

// --- unreadable files, as an unprivileged user -------------------------------------------------

TEST_F(HostileRoot, UnreadableFilesAsNobodyAreNamed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run topo as nobody (setpriv)";
  const std::vector<std::string> as_nobody = {"setpriv", "--reuid=65534", "--regid=65534",
                                              "--clear-groups", "--"};
  fs::permissions(root_ / "sys/bus/pci/devices", fs::perms::none);
  auto r = run_limited({"export", "resourceslices", "--root", root_.string(), "--node", "n1"},
                       as_nobody);
  expect_finished(r);
  EXPECT_EQ(r.exit_code, 1) << "a failed probe must not publish: " << r.out;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("sys/bus/pci/devices"), std::string::npos) << r.err;
  fs::permissions(root_ / "sys/bus/pci/devices",
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(root_ / "proc/cpuinfo", fs::perms::none);
  r = run_limited({"dump", "--root", root_.string()}, as_nobody);
  expect_finished(r);
  fs::permissions(root_, fs::perms::none);
  r = run_limited({"dump", "--root", root_.string()}, as_nobody);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no sys/ directory"), std::string::npos) << r.err;
  fs::permissions(root_, fs::perms::owner_all);
}

// --- races during the walk ---------------------------------------------------------------------

class RacingRoot : public ::testing::TestWithParam<SysRoot::PathWalk> {};

// A thread swaps a device directory for a symlink to a look-alike outside the root, over and
// over, while discovery runs: the outside device must never be reported.
TEST_P(RacingRoot, DirectorySwappedForASymlinkIsNeverFollowedOut) {
  test::TempDir tmp;
  const fs::path root = tmp.path() / "root";
  ASSERT_EQ(test::run_command(
                {(test::build_dir() / "topo").string(), "mock", "build", "cpu-only", root.string()})
                .exit_code,
            0);
  const fs::path dir = fs::canonical(root / "sys/bus/pci/devices/0000:01:00.0");
  const fs::path aside = dir.string() + ".aside";
  const fs::path outside = tmp.path() / "outside";
  fs::copy(dir, outside, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  test::write_file(outside / "uevent", "PCI_CLASS=30000\nPCI_ID=DEAD:BEEF\n");
  test::write_file(outside / "vendor", "0xdead\n");

  // The environment is written while this is the only thread, as topo's main does.
  {
    auto opened = SysRoot::open(root, SysRoot::Liveness::kCapture, GetParam());
    ASSERT_TRUE(opened.ok());
    probes::write_process_environment(probes::discovery_environment(opened.value(), {}));
  }
  std::atomic<bool> stop{false};
  std::atomic<int> swaps{0};
  std::thread swapper([&] {
    while (!stop.load()) {
      fs::rename(dir, aside);
      fs::create_symlink(outside, dir);
      std::this_thread::yield();
      fs::remove(dir);
      fs::rename(aside, dir);
      ++swaps;
    }
  });
  int runs = 0;
  bool escaped = false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < until && !escaped) {
    auto opened = SysRoot::open(root, SysRoot::Liveness::kCapture, GetParam());
    ASSERT_TRUE(opened.ok());
    const probes::Discovery d = probes::discover(opened.value());
    for (NodeIndex i = 0; i < d.topology.size(); ++i) {
      if (const auto* pci = d.topology.node(i).get_if<PciFunctionInfo>()) {
        if (pci->vendor_id == 0xdead) escaped = true;
      }
    }
    ++runs;
  }
  stop = true;
  swapper.join();
  EXPECT_FALSE(escaped) << "a device outside the root was reported";
  EXPECT_GT(runs, 0);
  EXPECT_GT(swaps.load(), 0);
  RecordProperty("discoveries", runs);
  RecordProperty("swaps", swaps.load());
}

INSTANTIATE_TEST_SUITE_P(Walks, RacingRoot, test::all_path_walks(), test::path_walk_name);

}  // namespace
}  // namespace nodetopo

namespace nodetopo {
namespace {

// Four CPUs in two packages that report the same physical id (as s390x and POWER do): two
// package nodes named by hwloc's logical index, each with its CPUs, no "duplicate node id".
void write_cpu(const std::filesystem::path& root, int cpu, const std::string& package_id,
               const std::string& core_siblings) {
  const auto dir = root / ("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology");
  test::write_file(dir / "physical_package_id", package_id + "\n");
  test::write_file(dir / "core_id", std::to_string(cpu) + "\n");
  test::write_file(dir / "core_siblings", core_siblings + "\n");
  test::write_file(dir / "thread_siblings", std::to_string(1 << cpu) + "\n");
}

TEST(OtherArchitectures, PackagesWithoutAUniquePhysicalIdKeepTheirCpus) {
  for (const std::string id : {"0", "-1"}) {
    SCOPED_TRACE("physical_package_id " + id);
    test::TempDir tmp;
    test::write_file(tmp.path() / "sys/devices/system/cpu/online", "0-3\n");
    std::filesystem::create_directories(tmp.path() / "proc");
    write_cpu(tmp.path(), 0, id, "3");
    write_cpu(tmp.path(), 1, id, "3");
    write_cpu(tmp.path(), 2, id, "c");
    write_cpu(tmp.path(), 3, id, "c");
    auto root = probes::SysRoot::open(tmp.path(), probes::SysRoot::Liveness::kCapture);
    ASSERT_TRUE(root.ok());
    const probes::Discovery d = test::discover(root.value());
    EXPECT_TRUE(d.degraded().empty()) << d.degraded();
    for (const ProbeReport& r : d.reports) {
      for (const std::string& w : r.warnings)
        EXPECT_EQ(w.find("duplicate"), std::string::npos) << w;
    }
    std::size_t cpus = 0;
    const auto packages = d.topology.nodes_of_kind(NodeKind::kPackage);
    for (NodeIndex p : packages)
      cpus += d.topology.node(p).as<PackageInfo>().cpus.members().size();
    EXPECT_EQ(cpus, 4U) << "every CPU is in a package";
    if (id == "0") {
      EXPECT_EQ(packages.size(), 2U);
    }
  }
}

// A root with no CPU topology: the cpu probe fails, so every snapshot of it is degraded. What
// publishes writes nothing (exit 1), the views print and exit 1, `topo fit` on it is bad input.
TEST(DegradedRoot, IsNeverPublishedNorFitted) {
  test::TempDir tmp;
  std::filesystem::create_directories(tmp.path() / "sys");
  std::filesystem::create_directories(tmp.path() / "proc");
  const std::string topo = (test::build_dir() / "topo").string();
  const std::string root = tmp.path().string();
  const std::filesystem::path out = tmp.path() / "out";
  for (const char* kind : {"resourceslices", "labels", "nrt", "shape"}) {
    SCOPED_TRACE(kind);
    std::vector<std::string> args = {topo, "export", kind, "--root", root};
    if (std::string(kind) != "shape") args.insert(args.end(), {"--node", "n1"});
    const auto to_stdout = test::run_command(args);
    EXPECT_EQ(to_stdout.exit_code, 1);
    EXPECT_TRUE(to_stdout.out.empty()) << to_stdout.out;
    EXPECT_NE(to_stdout.err.find("degraded result, nothing written: probe cpu failed"),
              std::string::npos)
        << to_stdout.err;
    if (std::string(kind) == "shape") continue;  // shape prints only
    args.insert(args.end(), {"--output", out.string()});
    const auto r = test::run_command(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << "a degraded result was written";
    EXPECT_NE(r.err.find("degraded result, nothing written: probe cpu failed"), std::string::npos)
        << r.err;
  }
  for (const char* view : {"dump", "matrix"}) {
    SCOPED_TRACE(view);
    const auto r = test::run_command({topo, view, "--root", root});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_FALSE(r.out.empty()) << "the view is still printed";
    EXPECT_NE(r.err.find("degraded result: probe cpu failed"), std::string::npos) << r.err;
  }
  const auto fit = test::run_command(
      {topo, "fit", (test::source_dir() / "tests/fit/examples/gpu-nic-same-switch.yaml").string(),
       "--class", (test::source_dir() / "tests/fit/examples/classes.yaml").string(), "--root", root,
       "--node", "n1"});
  EXPECT_EQ(fit.exit_code, 2) << fit.err << fit.out;
  EXPECT_NE(fit.err.find("degraded result: probe cpu failed"), std::string::npos) << fit.err;
}

}  // namespace
}  // namespace nodetopo
