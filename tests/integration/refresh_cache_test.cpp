// The agent's cheaper refresh (probes/discovery_cache.hpp) and the probes' overlap
// (probes::run_probes): after each simulated event on a mock host, a discovery through the cache
// must equal a fresh one byte for byte, while reading less; the overlap must give what one probe
// after the other gives; and hwloc's guard, active on one thread, must leave another thread's
// file system calls alone.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodetopo/core/host_source.hpp>
#include <nodetopo/core/snapshot.hpp>
#include <nodetopo/exporters/json_model.hpp>
#include <nodetopo/probes/cpu_numa_probe.hpp>
#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/discovery_cache.hpp>
#include <nodetopo/probes/pci_probe.hpp>

#include "cpu/hwloc_guard.hpp"

namespace nodetopo {
namespace {

namespace fs = std::filesystem;
using probes::Changes;
using probes::DiscoveryCache;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::trunc);
  out << text;
}

// A mock host opened as the agent opens it, with the environment written (this test's main
// thread, no other thread running).
class Host {
 public:
  explicit Host(const std::string& profile) {
    core::HostSource source(core::HostSpec{.root = "", .mock = profile});
    auto opened = source.open();
    if (!opened) throw std::runtime_error(opened.error().describe());
    host_.emplace(std::move(opened.value()));
    core::write_process_environment(*host_);
  }
  [[nodiscard]] fs::path root() const { return host_->root().path(); }

  // The JSON model with the probe reports: what `topo dump --format json` prints.
  std::string snapshot(DiscoveryCache* cache, bool overlap = true,
                       probes::SysRoot::PathWalk walk = probes::SysRoot::PathWalk::kKernelChecked) {
    probes::ProbeOptions options = host_->probe_options();
    options.overlap = overlap;
    auto root = probes::SysRoot::open(this->root(), probes::SysRoot::Liveness::kCapture, walk);
    EXPECT_TRUE(root.ok());
    const probes::Discovery d = probes::discover(root.value(), options, cache);
    return exporters::render_json_model(d.topology, d.reports);
  }
  std::string fresh() { return snapshot(nullptr); }

 private:
  std::optional<core::OpenedHost> host_;
};

// The device directory behind bus/pci/devices/<name>, root-relative ("sys/devices/...").
std::string device_path(const fs::path& root, const std::string& name) {
  const fs::path link = root / "sys/bus/pci/devices" / name;
  return fs::relative(fs::canonical(link), fs::canonical(root)).string();
}

// The bus/pci/devices entries whose class starts with `class_prefix` ("0x0302": 3D controller).
std::vector<std::string> functions_of_class(const fs::path& root, const std::string& class_prefix) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(root / "sys/bus/pci/devices")) {
    if (read_text(e.path() / "class").starts_with(class_prefix)) {
      names.push_back(e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A PCI function unplugged: its device directory moved aside and its bus link removed, as the
// kernel removes both. Returns what replug() needs.
struct Unplugged {
  std::string name;
  std::string target;
  fs::path dir;
  fs::path aside;
};

Unplugged unplug(const fs::path& root, const std::string& name, const fs::path& aside) {
  Unplugged u;
  u.name = name;
  const fs::path link = root / "sys/bus/pci/devices" / name;
  u.target = fs::read_symlink(link).string();
  u.dir = fs::canonical(link);
  u.aside = aside;
  fs::rename(u.dir, u.aside);
  fs::remove(link);
  return u;
}

void replug(const fs::path& root, const Unplugged& u) {
  fs::rename(u.aside, u.dir);
  fs::create_symlink(u.target, root / "sys/bus/pci/devices" / u.name);
}

Changes pci_event(const std::string& sysfs_path) {
  Changes c = Changes::none();
  c.pci = true;
  c.pci_paths.push_back(sysfs_path);
  return c;
}

TEST(RefreshCache, EveryEventGivesWhatAFreshDiscoveryGives) {
  Host host("synthetic:gpus=3,nics=3,nic_vfs=2");
  const fs::path root = host.root();
  DiscoveryCache cache;

  // First discovery through the cache: everything is read.
  cache.invalidate(Changes{});
  const std::string initial = host.snapshot(&cache);
  EXPECT_EQ(initial, host.fresh());
  EXPECT_FALSE(cache.stats().platform_reused);
  EXPECT_EQ(cache.stats().pci_functions_reused, 0U);
  EXPECT_TRUE(cache.stats().pci_ids_scanned);
  const std::size_t functions = cache.stats().pci_functions_read;
  ASSERT_GT(functions, 10U);

  // An event about something no cached part holds (a net device): nothing read again.
  cache.invalidate(Changes::none());
  EXPECT_EQ(host.snapshot(&cache), initial);
  EXPECT_TRUE(cache.stats().platform_reused);
  EXPECT_EQ(cache.stats().pci_functions_read, 0U);
  EXPECT_EQ(cache.stats().pci_functions_reused, functions);
  EXPECT_FALSE(cache.stats().pci_ids_scanned);

  // PCI remove: one GPU unplugged.
  const std::vector<std::string> gpus = functions_of_class(root, "0x0302");
  ASSERT_EQ(gpus.size(), 3U);
  const std::string gpu_path = device_path(root, gpus.back());
  const Unplugged gone = unplug(root, gpus.back(), root / "unplugged-gpu");
  cache.invalidate(pci_event(gpu_path));
  const std::string removed = host.snapshot(&cache);
  EXPECT_NE(removed, initial);
  EXPECT_EQ(removed, host.fresh());
  EXPECT_TRUE(cache.stats().platform_reused);
  EXPECT_GT(cache.stats().pci_functions_reused, functions / 2);
  EXPECT_LT(cache.stats().pci_functions_read, 5U);  // its bridge ancestors only

  // PCI add: it comes back.
  replug(root, gone);
  cache.invalidate(pci_event(gpu_path));
  EXPECT_EQ(host.snapshot(&cache), initial);
  EXPECT_EQ(host.fresh(), initial);
  EXPECT_LT(cache.stats().pci_functions_read, 6U);

  // A virtual function removed (sriov_numvfs lowered): its physical function is read again.
  std::vector<std::string> vfs;
  for (const auto& e : fs::directory_iterator(root / "sys/bus/pci/devices")) {
    if (fs::exists(e.path() / "physfn")) vfs.push_back(e.path().filename().string());
  }
  std::sort(vfs.begin(), vfs.end());
  ASSERT_FALSE(vfs.empty());
  const fs::path pf_dir = fs::canonical(root / "sys/bus/pci/devices" / vfs.back() / "physfn");
  const std::string vf_path = device_path(root, vfs.back());
  (void)unplug(root, vfs.back(), root / "unplugged-vf");
  const std::string numvfs = read_text(pf_dir / "sriov_numvfs");
  write_text(pf_dir / "sriov_numvfs", std::to_string(std::stoi(numvfs) - 1) + "\n");
  cache.invalidate(pci_event(vf_path));
  const std::string vf_removed = host.snapshot(&cache);
  EXPECT_NE(vf_removed, initial);
  EXPECT_EQ(vf_removed, host.fresh());

  // A CPU goes offline: the platform is read again.
  const std::string online = read_text(root / "sys/devices/system/cpu/online");
  ASSERT_TRUE(online.starts_with("0-")) << online;
  const int last = std::stoi(online.substr(2));
  write_text(root / "sys/devices/system/cpu/online", "0-" + std::to_string(last - 1) + "\n");
  write_text(root / ("sys/devices/system/cpu/cpu" + std::to_string(last) + "/online"), "0\n");
  Changes cpu = Changes::none();
  cpu.platform = true;
  cache.invalidate(cpu);
  const std::string offline = host.snapshot(&cache);
  EXPECT_NE(offline, vf_removed);
  EXPECT_EQ(offline, host.fresh());
  EXPECT_FALSE(cache.stats().platform_reused);
  EXPECT_EQ(cache.stats().pci_functions_read, 0U);

  // A network interface renamed (a net event): the net probe runs on every discovery.
  std::string nic;
  for (const auto& e : fs::directory_iterator(root / "sys/class/net")) {
    if (e.path().filename() != "lo" && fs::exists(e.path() / "device")) {
      nic = e.path().filename().string();
      break;
    }
  }
  ASSERT_FALSE(nic.empty());
  const fs::path nic_link = root / "sys/class/net" / nic;
  const fs::path nic_dir = fs::canonical(nic_link);
  const fs::path renamed_dir = nic_dir.parent_path() / "renamed0";
  fs::rename(nic_dir, renamed_dir);
  const std::string nic_target = fs::read_symlink(nic_link).string();
  fs::remove(nic_link);
  fs::create_symlink(nic_target.substr(0, nic_target.rfind('/') + 1) + "renamed0",
                     root / "sys/class/net/renamed0");
  cache.invalidate(Changes::none());
  const std::string net_changed = host.snapshot(&cache);
  EXPECT_NE(net_changed, offline);
  EXPECT_NE(net_changed.find("renamed0"), std::string::npos);
  EXPECT_EQ(net_changed, host.fresh());
  EXPECT_TRUE(cache.stats().platform_reused);

  // The control: a change the events did not announce is not seen until a full refresh — the
  // comparisons above could fail.
  write_text(root / "sys/devices/system/cpu/online", online);
  write_text(root / ("sys/devices/system/cpu/cpu" + std::to_string(last) + "/online"), "1\n");
  cache.invalidate(Changes::none());
  EXPECT_EQ(host.snapshot(&cache), net_changed);
  EXPECT_NE(host.fresh(), net_changed);
  cache.invalidate(Changes{});
  EXPECT_EQ(host.snapshot(&cache), host.fresh());
}

TEST(RefreshCache, PciEventWithoutAPathReadsEveryFunction) {
  Host host("synthetic:gpus=2,nics=2");
  DiscoveryCache cache;
  const std::string initial = host.snapshot(&cache);
  const std::size_t functions = cache.stats().pci_functions_read;
  Changes all_pci = Changes::none();
  all_pci.pci = true;
  cache.invalidate(all_pci);
  EXPECT_EQ(host.snapshot(&cache), initial);
  EXPECT_EQ(cache.stats().pci_functions_read, functions);
  EXPECT_EQ(cache.stats().pci_functions_reused, 0U);
  EXPECT_TRUE(cache.stats().platform_reused);
}

TEST(RefreshCache, ChangesMerge) {
  Changes acc = Changes::none();
  acc.merge(Changes::none());
  EXPECT_FALSE(acc.everything);
  EXPECT_FALSE(acc.pci);
  acc.merge(pci_event("sys/devices/pci0000:00/0000:00:01.0"));
  acc.merge(pci_event("sys/devices/pci0000:00/0000:00:02.0"));
  EXPECT_TRUE(acc.pci);
  EXPECT_EQ(acc.pci_paths.size(), 2U);
  Changes all_pci = Changes::none();
  all_pci.pci = true;
  acc.merge(all_pci);
  EXPECT_TRUE(acc.pci_paths.empty());  // every function
  acc.merge(pci_event("sys/devices/pci0000:00/0000:00:03.0"));
  EXPECT_TRUE(acc.pci_paths.empty());  // still every function
  EXPECT_FALSE(acc.everything);
  acc.merge(Changes{});
  EXPECT_TRUE(acc.everything);
}

TEST(ProbeOverlap, SameOutputAsOneProbeAfterTheOther) {
  // 136 functions: the walk beside hwloc also starts its own second reader.
  Host host("synthetic:gpus=8,nics=8,switch_depth=2,nic_vfs=8");
  const std::string serial = host.snapshot(nullptr, false);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(host.snapshot(nullptr, true), serial);
}

// hwloc's guard on one thread, a PCI walk and plain libc calls on another, at the same time,
// under a mock root: the guard sees hwloc's calls, the other thread's are not redirected, and
// both probes give what they give alone.
TEST(ProbeOverlap, HwlocGuardLeavesOtherThreadsAlone) {
  Host host("dgx-h100");
  const fs::path root = host.root();
  // An absolute link under the root: the guard resolves it inside the root (where it names
  // nothing), libc follows it to this file outside.
  const fs::path outside = root.parent_path() / ("guard-outside-" + std::to_string(::getpid()));
  write_text(outside, "outside\n");
  fs::create_symlink(outside, root / "abs-link");

  auto opened = probes::SysRoot::open(root, probes::SysRoot::Liveness::kCapture);
  ASSERT_TRUE(opened.ok());
  const probes::SysRoot& sys = opened.value();
  const int root_fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(root_fd, 0);

  // Alone first: what each gives.
  const std::string pci_alone = host.snapshot(nullptr, false);

  std::atomic<bool> guarded{false};
  std::atomic<bool> done{false};
  std::atomic<std::size_t> other_opens{0};
  std::atomic<std::size_t> other_wrong{0};
  std::thread other([&] {
    while (!guarded.load())
      std::this_thread::yield();
    // While the guard is active on the main thread, this thread's openat() on the same root
    // descriptor follows the absolute link to the file outside, as libc does.
    while (!done.load()) {
      const int fd = ::openat(root_fd, "abs-link", O_RDONLY | O_CLOEXEC);
      ++other_opens;
      if (fd < 0) {
        ++other_wrong;
        continue;
      }
      char buf[16] = {};
      if (::read(fd, buf, sizeof(buf) - 1) != 8 || std::string(buf) != "outside\n") ++other_wrong;
      ::close(fd);
      struct stat st {};
      if (::fstatat(root_fd, "abs-link", &st, 0) != 0 || !S_ISREG(st.st_mode)) ++other_wrong;
    }
  });
  std::size_t guard_calls = 0;
  {
    probes::detail::HwlocGuard guard(sys);
    guarded.store(true);
    // The guard's own thread: the same call is resolved inside the root, where the link's target
    // does not exist — until the other thread has made its calls while the guard is active.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (int i = 0;
         i < 200 || (other_opens.load() < 100 && std::chrono::steady_clock::now() < deadline);
         ++i) {
      const int fd = ::openat(root_fd, "abs-link", O_RDONLY | O_CLOEXEC);
      EXPECT_LT(fd, 0);
      if (fd >= 0) ::close(fd);
    }
    guard_calls = guard.guarded_calls();
    done.store(true);
    other.join();
  }
  EXPECT_GE(guard_calls, 200U);
  EXPECT_GE(other_opens.load(), 100U);
  EXPECT_EQ(other_wrong.load(), 0U);

  // And whole probes: the overlapped discovery (hwloc under the guard on this thread, the PCI
  // walk on the second) equals the serial one, many times over.
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(host.snapshot(nullptr, true), pci_alone);
  // The user-space walk opens through the root's descriptor, the one hwloc's calls name.
  const std::string user_space_alone =
      host.snapshot(nullptr, false, probes::SysRoot::PathWalk::kUserSpace);
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(host.snapshot(nullptr, true, probes::SysRoot::PathWalk::kUserSpace),
              user_space_alone);
  ::close(root_fd);
  fs::remove(root / "abs-link");
  fs::remove(outside);
}

}  // namespace
}  // namespace nodetopo
