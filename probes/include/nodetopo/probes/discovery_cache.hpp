// What an agent keeps between discoveries of one host, so that a refresh re-reads only what an
// event says may have changed, and gives exactly what a fresh discovery would.
//
// The agent discovers the same host again on every hot-plug event. Most of a discovery is reading
// what did not change: hwloc's CPU and NUMA load (the largest single cost), every PCI function,
// every network interface and RDMA device, the pci.ids names. A DiscoveryCache keeps
// - the platform phase's result (machine, packages, NUMA nodes, distances, the cpu probe's
//   report), reused until a cpu or memory event (or a full refresh) says otherwise;
// - every PCI function as it was read, by its bus/pci/devices entry and the link's target: an
//   entry whose target is unchanged and whose device no event named is not read again (its
//   PCIe ancestors and descendants, and the physical function of a virtual function that came
//   or went, are);
// - every entry of sys/class/net and sys/class/infiniband as it was read (where it resolves, its
//   PCI function's address, its attributes, its warnings), by name and the class link's target:
//   read again when a net or infiniband event names it, or a PCI event names its device, an
//   ancestor or a descendant (a net event also re-reads the RDMA devices of the same function:
//   a port's netdev is one of its interfaces);
// - the pci.ids names of the devices present (not the database: pci.ids is scanned again only
//   for IDs not seen before);
// - the AMD KFD tree as the accelerator and KFD probes read it, reused while the kernel's own
//   count of its changes (topology/generation_id) reads the same: no uevent announces a change
//   of it, and on a partitioned MI300X it is thousands of files.
// The bus/pci/devices, sys/class/net and sys/class/infiniband directories themselves (so that
// whatever came or went is seen), each class link, and the rest of the accelerator probe and the
// NVML probe (cheap, and a GPU's state is theirs to tell) are read on every discovery. What no
// event announces (a link's speed or an interface's operstate changing, an updated pci.ids) is
// caught by the agent's periodic resync, which is a full discovery.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/topology/diagnostics.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::probes {

/// What may have changed on the host since the last discovery.
struct Changes {
  /// Everything: nothing cached is used (start, resync, a lost event, a reload, a D-Bus
  /// request). The default, so that forgetting to say what changed is never wrong.
  bool everything = true;
  /// CPUs or memory came or went (cpu, memory, node events): the platform phase runs again.
  bool platform = false;
  /// PCI functions came, went or changed. With `pci_paths` empty, every function is read again.
  bool pci = false;
  /// The root-relative device directories the PCI events named ("sys/devices/pci0000:00/...").
  std::vector<std::string> pci_paths;
  /// Network interfaces came, went, were renamed or changed (net events). With `net_paths`
  /// empty, every interface and RDMA device is read again.
  bool net = false;
  /// Their root-relative directories ("sys/devices/pci0000:00/0000:00:03.0/net/eth0").
  std::vector<std::string> net_paths;
  /// RDMA devices came, went or changed (infiniband, infiniband_verbs events). With
  /// `rdma_paths` empty, every RDMA device is read again.
  bool rdma = false;
  std::vector<std::string> rdma_paths;

  /// Nothing changed (yet): the start of an accumulation of events.
  static Changes none() {
    Changes c;
    c.everything = false;
    return c;
  }
  /// Adds `other` to this.
  void merge(const Changes& other);
};

namespace detail {
struct PciCache;  // probes/src/pci/pci_cache.hpp
template <class Info>
struct ClassCache;  // probes/src/net/class_cache.hpp
struct RdmaCache;
struct KfdCache;  // probes/src/kfd/kfd_cache.hpp
}  // namespace detail

class DiscoveryCache {
 public:
  DiscoveryCache();
  ~DiscoveryCache();
  DiscoveryCache(DiscoveryCache&&) noexcept;
  DiscoveryCache& operator=(DiscoveryCache&&) noexcept;
  DiscoveryCache(const DiscoveryCache&) = delete;
  DiscoveryCache& operator=(const DiscoveryCache&) = delete;

  /// Marks what `changes` says may have changed; the next discovery reads that again.
  void invalidate(const Changes& changes);

  /// What the last discovery through this cache reused, for tests and benchmarks.
  struct Stats {
    bool platform_reused = false;
    std::size_t pci_functions_read = 0;    ///< read from sysfs
    std::size_t pci_functions_reused = 0;  ///< taken from the cache
    bool pci_ids_scanned = false;          ///< pci.ids was mapped and scanned
    std::size_t net_read = 0;              ///< sys/class/net entries read
    std::size_t net_reused = 0;            ///< taken from the cache
    std::size_t rdma_read = 0;             ///< sys/class/infiniband entries read
    std::size_t rdma_reused = 0;           ///< taken from the cache
    bool kfd_reused = false;               ///< the KFD tree taken from the cache
  };
  [[nodiscard]] const Stats& stats() const { return stats_; }

  // --- for the runner and the probes -------------------------------------------------------
  /// The platform phase's builder and reports.
  struct Platform {
    TopologyBuilder builder;
    std::vector<ProbeReport> reports;
  };
  /// Called by the runner at the start of a discovery of the root directory (dev, ino): a
  /// different directory (a symlinked root swapped) drops everything.
  void begin(unsigned long long dev, unsigned long long ino);
  [[nodiscard]] std::optional<Platform>& platform() { return platform_; }
  [[nodiscard]] detail::PciCache& pci() { return *pci_; }
  [[nodiscard]] detail::ClassCache<NetDeviceInfo>& net() { return *net_; }
  [[nodiscard]] detail::RdmaCache& rdma() { return *rdma_; }
  [[nodiscard]] detail::KfdCache& kfd() { return *kfd_; }
  Stats& mutable_stats() { return stats_; }

 private:
  std::optional<Platform> platform_;
  std::unique_ptr<detail::PciCache> pci_;
  std::unique_ptr<detail::ClassCache<NetDeviceInfo>> net_;
  std::unique_ptr<detail::RdmaCache> rdma_;
  std::unique_ptr<detail::KfdCache> kfd_;
  Stats stats_;
  unsigned long long dev_ = 0;
  unsigned long long ino_ = 0;
  bool have_root_ = false;
};

}  // namespace nodetopo::probes
