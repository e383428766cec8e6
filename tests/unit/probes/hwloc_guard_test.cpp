// HwlocGuard's modes on a hand-made root: opens of per-CPU cache and cluster descriptions answered
// ENOENT without a system call when skipping (on "/" too, where nothing is contained), every other
// path opened as before, and nothing skipped by a guard that was not asked to skip; cpuinfo handed
// over with its lines shortened, and hwloc's topology the same whether it is or not; cpu/online,
// which hwloc reads twice when cpu0 has no topology, opened once; the package mask of a CPU an
// earlier mask listed answered without an open, and hwloc's topology the same.
#include "cpu/hwloc_guard.hpp"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <hwloc.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <nodetopo/probes/sys_root.hpp>

#include "test_support.hpp"

namespace nodetopo::probes::detail {
namespace {

using test::TempDir;
using test::write_file;

// What an openat of `rel` relative to `dirfd` gives: the errno, or 0 when it opened.
int open_errno(int dirfd, const char* rel) {
  errno = 0;
  const int fd = ::openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ::close(fd);
    return 0;
  }
  return errno;
}

// The environment hwloc's Linux backend loads a root under (the probe writes the same one, see
// cpu_numa_probe.cpp's hwloc_environment()), set for a scope: `root` as HWLOC_FSROOT unless it
// is the machine's own.
class HwlocEnvironment {
 public:
  explicit HwlocEnvironment(const std::filesystem::path& root = "/") {
    if (root != "/") ::setenv("HWLOC_FSROOT", root.c_str(), 1);
    ::setenv("HWLOC_COMPONENTS", "linux,stop", 1);
    ::setenv("HWLOC_PLUGINS_PATH", "/nonexistent/nodetopo-no-hwloc-plugins", 1);
  }
  ~HwlocEnvironment() {
    ::unsetenv("HWLOC_FSROOT");
    ::unsetenv("HWLOC_COMPONENTS");
    ::unsetenv("HWLOC_PLUGINS_PATH");
  }
  HwlocEnvironment(const HwlocEnvironment&) = delete;
  HwlocEnvironment& operator=(const HwlocEnvironment&) = delete;
};

class HwlocGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* dir : {"sys/devices/system/cpu", "sys/bus/cpu/devices"}) {
      const std::string cpu = std::string(dir) + "/cpu12";
      write_file(dir_.path() / cpu / "cache/index0/shared_cpu_map", "00001000\n");
      write_file(dir_.path() / cpu / "topology/core_id", "6\n");
      write_file(dir_.path() / cpu / "topology/cluster_cpus", "00001000\n");
      write_file(dir_.path() / cpu / "topology/cluster_id", "3\n");
      write_file(dir_.path() / cpu / "topology/die_cpus", "00001000\n");
    }
    write_file(dir_.path() / "sys/devices/system/cpu/cpufreq/boost", "1\n");
    write_file(dir_.path() / "sys/devices/system/cpu/cpu12cache/x", "1\n");
    write_file(dir_.path() / "sys/devices/system/cpu/cpu/cache/x", "1\n");
    root_fd_ = ::open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(root_fd_, 0);
    auto opened = SysRoot::open(dir_.path(), SysRoot::Liveness::kCapture);
    ASSERT_TRUE(opened.ok());
    root_.emplace(std::move(opened.value()));
  }
  void TearDown() override {
    if (root_fd_ >= 0) ::close(root_fd_);
  }

  TempDir dir_;
  int root_fd_ = -1;
  std::optional<SysRoot> root_;
};

TEST_F(HwlocGuardTest, SkipsCacheAndClusterDescriptionsAndOpensEverythingElse) {
  for (const bool contain : {true, false}) {
    SCOPED_TRACE(contain ? "containing guard" : "skipping only (the root /)");
    HwlocGuard guard(*root_,
                     HwlocGuard::Mode{.contain = contain, .skip_unused_descriptions = true});
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12/cache/index0/shared_cpu_map"),
              ENOENT);
    EXPECT_EQ(open_errno(root_fd_, "sys/bus/cpu/devices/cpu12/cache/index0/shared_cpu_map"),
              ENOENT);
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12/cache"), ENOENT);
    struct stat st {};
    EXPECT_NE(::fstatat(root_fd_, "sys/devices/system/cpu/cpu12/cache", &st, 0), 0);
    EXPECT_EQ(::faccessat(root_fd_, "sys/devices/system/cpu/cpu12/cache", R_OK, 0), -1);
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12/topology/cluster_cpus"), ENOENT);
    EXPECT_EQ(open_errno(root_fd_, "sys/bus/cpu/devices/cpu12/topology/cluster_id"), ENOENT);
    EXPECT_EQ(guard.skipped_calls(), 7U);
    // Not cache or cluster descriptions: read as hwloc asks.
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12/topology/core_id"), 0);
    EXPECT_EQ(open_errno(root_fd_, "sys/bus/cpu/devices/cpu12/topology/core_id"), 0);
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpufreq/boost"), 0);
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12cache/x"), 0);
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu/cache/x"), 0);
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12/topology/die_cpus"), 0);
    EXPECT_EQ(guard.skipped_calls(), 7U);
    EXPECT_EQ(guard.guarded_calls() > 0, contain);
  }
}

// On "/" hwloc opens absolute paths with descriptor -1: a guard that contains nothing skips by
// the path; a containing one leaves such calls (not on its root descriptor) to libc.
TEST_F(HwlocGuardTest, SkipsAbsoluteCachePathsOnlyWhenContainingNothing) {
  const std::string cache =
      (dir_.path() / "sys/devices/system/cpu/cpu12/cache/index0/shared_cpu_map").string();
  const std::string core = (dir_.path() / "sys/devices/system/cpu/cpu12/topology/core_id").string();
  {
    HwlocGuard guard(*root_, HwlocGuard::Mode{.contain = false, .skip_unused_descriptions = true});
    EXPECT_EQ(open_errno(-1, cache.c_str()), ENOENT);
    EXPECT_EQ(open_errno(-1, core.c_str()), 0);
    EXPECT_EQ(guard.skipped_calls(), 1U);
  }
  HwlocGuard guard(*root_, HwlocGuard::Mode{.contain = true, .skip_unused_descriptions = true});
  EXPECT_EQ(open_errno(-1, cache.c_str()), 0);
  EXPECT_EQ(guard.skipped_calls(), 0U);
}

TEST_F(HwlocGuardTest, ReadsCacheDescriptionsUnlessAskedToSkip) {
  HwlocGuard guard(*root_);
  EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12/cache/index0/shared_cpu_map"), 0);
  EXPECT_EQ(guard.skipped_calls(), 0U);
  EXPECT_GT(guard.guarded_calls(), 0U);
}

TEST_F(HwlocGuardTest, OtherDescriptorsAreNotSkipped) {
  // A descriptor of another directory than the root: the guard leaves its calls to libc.
  const int cpu_fd =
      ::open((dir_.path() / "sys/devices/system").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(cpu_fd, 0);
  HwlocGuard guard(*root_, HwlocGuard::Mode{.contain = true, .skip_unused_descriptions = true});
  EXPECT_EQ(open_errno(cpu_fd, "cpu/cpu12/cache/index0/shared_cpu_map"), 0);
  // The root identified once, then by its number: the other descriptor still is not it.
  EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12/cache/index0/shared_cpu_map"),
            ENOENT);
  EXPECT_EQ(open_errno(cpu_fd, "cpu/cpu12/topology/core_id"), 0);
  EXPECT_EQ(guard.skipped_calls(), 1U);
  ::close(cpu_fd);
}

std::string read_fd(int fd) {
  std::string text;
  char buf[4096];
  for (ssize_t n = 0; (n = ::read(fd, buf, sizeof(buf))) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  return text;
}

// The whole of `text` through one shortener.
std::string shorten(std::string_view text) {
  std::string out;
  HwlocGuard::CpuinfoShortener shortener;
  shortener.feed(text, out);
  shortener.finish(out);
  return out;
}

TEST(HwlocGuardCpuinfo, CutsEveryLineToWhatHwlocReads) {
  const std::string l127 = "model name\t: " + std::string(114, 'a');
  const std::string l128 = "model name\t: " + std::string(115, 'b');
  const std::string l1500 = "vendor_id\t: " + std::string(1490, 'c');
  const std::string text = "processor\t: 0\n\n" + l127 + "\n" + l128 + "\n" + l1500 + "\ncpu: last";
  ASSERT_EQ(l127.size(), 127U);
  const std::string cut = shorten(text);
  EXPECT_EQ(cut, "processor\t: 0\n\n" + l127 + "\n" + l128.substr(0, 127) + "\n" +
                     l1500.substr(0, 127) + "\ncpu: last");
  EXPECT_EQ(shorten(""), "");
  // The first line is kept whatever it is (hwloc also reads it alone); so is the last without
  // its newline.
  EXPECT_EQ(shorten(std::string(300, 'd')), std::string(127, 'd'));
  EXPECT_EQ(shorten("flags: x\nmodel: 1"), "flags: x\nmodel: 1");
  // Fed in pieces of every size, lines spanning pieces: the same text.
  for (std::size_t piece : {1U, 7U, 100U, 127U, 128U, 4096U}) {
    HwlocGuard::CpuinfoShortener shortener;
    std::string out;
    for (std::size_t at = 0; at < text.size(); at += piece)
      shortener.feed(std::string_view(text).substr(at, piece), out);
    shortener.finish(out);
    EXPECT_EQ(out, cut) << "pieces of " << piece;
  }
}

TEST(HwlocGuardCpuinfo, LeavesOutTheLinesHwlocIgnores) {
  using Shortener = HwlocGuard::CpuinfoShortener;
  // Read: empty lines, "processor", and the keys of every architecture's parser, however the
  // blanks before ':' and the case (hwloc compares some keys case-insensitively).
  for (const char* line : {"",
                           "processor\t: 3",
                           "vendor_id\t: GenuineIntel",
                           "model\t\t: 143",
                           "model name\t: Xeon",
                           "cpu family\t: 6",
                           "stepping\t: 8",
                           "CPU implementer\t: 0x41",
                           "CPU part\t: 0xd0c",
                           "Hardware\t: x",
                           "Serial\t\t: 1",
                           "cpu\t\t: POWER9",
                           "CPU: 68040",
                           "platform\t: pSeries",
                           "Machine\t\t: x",
                           "revision\t: 2.2",
                           "Board ID: 7",
                           "SVR: 1",
                           "PVR: 2",
                           "chip type: avr32",
                           "cpu model\t: R4000",
                           "vendor: Intel",
                           "family: Itanium",
                           "model:",
                           "model :x"}) {
    EXPECT_TRUE(Shortener::hwloc_reads(line)) << line;
  }
  // Not read: keys no parser compares, lines without ':', lines not starting with a letter.
  for (const char* line :
       {"flags\t\t: fpu vme", "bugs\t\t: spectre_v1", "cpu MHz\t\t: 2000.000",
        "cache size\t: 107520 KB", "physical id\t: 0", "core id\t\t: 1", "siblings\t: 112",
        "power management:", "address sizes\t: 46 bits physical", "models: x", "processors: 1",
        "no colon here", " processor\t: 1", "\tmodel: 1", "1: model", ": model",
        "processor 0: model"}) {
    EXPECT_FALSE(Shortener::hwloc_reads(line)) << line;
  }
  // A key beyond the characters hwloc reads of its line is not seen either.
  const std::string far = std::string(130, 'x') + "model: 1";
  EXPECT_EQ(shorten("processor\t: 0\n" + far + "\nflags: y\n\nmodel: 2\n"),
            "processor\t: 0\n\nmodel: 2\n");
}

// cpuinfo as a large x86 host writes it, with a model name longer than hwloc's line buffer: four
// CPUs with flags lines three times a real host's, so that the file passes
// HwlocGuard::kShortenFromBytes (sysfs below describes four CPUs).
std::string long_cpuinfo() {
  std::string text;
  const std::string model = "Intel(R) Xeon(R) " + std::string(140, 'M') + " CPU @ 2.00GHz";
  for (int cpu = 0; cpu < 4; ++cpu) {
    text += "processor\t: " + std::to_string(cpu) + "\nvendor_id\t: GenuineIntel\n";
    text += "cpu family\t: 6\nmodel\t\t: 143\nmodel name\t: " + model + "\n";
    text += "physical id\t: " + std::to_string(cpu / 2) +
            "\ncore id\t\t: " + std::to_string(cpu % 2) + "\n";
    text += "stepping\t: 8\ncpu MHz\t\t: 2000.000\nsiblings\t: 2\n";
    text += "flags\t\t: " + std::string(4500, 'f') + "\nbugs\t\t: spectre_v1\n";
    text += "power management:\n  a line hwloc skips\n\n";
  }
  return text;
}

TEST_F(HwlocGuardTest, HandsHwlocCpuinfoShortenedOnItsRoot) {
  ASSERT_GE(long_cpuinfo().size(), HwlocGuard::kShortenFromBytes);
  write_file(dir_.path() / "proc/cpuinfo", long_cpuinfo());
  write_file(dir_.path() / "proc/meminfo", "MemTotal: 1024 kB\n");
  for (const bool contain : {true, false}) {
    SCOPED_TRACE(contain ? "containing guard" : "the root /");
    HwlocGuard guard(*root_, HwlocGuard::Mode{.contain = contain, .shorten_cpuinfo = true});
    const std::string abs = (dir_.path() / "proc/cpuinfo").string();
    const int fd = contain ? ::openat(root_fd_, "proc/cpuinfo", O_RDONLY | O_CLOEXEC)
                           : ::openat(-1, abs.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(read_fd(fd), shorten(long_cpuinfo()));
    ::close(fd);
    EXPECT_EQ(guard.shortened_cpuinfo(), 1U);
    // Other files are handed over as they are.
    const int mem = ::openat(root_fd_, "proc/meminfo", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(mem, 0);
    EXPECT_EQ(read_fd(mem), "MemTotal: 1024 kB\n");
    ::close(mem);
    EXPECT_EQ(guard.shortened_cpuinfo(), 1U);
  }
  HwlocGuard plain(*root_);
  const int fd = ::openat(root_fd_, "proc/cpuinfo", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(read_fd(fd), long_cpuinfo());
  ::close(fd);
  EXPECT_EQ(plain.shortened_cpuinfo(), 0U);
}

// A cpuinfo shorter than kShortenFromBytes (a few CPUs) is handed over as it is, the file's own
// descriptor read from its start: hwloc parses it faster than the copy would be made. One byte
// less than the limit is not copied, the limit itself is.
TEST_F(HwlocGuardTest, HandsHwlocASmallCpuinfoAsItIs) {
  const std::string block = "processor\t: 0\nflags\t\t: " + std::string(200, 'f') + "\n\n";
  std::string small;
  while (small.size() + block.size() < HwlocGuard::kShortenFromBytes)
    small += block;
  small += std::string(HwlocGuard::kShortenFromBytes - 1 - small.size(), '\n');
  for (const std::size_t extra : {0, 1}) {
    const std::string text = small + std::string(extra, '\n');
    write_file(dir_.path() / "proc/cpuinfo", text);
    HwlocGuard guard(*root_, HwlocGuard::Mode{.contain = true, .shorten_cpuinfo = true});
    const int fd = ::openat(root_fd_, "proc/cpuinfo", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(read_fd(fd), extra == 0 ? text : shorten(text));
    ::close(fd);
    EXPECT_EQ(guard.shortened_cpuinfo(), extra);
  }
}

// hwloc's XML export of the loaded `topo`, which is destroyed.
std::string xml_and_destroy(hwloc_topology_t topo) {
  std::string xml;
  char* buf = nullptr;
  int len = 0;
  EXPECT_EQ(hwloc_topology_export_xmlbuffer(topo, &buf, &len, 0), 0);
  if (buf != nullptr) xml.assign(buf);
  hwloc_free_xmlbuffer(topo, buf);
  hwloc_topology_destroy(topo);
  return xml;
}

// hwloc's XML of the environment's root, loaded under a guard of `mode` over `root`, with caches,
// cores and dies left out as the probe leaves them when `as_the_probe`; `seen` is handed the
// guard before it ends, to read its counters.
std::string load_guarded(const SysRoot& root, const HwlocGuard::Mode& mode, bool as_the_probe,
                         const std::function<void(const HwlocGuard&)>& seen) {
  hwloc_topology_t topo = nullptr;
  EXPECT_EQ(hwloc_topology_init(&topo), 0);
  if (as_the_probe) {
    hwloc_topology_set_cache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    for (const hwloc_obj_type_t type : {HWLOC_OBJ_CORE, HWLOC_OBJ_DIE})
      hwloc_topology_set_type_filter(topo, type, HWLOC_TYPE_FILTER_KEEP_NONE);
  }
  {
    HwlocGuard guard(root, mode);
    EXPECT_EQ(hwloc_topology_load(topo), 0);
    seen(guard);
  }
  return xml_and_destroy(topo);
}

// What the shortening rests on: hwloc builds the same topology from the shortened copy as from
// the file (its parser reads no more of a line than the copy keeps). Should a later hwloc read
// longer lines, the long model name below would differ and this test fail.
TEST_F(HwlocGuardTest, HwlocLoadsTheSameTopologyFromShortenedCpuinfo) {
  write_file(dir_.path() / "proc/cpuinfo", long_cpuinfo());
  // The sysfs CPU topology hwloc's Linux backend needs besides: two packages of two cores.
  for (unsigned cpu = 0; cpu < 4; ++cpu) {
    const auto topo =
        dir_.path() / ("sys/devices/system/cpu/cpu" + std::to_string(cpu)) / "topology";
    write_file(topo / "physical_package_id", std::to_string(cpu / 2) + "\n");
    write_file(topo / "core_id", std::to_string(cpu % 2) + "\n");
    write_file(topo / "thread_siblings", std::to_string(1U << cpu) + "\n");
    write_file(topo / "core_siblings", cpu < 2 ? "3\n" : "c\n");
  }
  write_file(dir_.path() / "sys/devices/system/cpu/online", "0-3\n");
  // An x86 root, so that hwloc's x86 cpuinfo parser (vendor, family, model, stepping) runs.
  write_file(dir_.path() / "proc/hwloc-nofile-info", "Architecture: x86_64\n");
  const HwlocEnvironment environment(dir_.path());
  auto load = [&](bool shorten, std::size_t* shortened) {
    return load_guarded(*root_, HwlocGuard::Mode{.contain = true, .shorten_cpuinfo = shorten},
                        false, [&](const HwlocGuard& g) { *shortened = g.shortened_cpuinfo(); });
  };
  std::size_t shortened = 0;
  const std::string as_file = load(false, &shortened);
  EXPECT_EQ(shortened, 0U);
  const std::string as_copy = load(true, &shortened);
  EXPECT_EQ(shortened, 1U);
  EXPECT_EQ(as_copy, as_file);
  // hwloc did read the model name (cut, as its own parser cuts it) and two packages.
  EXPECT_NE(as_file.find("Intel(R) Xeon(R) MMMM"), std::string::npos);
  EXPECT_NE(as_file.find("type=\"Package\" os_index=\"1\""), std::string::npos);
  // ... and the lines after those the copy leaves out.
  EXPECT_NE(as_file.find("name=\"CPUStepping\" value=\"8\""), std::string::npos);
  EXPECT_NE(as_file.find("name=\"CPUVendor\" value=\"GenuineIntel\""), std::string::npos);
}

// The opens inotify reported on `watch` (a watch of IN_OPEN | IN_CLOSE), which is closed.
std::size_t opens_seen(int watch) {
  std::size_t opens = 0;
  alignas(inotify_event) std::array<char, 4096> events{};
  for (ssize_t n = 0; (n = ::read(watch, events.data(), events.size())) > 0;) {
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(events.data() + at);  // NOLINT
      opens += (event->mask & IN_OPEN) != 0 ? 1 : 0;
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
  ::close(watch);
  return opens;
}

// One hwloc load of the environment's root, under a guard of `mode` over `root` (none when
// nullopt), counting with inotify the opens of `watched` that anyone makes meanwhile.
struct WatchedLoad {
  std::string xml;
  std::size_t opens = 0;      // of `watched`, as inotify saw them
  std::size_t from_copy = 0;  // opens the guard answered from its copy
  bool kept = false;          // whether the guard kept a copy at all
};
WatchedLoad load_watching(const std::filesystem::path& watched, const SysRoot& root,
                          const std::optional<HwlocGuard::Mode>& mode) {
  WatchedLoad out;
  const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  EXPECT_GE(watch, 0);
  if (watch < 0) return out;
  // Closes watched too: inotify merges an event identical to the unread one before it, so
  // open, open would count once; open, close, open, close counts twice.
  EXPECT_GE(::inotify_add_watch(watch, watched.c_str(), IN_OPEN | IN_CLOSE), 0);
  hwloc_topology_t topo = nullptr;
  EXPECT_EQ(hwloc_topology_init(&topo), 0);
  {
    std::optional<HwlocGuard> guard;
    if (mode) guard.emplace(root, *mode);
    EXPECT_EQ(hwloc_topology_load(topo), 0);
    if (guard) {
      out.from_copy = guard->reread_from_copy();
      out.kept = guard->kept_online();
    }
  }
  out.opens = opens_seen(watch);
  out.xml = xml_and_destroy(topo);
  return out;
}

// hwloc 2.9 reads cpu/online twice when cpu0 has no topology (check_sysfs_cpu_path()'s fallback
// to the first online CPU, then look_sysfscpu()). Under a guard the file is opened once — inotify
// counts every open of it, whoever makes it — and hwloc builds the same topology as when it
// reads the file twice by itself; with cpu0 described, hwloc reads it once and no copy is made.
// (What hwloc does by itself is checked too: a later hwloc that reads the file once fails it.)
TEST(HwlocGuardCpuOnline, ReadOnceWhenHwlocFallsBackFromCpu0) {
  for (const bool cpu0_described : {false, true}) {
    SCOPED_TRACE(cpu0_described ? "cpu0 described" : "cpu0 offline, no topology");
    TempDir dir;
    for (unsigned cpu = 0; cpu < 4; ++cpu) {
      const auto base = dir.path() / ("sys/devices/system/cpu/cpu" + std::to_string(cpu));
      write_file(base / "online", cpu == 0 && !cpu0_described ? "0\n" : "1\n");
      if (cpu == 0 && !cpu0_described) continue;
      write_file(base / "topology/physical_package_id", "0\n");
      write_file(base / "topology/core_id", std::to_string(cpu) + "\n");
      write_file(base / "topology/thread_siblings", std::to_string(1U << cpu) + "\n");
      write_file(base / "topology/core_siblings", "f\n");
    }
    const auto online = dir.path() / "sys/devices/system/cpu/online";
    write_file(online, cpu0_described ? "0-3\n" : "1-3\n");
    write_file(dir.path() / "proc/hwloc-nofile-info", "Architecture: x86_64\n");
    auto opened = SysRoot::open(dir.path(), SysRoot::Liveness::kCapture);
    ASSERT_TRUE(opened.ok());
    const HwlocEnvironment environment(dir.path());
    const WatchedLoad by_itself = load_watching(online, opened.value(), std::nullopt);
    const WatchedLoad guarded = load_watching(online, opened.value(), HwlocGuard::Mode{});
    EXPECT_EQ(by_itself.opens, cpu0_described ? 1U : 2U);  // what the guard is for
    EXPECT_EQ(guarded.opens, 1U);
    EXPECT_EQ(guarded.from_copy, cpu0_described ? 0U : 1U);
    EXPECT_EQ(guarded.kept, !cpu0_described);
    EXPECT_EQ(guarded.xml, by_itself.xml);
    // hwloc did read the CPUs online, and found the topology of cpu3.
    EXPECT_NE(guarded.xml.find("type=\"PU\" os_index=\"3\""), std::string::npos);
    EXPECT_EQ(guarded.xml.find("type=\"PU\" os_index=\"0\"") != std::string::npos, cpu0_described);
  }
}

// On the machine's own root, hwloc 2.9 asks sysconf(_SC_NPROCESSORS_ONLN) first, and glibc reads
// /sys/devices/system/cpu/online for it; look_sysfscpu() then reads the file itself. Guarded,
// the file is opened once (inotify counts every open, libc's included) and hwloc builds the
// same topology; a guard that is not hwloc's (another thread) leaves sysconf() to libc.
TEST(HwlocGuardCpuOnline, ReadOnceOnTheLiveRoot) {
  const std::filesystem::path online = "/sys/devices/system/cpu/online";
  if (!std::filesystem::exists(online)) GTEST_SKIP() << "this machine has no " << online;
  auto opened = SysRoot::open("/");
  ASSERT_TRUE(opened.ok());
  const HwlocEnvironment environment;
  const WatchedLoad by_itself = load_watching(online, opened.value(), std::nullopt);
  const WatchedLoad guarded =
      load_watching(online, opened.value(), HwlocGuard::Mode{.contain = false});
  EXPECT_EQ(by_itself.opens, 2U);  // what the guard is for
  EXPECT_EQ(guarded.opens, 1U);
  EXPECT_TRUE(guarded.kept);
  EXPECT_EQ(guarded.xml, by_itself.xml);
  // Without a guard on the calling thread, libc answers.
  EXPECT_EQ(::sysconf(_SC_NPROCESSORS_ONLN), ::get_nprocs());
}

// The same on the real root "/", where the guard contains nothing and hwloc names absolute
// paths with no root descriptor: after the failed check of cpu0's thread_siblings, the second
// open of cpu/online gets the first one's text from the copy, and other files are untouched.
TEST(HwlocGuardCpuOnline, CopiedOnTheRootThatContainsNothing) {
  TempDir dir;
  const auto cpu = dir.path() / "sys/devices/system/cpu";
  write_file(cpu / "online", "1-3\n");
  write_file(cpu / "possible", "0-3\n");
  auto opened = SysRoot::open(dir.path(), SysRoot::Liveness::kCapture);
  ASSERT_TRUE(opened.ok());
  HwlocGuard guard(opened.value(), HwlocGuard::Mode{.contain = false});
  auto read_abs = [](const std::filesystem::path& path) {
    const int fd = ::openat(-1, path.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    if (fd < 0) return std::string();
    std::string text = read_fd(fd);
    ::close(fd);
    return text;
  };
  EXPECT_EQ(read_abs(cpu / "online"), "1-3\n");  // no failed check yet: the file itself
  EXPECT_FALSE(guard.kept_online());
  const auto siblings = cpu / "cpu0/topology/thread_siblings";
  EXPECT_NE(::faccessat(-1, siblings.c_str(), R_OK, 0), 0);
  EXPECT_EQ(errno, ENOENT);  // the guard keeps hwloc's errno
  EXPECT_EQ(read_abs(cpu / "online"), "1-3\n");
  EXPECT_TRUE(guard.kept_online());
  write_file(cpu / "online", "changed\n");  // the next reading is the copy, not the file
  EXPECT_EQ(read_abs(cpu / "online"), "1-3\n");
  EXPECT_EQ(guard.reread_from_copy(), 1U);
  EXPECT_EQ(read_abs(cpu / "possible"), "0-3\n");
}

// A root of two packages of four CPUs each (cpu0-3, cpu4-7), every CPU's package mask in the
// kernel's form, and what hwloc's Linux backend needs besides to load it without cores.
void write_two_packages(const std::filesystem::path& root) {
  for (unsigned cpu = 0; cpu < 8; ++cpu) {
    const auto topo = root / ("sys/devices/system/cpu/cpu" + std::to_string(cpu)) / "topology";
    write_file(topo / "physical_package_id", std::to_string(cpu / 4) + "\n");
    write_file(topo / "package_cpus", cpu < 4 ? "00000000,0000000f\n" : "00000000,000000f0\n");
  }
  write_file(root / "sys/devices/system/cpu/online", "0-7\n");
  write_file(root / "proc/hwloc-nofile-info", "Architecture: x86_64\n");
}

std::string package_mask(unsigned cpu) {
  return "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/package_cpus";
}

// The package mask of a CPU that an earlier mask listed is answered ENOENT without being opened;
// the first CPU of each package reads its file whole, from the start (the guard's own pread
// leaves hwloc's offset alone). On "/" too, where the guard contains nothing.
TEST_F(HwlocGuardTest, AnswersTheMaskOfAKnownPackageSiblingWithoutOpeningIt) {
  write_two_packages(dir_.path());
  for (const bool contain : {true, false}) {
    SCOPED_TRACE(contain ? "containing guard" : "the root /");
    HwlocGuard guard(*root_,
                     HwlocGuard::Mode{.contain = contain, .skip_known_package_siblings = true});
    for (unsigned cpu = 0; cpu < 8; ++cpu) {
      const std::string rel = package_mask(cpu);
      const std::string abs = (dir_.path() / rel).string();
      errno = 0;
      const int fd = contain ? ::openat(root_fd_, rel.c_str(), O_RDONLY | O_CLOEXEC)
                             : ::openat(-1, abs.c_str(), O_RDONLY | O_CLOEXEC);
      if (cpu % 4 == 0) {
        ASSERT_GE(fd, 0) << rel;
        EXPECT_EQ(read_fd(fd), cpu == 0 ? "00000000,0000000f\n" : "00000000,000000f0\n");
        ::close(fd);
      } else {
        EXPECT_EQ(fd, -1) << rel;
        EXPECT_EQ(errno, ENOENT) << rel;
      }
    }
    EXPECT_EQ(guard.skipped_siblings(), 6U);
  }
  // Not asked to: every mask is opened.
  HwlocGuard plain(*root_, HwlocGuard::Mode{.contain = true, .skip_unused_descriptions = true});
  for (unsigned cpu = 0; cpu < 8; ++cpu)
    EXPECT_EQ(open_errno(root_fd_, package_mask(cpu).c_str()), 0) << cpu;
  EXPECT_EQ(plain.skipped_siblings(), 0U);
}

// Only a mask in the kernel's own form (8-digit hex words, commas) that lists the CPU it was read
// for says who its siblings are; any other is left to hwloc, and the next CPU's mask is opened.
TEST_F(HwlocGuardTest, TrustsOnlyKernelFormedMasksListingTheirOwnCpu) {
  write_two_packages(dir_.path());
  for (const char* first : {"f\n", "0000000e\n", "0000000g\n", "000000000f\n", "0000000f,\n",
                            ",0000000f\n", "0000000f\n\n", ""}) {
    SCOPED_TRACE(std::string("cpu0's mask: '") + first + "'");
    write_file(dir_.path() / package_mask(0), first);
    HwlocGuard guard(*root_,
                     HwlocGuard::Mode{.contain = true, .skip_known_package_siblings = true});
    EXPECT_EQ(open_errno(root_fd_, package_mask(0).c_str()), 0);
    EXPECT_EQ(open_errno(root_fd_, package_mask(1).c_str()), 0);
    EXPECT_EQ(guard.skipped_siblings(), 0U);
  }
  // Upper-case digits and one word are the kernel's form as well; cpu1 names the package now.
  write_file(dir_.path() / package_mask(0), "0000000E\n");
  HwlocGuard guard(*root_, HwlocGuard::Mode{.contain = true, .skip_known_package_siblings = true});
  EXPECT_EQ(open_errno(root_fd_, package_mask(0).c_str()), 0);  // lists cpu1-3, not cpu0
  EXPECT_EQ(open_errno(root_fd_, package_mask(1).c_str()), 0);  // lists cpu0-3
  EXPECT_EQ(open_errno(root_fd_, package_mask(2).c_str()), ENOENT);
  EXPECT_EQ(open_errno(root_fd_, package_mask(0).c_str()), ENOENT);  // listed by cpu1's mask now
  EXPECT_EQ(guard.skipped_siblings(), 2U);
}

// hwloc's access(cpuN/topology, X_OK) is answered by the contained open alone: 0 for a
// directory that is there, ENOENT for one that is not; other checks are asked of the kernel.
TEST_F(HwlocGuardTest, AnswersTheCpuTopologyCheckByTheOpen) {
  write_two_packages(dir_.path());
  HwlocGuard guard(*root_, HwlocGuard::Mode{.contain = true, .skip_known_package_siblings = true});
  EXPECT_EQ(::faccessat(root_fd_, "sys/devices/system/cpu/cpu3/topology", X_OK, 0), 0);
  errno = 0;
  EXPECT_EQ(::faccessat(root_fd_, "sys/devices/system/cpu/cpu9/topology", X_OK, 0), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(::faccessat(root_fd_, "sys/devices/system/cpu/cpu3/topology/package_cpus", R_OK, 0), 0);
  errno = 0;
  EXPECT_EQ(::faccessat(root_fd_, "sys/devices/system/cpu/cpu3/topology/package_cpus", W_OK, 0),
            -1);
  EXPECT_EQ(errno, EACCES);  // hwloc never writes
}

// What skipping rests on: with cores, dies and clusters left out (the probe's filters), hwloc
// builds the same topology whether it reads every CPU's package mask or the first of each
// package only, on a root with two packages.
TEST_F(HwlocGuardTest, HwlocLoadsTheSameTopologyFromOneMaskPerPackage) {
  write_two_packages(dir_.path());
  const HwlocEnvironment environment(dir_.path());
  auto load = [&](bool skip, std::size_t* skipped) {
    return load_guarded(
        *root_,
        HwlocGuard::Mode{
            .contain = true, .skip_unused_descriptions = true, .skip_known_package_siblings = skip},
        true, [&](const HwlocGuard& g) { *skipped = g.skipped_siblings(); });
  };
  std::size_t skipped = 0;
  const std::string every_mask = load(false, &skipped);
  EXPECT_EQ(skipped, 0U);
  const std::string one_per_package = load(true, &skipped);
  EXPECT_EQ(skipped, 6U);
  EXPECT_EQ(one_per_package, every_mask);
  EXPECT_NE(every_mask.find("type=\"Package\" os_index=\"0\""), std::string::npos);
  EXPECT_NE(every_mask.find("type=\"Package\" os_index=\"1\""), std::string::npos);
  EXPECT_NE(every_mask.find("type=\"PU\" os_index=\"7\""), std::string::npos);
}

}  // namespace
}  // namespace nodetopo::probes::detail
