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
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodetopo/core/host_source.hpp>
#include <nodetopo/core/refresh.hpp>
#include <nodetopo/core/render.hpp>
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
  [[nodiscard]] const core::OpenedHost& opened() const { return *host_; }

  // The JSON model with the probe reports: what `topo dump --format json` prints.
  std::string snapshot(DiscoveryCache* cache, bool overlap = true,
                       probes::SysRoot::PathWalk walk = probes::SysRoot::PathWalk::kKernelChecked) {
    probes::ProbeOptions options = host_->probe_options();
    // The overlap asked for whatever the root's size (overlap_pays() is tested on its own).
    options.overlap =
        overlap ? probes::ProbeOptions::Overlap::kAlways : probes::ProbeOptions::Overlap::kNever;
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

Changes net_event(const std::string& sysfs_path) {
  Changes c = Changes::none();
  c.net = true;
  c.net_paths.push_back(sysfs_path);
  return c;
}

Changes rdma_event(const std::string& sysfs_path) {
  Changes c = Changes::none();
  c.rdma = true;
  c.rdma_paths.push_back(sysfs_path);
  return c;
}

// The bus/pci/devices entries of SR-IOV virtual functions (those with a physfn link), sorted.
std::vector<std::string> virtual_functions(const fs::path& root) {
  std::vector<std::string> vfs;
  for (const auto& e : fs::directory_iterator(root / "sys/bus/pci/devices")) {
    if (fs::exists(e.path() / "physfn")) vfs.push_back(e.path().filename().string());
  }
  std::sort(vfs.begin(), vfs.end());
  return vfs;
}

// After a change on disk that the cache holds: unannounced (the control), a refresh still gives
// `before`; announced by `event`, the new state a fresh discovery gives, which is returned.
std::string seen_after_event(Host& host, DiscoveryCache& cache, const std::string& before,
                             const Changes& event) {
  cache.invalidate(Changes::none());
  EXPECT_EQ(host.snapshot(&cache), before);
  std::string after = host.fresh();
  EXPECT_NE(after, before);
  cache.invalidate(event);
  EXPECT_EQ(host.snapshot(&cache), after);
  return after;
}

// The root-relative directory behind a class entry (sys/class/net/ib0 -> sys/devices/...).
std::string class_path(const fs::path& root, const std::string& entry) {
  return fs::relative(fs::canonical(root / entry), fs::canonical(root)).string();
}

// The interfaces of sys/class/net that sit on a PCI function, sorted.
std::vector<std::string> hardware_interfaces(const fs::path& root) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(root / "sys/class/net")) {
    if (fs::exists(e.path() / "device")) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
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
  const std::vector<std::string> vfs = virtual_functions(root);
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

  // A network interface renamed (a net event naming the new name's directory): the listing of
  // sys/class/net is read on every discovery, the new name read, the old one dropped.
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
  cache.invalidate(net_event(fs::relative(renamed_dir, fs::canonical(root)).string()));
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

// Every kind of net and RDMA event: after each, the cached discovery equals a fresh one and read
// only what the event pointed at; and each has its control — the same change without the event
// is not seen (the cache is really used, so the comparison could fail), until the event comes.
TEST(RefreshCache, NetAndRdmaEventsGiveWhatAFreshDiscoveryGives) {
  Host host("synthetic:gpus=2,nics=3,nic_vfs=2");
  const fs::path root = host.root();
  DiscoveryCache cache;
  cache.invalidate(Changes{});
  const std::string initial = host.snapshot(&cache);
  ASSERT_EQ(initial, host.fresh());
  const std::size_t interfaces = cache.stats().net_read;
  const std::size_t rdma_devices = cache.stats().rdma_read;
  ASSERT_GE(interfaces, 4U);  // lo and one per NIC
  ASSERT_EQ(rdma_devices, 3U);
  EXPECT_EQ(cache.stats().net_reused, 0U);

  // Nothing announced: everything taken from the cache.
  cache.invalidate(Changes::none());
  EXPECT_EQ(host.snapshot(&cache), initial);
  EXPECT_EQ(cache.stats().net_read, 0U);
  EXPECT_EQ(cache.stats().net_reused, interfaces);
  EXPECT_EQ(cache.stats().rdma_read, 0U);
  EXPECT_EQ(cache.stats().rdma_reused, rdma_devices);

  const std::vector<std::string> nics = hardware_interfaces(root);
  ASSERT_GE(nics.size(), 3U);
  const std::string nic0 = class_path(root, "sys/class/net/" + nics[0]);
  const std::string nic1 = class_path(root, "sys/class/net/" + nics[1]);

  // net change (an MTU set): the control first — unannounced, the cache keeps the old value.
  write_text(root / nic0 / "mtu", "2044\n");
  const std::string mtu_changed = seen_after_event(host, cache, initial, net_event(nic0));
  EXPECT_EQ(cache.stats().net_read, 1U);
  EXPECT_EQ(cache.stats().net_reused, interfaces - 1);
  EXPECT_EQ(cache.stats().rdma_read, 1U);  // the RDMA device of the same function

  // net remove: the interface's directory and class link gone.
  const fs::path nic1_dir = root / nic1;
  const fs::path nic1_link = root / "sys/class/net" / nics[1];
  const std::string nic1_target = fs::read_symlink(nic1_link).string();
  fs::rename(nic1_dir, root / "removed-netdev");
  fs::remove(nic1_link);
  cache.invalidate(net_event(nic1));
  const std::string net_removed = host.snapshot(&cache);
  EXPECT_NE(net_removed, mtu_changed);
  EXPECT_EQ(net_removed, host.fresh());
  EXPECT_EQ(cache.stats().net_read, 0U);
  EXPECT_EQ(cache.stats().net_reused, interfaces - 1);

  // net add: it comes back.
  fs::rename(root / "removed-netdev", nic1_dir);
  fs::create_symlink(nic1_target, nic1_link);
  cache.invalidate(net_event(nic1));
  EXPECT_EQ(host.snapshot(&cache), mtu_changed);
  EXPECT_EQ(host.fresh(), mtu_changed);
  EXPECT_EQ(cache.stats().net_read, 1U);

  // infiniband change (a port going down): control, then the event.
  const std::string ib1 = class_path(root, "sys/class/infiniband/mlx5_1");
  write_text(root / ib1 / "ports/1/state", "1: DOWN\n");
  const std::string port_down = seen_after_event(host, cache, mtu_changed, rdma_event(ib1));
  EXPECT_EQ(cache.stats().rdma_read, 1U);
  EXPECT_EQ(cache.stats().rdma_reused, rdma_devices - 1);
  EXPECT_EQ(cache.stats().net_read, 0U);

  // infiniband remove and add.
  const fs::path ib1_link = root / "sys/class/infiniband/mlx5_1";
  const std::string ib1_target = fs::read_symlink(ib1_link).string();
  fs::rename(root / ib1, root / "removed-rdma");
  fs::remove(ib1_link);
  cache.invalidate(rdma_event(ib1));
  const std::string rdma_removed = host.snapshot(&cache);
  EXPECT_NE(rdma_removed, port_down);
  EXPECT_EQ(rdma_removed, host.fresh());
  fs::rename(root / "removed-rdma", root / ib1);
  fs::create_symlink(ib1_target, ib1_link);
  cache.invalidate(rdma_event(ib1));
  EXPECT_EQ(host.snapshot(&cache), port_down);
  EXPECT_EQ(host.fresh(), port_down);

  // A PCI event whose content changed what the net and RDMA probes read: the NIC function
  // rebound, its interface's operstate and its port's rate now different. An event naming
  // another function (a GPU) does not re-read them — the control — the NIC's own event does.
  const std::string nic_function = class_path(root, "sys/class/net/" + nics[2] + "/device");
  const std::string ib_of_nic = [&] {
    for (const auto& e : fs::directory_iterator(root / "sys/class/infiniband")) {
      if (fs::canonical(e.path() / "device") == fs::canonical(root / nic_function)) {
        return class_path(root, "sys/class/infiniband/" + e.path().filename().string());
      }
    }
    return std::string();
  }();
  ASSERT_FALSE(ib_of_nic.empty());
  const std::string nic2 = class_path(root, "sys/class/net/" + nics[2]);
  write_text(root / nic2 / "operstate", "down\n");
  write_text(root / ib_of_nic / "ports/1/rate", "100 Gb/sec (4X EDR)\n");
  const std::vector<std::string> gpus = functions_of_class(root, "0x0302");
  ASSERT_FALSE(gpus.empty());
  cache.invalidate(pci_event(device_path(root, gpus.front())));
  EXPECT_EQ(host.snapshot(&cache), port_down);
  EXPECT_EQ(cache.stats().net_read, 0U);
  const std::string rebound = host.fresh();
  ASSERT_NE(rebound, port_down);
  cache.invalidate(pci_event(nic_function));
  EXPECT_EQ(host.snapshot(&cache), rebound);
  EXPECT_EQ(cache.stats().net_read, 1U);
  EXPECT_EQ(cache.stats().rdma_read, 1U);

  // An interface's dev_port changed (the RDMA probe matches a port's netdev by it): the control,
  // then the interface's event, which re-reads it and the RDMA device of its function.
  write_text(root / nic0 / "dev_port", "1\n");
  // The port's netdev no longer matches.
  seen_after_event(host, cache, rebound, net_event(nic0));
  write_text(root / nic0 / "dev_port", "0\n");
  cache.invalidate(net_event(nic0));
  EXPECT_EQ(host.snapshot(&cache), rebound);

  // A PCI event without a path reads every interface and RDMA device again.
  Changes all_pci = Changes::none();
  all_pci.pci = true;
  cache.invalidate(all_pci);
  EXPECT_EQ(host.snapshot(&cache), rebound);
  EXPECT_EQ(cache.stats().net_read, interfaces);
  EXPECT_EQ(cache.stats().rdma_read, rdma_devices);
}

// A VF that appears (sriov_numvfs raised, its function added): it and its physical function are
// read, the rest reused.
TEST(RefreshCache, VirtualFunctionAppearing) {
  Host host("synthetic:gpus=1,nics=1,nic_vfs=2");
  const fs::path root = host.root();
  const std::vector<std::string> vfs = virtual_functions(root);
  ASSERT_FALSE(vfs.empty());
  const fs::path pf_dir = fs::canonical(root / "sys/bus/pci/devices" / vfs.back() / "physfn");
  const std::string vf_path = device_path(root, vfs.back());
  const std::string numvfs = read_text(pf_dir / "sriov_numvfs");
  // The host as it was before the VF appeared, discovered through the cache.
  const Unplugged vf = unplug(root, vfs.back(), root / "unplugged-vf");
  write_text(pf_dir / "sriov_numvfs", std::to_string(std::stoi(numvfs) - 1) + "\n");
  DiscoveryCache cache;
  const std::string before = host.snapshot(&cache);
  ASSERT_EQ(before, host.fresh());

  // The control: the PF's sriov_numvfs raised first, unannounced — the cached PF keeps the old
  // count, while a fresh discovery sees the new one.
  write_text(pf_dir / "sriov_numvfs", numvfs);
  cache.invalidate(Changes::none());
  EXPECT_EQ(host.snapshot(&cache), before);
  EXPECT_NE(host.fresh(), before);
  // The VF appears, and its event comes: the VF and its PF are read.
  replug(root, vf);
  const std::string after = host.fresh();
  ASSERT_NE(after, before);
  cache.invalidate(pci_event(vf_path));
  EXPECT_EQ(host.snapshot(&cache), after);
  EXPECT_GT(cache.stats().pci_functions_reused, 0U);
  EXPECT_LT(cache.stats().pci_functions_read, 6U);  // the VF, its PF and their bridges
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

// The KFD tree (AMD GPUs wired by xGMI) is taken from the cache while the kernel's count of its
// changes, topology/generation_id, reads the same — whatever event came, since none announces a
// change of the tree — and read again when the count moves, after a full invalidation, and on
// every refresh of a root without the file. Each has its control: a change of the tree the count
// does not announce is not seen (the cache is really used) until the count moves.
TEST(RefreshCache, KfdTreeReusedWhileItsGenerationStands) {
  Host host("synthetic:gpus=4,gpu_model=mi300x,nics=1");
  const fs::path root = host.root();
  const fs::path topology = fs::canonical(root / "sys/class/kfd/kfd/topology");
  ASSERT_TRUE(fs::exists(topology / "generation_id"));
  DiscoveryCache cache;
  const std::string initial = host.snapshot(&cache);
  EXPECT_EQ(initial, host.fresh());
  EXPECT_FALSE(cache.stats().kfd_reused);
  ASSERT_NE(initial.find("\"kind\": \"xgmi\""), std::string::npos) << "the profile has xGMI";

  // A no-op event, then a PCI event naming a GPU that changed nothing: the tree is reused.
  cache.invalidate(Changes::none());
  EXPECT_EQ(host.snapshot(&cache), initial);
  EXPECT_TRUE(cache.stats().kfd_reused);
  const std::vector<std::string> gpus = functions_of_class(root, "0x1200");
  ASSERT_EQ(gpus.size(), 4U);
  cache.invalidate(pci_event(device_path(root, gpus.front())));
  EXPECT_EQ(host.snapshot(&cache), initial);
  EXPECT_TRUE(cache.stats().kfd_reused);

  // One xGMI link's bandwidth changed; without the count moving it is not seen (the control) ...
  fs::path link_file;
  for (const auto& e : fs::recursive_directory_iterator(topology / "nodes")) {
    if (e.path().filename() == "properties" &&
        e.path().parent_path().parent_path().filename() == "io_links" &&
        read_text(e.path()).starts_with("type 11\n")) {
      link_file = e.path();
      break;
    }
  }
  ASSERT_FALSE(link_file.empty());
  std::string link = read_text(link_file);
  const std::size_t at = link.find("max_bandwidth ");
  ASSERT_NE(at, std::string::npos);
  link.replace(at, link.find('\n', at) - at, "max_bandwidth 12345");
  write_text(link_file, link);
  cache.invalidate(Changes::none());
  EXPECT_EQ(host.snapshot(&cache), initial);
  const std::string changed = host.fresh();
  EXPECT_NE(changed, initial);
  // ... and once it moves, it is, as a fresh discovery sees it.
  write_text(topology / "generation_id", "2\n");
  cache.invalidate(Changes::none());
  EXPECT_EQ(host.snapshot(&cache), changed);
  EXPECT_FALSE(cache.stats().kfd_reused);
  cache.invalidate(Changes::none());
  EXPECT_EQ(host.snapshot(&cache), changed);
  EXPECT_TRUE(cache.stats().kfd_reused);

  // A full invalidation (the resync) reads it whatever the count says.
  cache.invalidate(Changes{});
  EXPECT_EQ(host.snapshot(&cache), changed);
  EXPECT_FALSE(cache.stats().kfd_reused);

  // Without generation_id (a capture that lacks it), every refresh reads the tree.
  fs::remove(topology / "generation_id");
  cache.invalidate(Changes::none());
  EXPECT_EQ(host.snapshot(&cache), changed);
  EXPECT_FALSE(cache.stats().kfd_reused);
  write_text(link_file, read_text(link_file).replace(read_text(link_file).find("12345"), 5, "777"));
  cache.invalidate(Changes::none());
  EXPECT_EQ(host.snapshot(&cache), host.fresh());
  EXPECT_NE(host.fresh(), changed);
  EXPECT_FALSE(cache.stats().kfd_reused);
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
  acc.merge(net_event("sys/devices/virtual/net/lo"));
  acc.merge(rdma_event("sys/devices/pci0000:00/0000:00:03.0/infiniband/mlx5_0"));
  EXPECT_TRUE(acc.net);
  EXPECT_EQ(acc.net_paths.size(), 1U);
  EXPECT_TRUE(acc.rdma);
  EXPECT_EQ(acc.rdma_paths.size(), 1U);
  Changes all_net = Changes::none();
  all_net.net = true;
  acc.merge(all_net);
  EXPECT_TRUE(acc.net_paths.empty());  // every interface
  EXPECT_EQ(acc.rdma_paths.size(), 1U);
  acc.merge(Changes{});
  EXPECT_TRUE(acc.everything);
}

// The agent's refresh (core::Refresher): documents rendered only when what they are made of
// changed, and then equal to those of a refresher that starts afresh.
class RefresherTest : public ::testing::Test {
 protected:
  RefresherTest() : host_("synthetic:gpus=2,nics=2") {}

  core::Refreshed refresh(core::Refresher& r, const Changes& changes,
                          const std::string& node = "node-a") {
    auto out = r.refresh(host_.opened(), {.node_name = node, .reopen_root = true}, changes);
    EXPECT_TRUE(out.ok());
    return out.ok() ? std::move(out.value()) : core::Refreshed{};
  }
  // What a new refresher gives now: every probe, every document.
  core::Refreshed fresh(const std::string& node = "node-a") {
    core::Refresher r(core::agent_documents());
    return refresh(r, Changes{}, node);
  }
  static void expect_same(const core::Refreshed& a, const core::Refreshed& b) {
    ASSERT_TRUE(a.documents && b.documents);
    EXPECT_EQ(a.digest, b.digest);
    EXPECT_EQ(a.snapshot->digest, b.snapshot->digest);
    EXPECT_TRUE(a.documents->documents == b.documents->documents);
    EXPECT_TRUE(a.documents->errors == b.documents->errors);
    EXPECT_EQ(a.documents->shape, b.documents->shape);
  }

  Host host_;
};

TEST_F(RefresherTest, RendersOnlyWhenSomethingChanged) {
  const fs::path root = host_.root();
  core::Refresher agent(core::agent_documents());
  const core::Refreshed first = refresh(agent, Changes{});
  EXPECT_TRUE(first.rendered);
  EXPECT_EQ(first.documents->documents.size() + first.documents->errors.size(),
            core::agent_documents().size());
  expect_same(first, fresh());
  // What render() prints, byte for byte (the dump's JSON is not rendered twice).
  auto json = core::render(*first.snapshot, core::DocumentKind::kDump, "json");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(first.documents->documents.at("dump/json"), json.value());
  // Every document is what render() alone prints: the refresh's RenderShared only computes once
  // what the formats of a kind (and the labels and the shape) have in common.
  for (const core::ServedDocument& d : core::agent_documents()) {
    auto alone = core::render(*first.snapshot, d.kind, d.format);
    if (alone.ok()) {
      EXPECT_EQ(first.documents->documents.at(d.key), alone.value()) << d.key;
    } else {
      EXPECT_TRUE(first.documents->errors.contains(d.key)) << d.key;
    }
  }

  // A PCI event on a GPU that changed nothing: same digest, the same documents, not rendered.
  const std::vector<std::string> gpus = functions_of_class(root, "0x0302");
  ASSERT_FALSE(gpus.empty());
  const std::string gpu = device_path(root, gpus.back());
  const core::Refreshed same = refresh(agent, pci_event(gpu));
  EXPECT_FALSE(same.rendered);
  EXPECT_EQ(same.documents, first.documents);
  expect_same(same, fresh());

  // The GPU's driver unbound (its link and the DRIVER= line of uevent): the control first — not
  // announced, the refresh keeps the old documents, which a fresh one shows are stale.
  const fs::path dir = root / gpu;
  const fs::path driver = fs::read_symlink(dir / "driver");
  const std::string uevent = read_text(dir / "uevent");
  fs::remove(dir / "driver");
  std::string unbound;
  std::istringstream lines(uevent);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("DRIVER=")) unbound += line + "\n";
  }
  write_text(dir / "uevent", unbound);
  const core::Refreshed stale = refresh(agent, Changes::none());
  EXPECT_FALSE(stale.rendered);
  const core::Refreshed now = fresh();
  EXPECT_NE(now.digest, first.digest);
  EXPECT_NE(now.documents->documents.at("dump/json"), stale.documents->documents.at("dump/json"));
  const core::Refreshed unbound_event = refresh(agent, pci_event(gpu));
  EXPECT_TRUE(unbound_event.rendered);
  expect_same(unbound_event, now);

  // Bound again: back to the first documents.
  fs::create_symlink(driver, dir / "driver");
  write_text(dir / "uevent", uevent);
  const core::Refreshed bound = refresh(agent, pci_event(gpu));
  EXPECT_TRUE(bound.rendered);
  expect_same(bound, first);
}

TEST_F(RefresherTest, SettingsAndNodeNameRenderAgain) {
  const fs::path root = host_.root();
  core::Refresher agent(core::agent_documents());
  const core::Refreshed first = refresh(agent, Changes{});
  // The export settings are read on every refresh: a new driver name renders again, no event
  // needed.
  fs::create_directories(root / "etc/nodetopo");
  write_text(root / "etc/nodetopo/export.yaml", "driver: other.example.com\n");
  const core::Refreshed settings = refresh(agent, Changes::none());
  EXPECT_TRUE(settings.rendered);
  EXPECT_NE(settings.digest, first.digest);
  EXPECT_EQ(settings.snapshot->digest, first.snapshot->digest);  // the model is the same
  EXPECT_NE(settings.documents->documents.at("resourceslices/yaml").find("other.example.com"),
            std::string::npos);
  expect_same(settings, fresh());
  // Unchanged again: nothing rendered.
  EXPECT_FALSE(refresh(agent, Changes::none()).rendered);
  // Another node name: rendered again.
  const core::Refreshed renamed = refresh(agent, Changes::none(), "node-b");
  EXPECT_TRUE(renamed.rendered);
  expect_same(renamed, fresh("node-b"));
  fs::remove(root / "etc/nodetopo/export.yaml");
  expect_same(refresh(agent, Changes::none(), "node-b"), fresh("node-b"));
}

TEST(ProbeOverlap, SameOutputAsOneProbeAfterTheOther) {
  // 136 functions: the walk beside hwloc also starts its own second reader.
  Host host("synthetic:gpus=8,nics=8,switch_depth=2,nic_vfs=8");
  const std::string serial = host.snapshot(nullptr, false);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(host.snapshot(nullptr, true), serial);
}

// The second thread only where the PCI walk is large enough to pay for it: 64 functions in the
// root, whatever its CPUs.
TEST(ProbeOverlap, SecondThreadOnlyWhereItPays) {
  struct Case {
    const char* profile;
    bool pays;
  };
  for (const Case& c : {
           Case{"dgx-h100", true},                             // 84 functions
           Case{"synthetic:gpus=4,nics=12,sockets=1", true},   // 64 functions, 64 CPUs
           Case{"synthetic:gpus=4,nics=11,sockets=1", false},  // 60 functions
           Case{"mi300x", true},  // 55 functions, 384 CPUs, but 10 KFD nodes
           Case{"synthetic:gpus=6,gpu_model=mi300x,nics=1,sockets=1", false},  // 7 KFD nodes
           Case{"cpu-only", false},  // 9 functions, 128 CPUs
       }) {
    SCOPED_TRACE(c.profile);
    Host host(c.profile);
    auto root = probes::SysRoot::open(host.root(), probes::SysRoot::Liveness::kCapture);
    ASSERT_TRUE(root.ok());
    EXPECT_EQ(probes::overlap_pays(root.value()), c.pays);
  }
}

// Deciding on the second thread lists bus/pci/devices (and, below 64 functions, the KFD nodes
// directory); the PCI walk and the KFD read then take those listings instead of listing again,
// so a discovery that decides lists as many directories as one told not to overlap.
TEST(ProbeOverlap, DecidingListsNoDirectoryTwice) {
  cpu_set_t cpus;
  ASSERT_EQ(::sched_getaffinity(0, sizeof cpus, &cpus), 0);
  if (CPU_COUNT(&cpus) < 2) GTEST_SKIP() << "overlap_pays() is asked only with two CPUs";
  // 84 PCI functions: bus/pci/devices kept; 55 and 7 KFD nodes: the KFD nodes directory too.
  for (const char* profile : {"dgx-h100", "synthetic:gpus=6,gpu_model=mi300x,nics=1,sockets=1"}) {
    SCOPED_TRACE(profile);
    Host host(profile);
    auto lists = [&](probes::ProbeOptions::Overlap overlap) {
      probes::ProbeOptions options = host.opened().probe_options();
      options.overlap = overlap;
      auto root = probes::SysRoot::open(host.root(), probes::SysRoot::Liveness::kCapture);
      EXPECT_TRUE(root.ok());
      (void)probes::discover(root.value(), options);
      return root.value().stats().dir_lists;
    };
    EXPECT_EQ(lists(probes::ProbeOptions::Overlap::kAuto),
              lists(probes::ProbeOptions::Overlap::kNever));
  }
}

// The threads of this process, as /proc lists them.
std::size_t live_threads() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/task"))
    ++n;
  return n;
}

// discovery_thread_limit() is the most threads one discovery runs at once (topo dump gives glibc
// that many malloc arenas): watched from a thread of its own while a discovery with the overlap
// and every reader pool (PCI walk, 34 KFD nodes, net entries) runs.
TEST(ProbeOverlap, NoMoreThreadsAtOnceThanTheLimit) {
  Host host("synthetic:gpus=32,gpu_model=mi300x,nics=8");
  std::atomic<bool> done{false};
  std::atomic<std::size_t> most{0};
  std::thread watcher([&] {
    while (!done.load()) {
      std::size_t seen = live_threads();
      std::size_t prev = most.load();
      while (seen > prev && !most.compare_exchange_weak(prev, seen)) {
      }
    }
  });
  // This thread and the watcher, plus whatever the test runner keeps.
  const std::size_t before = live_threads();
  for (int i = 0; i < 5; ++i)
    host.snapshot(nullptr, /*overlap=*/true);
  done = true;
  watcher.join();
  const std::size_t discovery_threads = most.load() - before + 1;  // + the calling thread
  EXPECT_LE(discovery_threads, probes::discovery_thread_limit());
  cpu_set_t cpus;
  if (::sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 1) {
    // The prefetch thread and a reader beside it at least: the watch saw them.
    EXPECT_GE(discovery_threads, 3U);
  }
}

// The net and RDMA entries are read ahead, beside the PCI walk, and attached afterwards: their
// warnings (a malformed attribute, a dangling class link, an unreadable port) must come in the
// report exactly where reading them in one pass puts them, among the PCI warnings.
TEST(ProbeOverlap, NetAndRdmaWarningsInRunOrder) {
  Host host("dgx-h100");
  const fs::path root = host.root();
  write_text(root / "sys/class/net/enp39s0f0np0/mtu", "nine thousand\n");
  write_text(root / "sys/class/net/enp168s0f1np1/type", "ether\n");
  fs::create_symlink("../../devices/pci0000:00/0000:00:99.0/net/gone",
                     root / "sys/class/net/gone0");
  fs::remove(root / "sys/class/infiniband/mlx5_0/node_guid");
  fs::create_directories(root / "sys/class/infiniband/mlx5_0/node_guid");
  fs::create_directories(root / "sys/class/infiniband/mlx5_10/ports/zero");
  const std::string serial = host.snapshot(nullptr, false);
  for (const char* expected : {"nine thousand", "gone0", "mlx5_0/node_guid", "ports/zero"}) {
    EXPECT_NE(serial.find(expected), std::string::npos) << expected << " not in the report";
  }
  // Entry by entry, in the class directory's order, as one pass reads them.
  EXPECT_LT(serial.find("enp168s0f1np1/type"), serial.find("enp39s0f0np0/mtu"));
  EXPECT_LT(serial.find("enp39s0f0np0/mtu"), serial.find("gone0"));
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
