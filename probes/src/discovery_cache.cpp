#include <nodetopo/probes/discovery_cache.hpp>

#include "kfd/kfd_cache.hpp"
#include "net/class_cache.hpp"
#include "pci/pci_cache.hpp"

namespace nodetopo::probes {

namespace {

// Adds the paths of one kind of event: an event that named no device means "read every one",
// so an empty list stays empty.
void merge_paths(bool& mine, std::vector<std::string>& paths, bool theirs,
                 const std::vector<std::string>& other) {
  if (!theirs) return;
  const bool all = (mine && paths.empty()) || other.empty();
  mine = true;
  if (all) {
    paths.clear();
  } else {
    paths.insert(paths.end(), other.begin(), other.end());
  }
}

}  // namespace

void Changes::merge(const Changes& other) {
  everything = everything || other.everything;
  platform = platform || other.platform;
  merge_paths(pci, pci_paths, other.pci, other.pci_paths);
  merge_paths(net, net_paths, other.net, other.net_paths);
  merge_paths(rdma, rdma_paths, other.rdma, other.rdma_paths);
}

DiscoveryCache::DiscoveryCache()
    : pci_(std::make_unique<detail::PciCache>()),
      net_(std::make_unique<detail::NetCache>()),
      rdma_(std::make_unique<detail::RdmaCache>()),
      kfd_(std::make_unique<detail::KfdCache>()) {}
DiscoveryCache::~DiscoveryCache() = default;
DiscoveryCache::DiscoveryCache(DiscoveryCache&&) noexcept = default;
DiscoveryCache& DiscoveryCache::operator=(DiscoveryCache&&) noexcept = default;

void DiscoveryCache::invalidate(const Changes& changes) {
  if (changes.everything) {
    platform_.reset();
    pci_->clear();
    net_->clear();
    rdma_->clear();
    kfd_->clear();
    return;
  }
  if (changes.platform) platform_.reset();
  if (changes.pci) {
    if (changes.pci_paths.empty()) {
      pci_->all_dirty = true;
    } else if (!pci_->all_dirty) {
      pci_->dirty_paths.insert(pci_->dirty_paths.end(), changes.pci_paths.begin(),
                               changes.pci_paths.end());
    }
    // The interfaces and RDMA devices of a function named, and of those below and above it.
    net_->invalidate(changes.pci_paths);
    rdma_->invalidate(changes.pci_paths);
  }
  if (changes.net) {
    net_->invalidate(changes.net_paths);
    rdma_->invalidate(changes.net_paths);
  }
  if (changes.rdma) rdma_->invalidate(changes.rdma_paths);
}

void DiscoveryCache::begin(unsigned long long dev, unsigned long long ino) {
  if (have_root_ && (dev != dev_ || ino != ino_)) invalidate(Changes{});
  dev_ = dev;
  ino_ = ino;
  have_root_ = true;
  stats_ = {};
}

}  // namespace nodetopo::probes
