#include <nodetopo/probes/discovery_cache.hpp>

#include "pci/pci_cache.hpp"

namespace nodetopo::probes {

void Changes::merge(const Changes& other) {
  everything = everything || other.everything;
  platform = platform || other.platform;
  if (other.pci) {
    // An event that named no device means "read every function": an empty list stays empty.
    const bool all = (pci && pci_paths.empty()) || other.pci_paths.empty();
    pci = true;
    if (all) {
      pci_paths.clear();
    } else {
      pci_paths.insert(pci_paths.end(), other.pci_paths.begin(), other.pci_paths.end());
    }
  }
}

DiscoveryCache::DiscoveryCache() : pci_(std::make_unique<detail::PciCache>()) {}
DiscoveryCache::~DiscoveryCache() = default;
DiscoveryCache::DiscoveryCache(DiscoveryCache&&) noexcept = default;
DiscoveryCache& DiscoveryCache::operator=(DiscoveryCache&&) noexcept = default;

void DiscoveryCache::invalidate(const Changes& changes) {
  if (changes.everything) {
    platform_.reset();
    pci_->clear();
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
  }
}

void DiscoveryCache::begin(unsigned long long dev, unsigned long long ino) {
  if (have_root_ && (dev != dev_ || ino != ino_)) invalidate(Changes{});
  dev_ = dev;
  ino_ = ino;
  have_root_ = true;
  stats_ = {};
}

}  // namespace nodetopo::probes
