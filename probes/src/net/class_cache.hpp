// The net and RDMA parts of a DiscoveryCache (nodetopo/probes/discovery_cache.hpp): every entry
// of sys/class/net and sys/class/infiniband as the last discovery read it, so that a refresh
// reads again only the entries an event points at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/probes/probe.hpp>
#include <nodetopo/topology/node.hpp>
#include <nodetopo/topology/pci.hpp>

#include "net/net_class_device.hpp"

namespace nodetopo::probes::detail {

/// One class entry as read: where it resolved, which PCI function it belongs to, what its
/// attributes said and what reading it warned. `Info` is NetDeviceInfo or RdmaDeviceInfo.
template <class Info>
struct ClassEntry {
  /// The class link's text: the entry is reused only while it is the same.
  std::string target;
  /// Resolved directories (ClassDevice::pci_function is not kept: node indexes change between
  /// discoveries; `address` finds the function again).
  ClassDevice located;
  std::optional<PciAddress> address;
  /// Warnings of the resolution, then of the attribute reads, as the report words them.
  std::vector<std::string> located_warnings;
  std::vector<std::string> read_warnings;
  /// The attributes, before anything that depends on other entries (a VF's physical function
  /// interface, a port's netdev matched through the net probe's interfaces).
  Info info;
};

/// The entries of one class directory.
template <class Info>
struct ClassCache {
  std::map<std::string, ClassEntry<Info>, std::less<>> entries;  ///< by entry name
  /// Whether `entries` holds the last discovery (false: read every entry).
  bool valid = false;
  /// Read again: every entry (`all_dirty`), or those whose directory or device lies on, above
  /// or below one of these root-relative paths (an event's device, a PCI function's).
  bool all_dirty = true;
  std::vector<std::string> dirty_paths;
  /// The entries the last discovery read rather than took from here.
  std::set<std::string, std::less<>> read_now;

  void clear() {
    entries.clear();
    valid = false;
    all_dirty = true;
    dirty_paths.clear();
    read_now.clear();
  }

  /// Marks `paths` dirty; an empty list means every entry.
  void invalidate(const std::vector<std::string>& paths) {
    if (paths.empty()) {
      all_dirty = true;
    } else if (!all_dirty) {
      dirty_paths.insert(dirty_paths.end(), paths.begin(), paths.end());
    }
  }

  /// Whether `entry` must be read again.
  [[nodiscard]] bool dirty(const ClassEntry<Info>& entry) const {
    if (all_dirty) return true;
    for (const std::string& d : dirty_paths) {
      if (related(entry.located.dir, d) || related(entry.located.device_dir, d)) return true;
    }
    return false;
  }

  /// After a discovery: `fresh` is what it read or reused, and nothing is dirty any more.
  void remember(std::map<std::string, ClassEntry<Info>, std::less<>> fresh) {
    entries = std::move(fresh);
    valid = true;
    all_dirty = false;
    dirty_paths.clear();
  }

  /// Whether one path is the other or lies below it.
  static bool related(std::string_view a, std::string_view b) {
    if (a.empty() || b.empty()) return false;
    const std::string_view shorter = a.size() < b.size() ? a : b;
    const std::string_view longer = a.size() < b.size() ? b : a;
    return longer.starts_with(shorter) &&
           (longer.size() == shorter.size() || longer[shorter.size()] == '/');
  }
};

using NetCache = ClassCache<NetDeviceInfo>;

/// What tells which RDMA port an interface belongs to (RdmaProbe): its dev_port (dev_id on old
/// kernels), 1-based, and whether it is a child (VLAN, P_Key) of another interface.
struct InterfacePort {
  std::optional<std::uint64_t> port;
  bool child = false;
};

/// A port's netdev matched through its function's interfaces is not kept (RdmaProbe matches it
/// on every discovery, from what the net probe found); what it read of those interfaces is, by
/// name, and used while the net cache took the interface from itself too.
struct RdmaCache : ClassCache<RdmaDeviceInfo> {
  std::map<std::string, InterfacePort, std::less<>> interfaces;

  void clear() {
    ClassCache<RdmaDeviceInfo>::clear();
    interfaces.clear();
  }
};

}  // namespace nodetopo::probes::detail

namespace nodetopo::probes::detail {

/// Goes over the entries `names` of `class_dir` in order: resolves each, finds its PCI function,
/// reads its attributes with `read(const ClassDevice&, Info&)` and hands it to
/// `add(name, const ClassDevice&, Info)`. With a cache, an entry whose link text is unchanged and
/// that no event points at is taken from it instead of read, its warnings repeated where a
/// read would give them; the cache then holds this discovery's entries. Entries that are not
/// links, or are skipped, are never cached. Counts entries read and reused.
template <class Info, class Read, class Add>
void visit_class_entries(ProbeContext& ctx, const TopologyBuilder& builder,
                         std::string_view class_dir, const std::vector<std::string>& names,
                         ClassCache<Info>* cache, std::size_t& read_count,
                         std::size_t& reused_count, Read&& read, Add&& add) {
  std::map<std::string, ClassEntry<Info>, std::less<>> kept;
  std::set<std::string, std::less<>> read_now;
  auto since = [&ctx](std::size_t from) {
    return std::vector<std::string>(ctx.warnings().begin() + static_cast<std::ptrdiff_t>(from),
                                    ctx.warnings().end());
  };
  for (const std::string& name : names) {
    ClassEntry<Info> entry;
    const ClassEntry<Info>* cached = nullptr;
    if (cache != nullptr) {
      if (auto target = ctx.root().read_link(std::string(class_dir) + "/" + name)) {
        entry.target = std::move(target.value());
      }
      auto found = cache->entries.find(name);
      if (cache->valid && !entry.target.empty() && found != cache->entries.end() &&
          found->second.target == entry.target && !cache->dirty(found->second)) {
        cached = &found->second;
      }
    }
    ClassDevice located;
    if (cached != nullptr) {
      entry = *cached;
      for (const std::string& w : entry.located_warnings)
        ctx.repeat_warning(w);
      located = entry.located;
      attach_class_device(ctx, builder, class_dir, name, entry.address, located);
      for (const std::string& w : entry.read_warnings)
        ctx.repeat_warning(w);
      ++reused_count;
    } else {
      ++read_count;
      read_now.insert(name);
      const std::size_t before = ctx.warnings().size();
      auto resolved = resolve_class_device(ctx, class_dir, name, entry.address);
      if (!resolved) continue;
      entry.located_warnings = since(before);
      located = std::move(*resolved);
      entry.located = located;
      attach_class_device(ctx, builder, class_dir, name, entry.address, located);
      const std::size_t attached = ctx.warnings().size();
      read(located, entry.info);
      entry.read_warnings = since(attached);
    }
    add(name, located, Info(entry.info));
    if (cache != nullptr && !entry.target.empty()) kept.emplace(name, std::move(entry));
  }
  if (cache != nullptr) {
    cache->remember(std::move(kept));
    cache->read_now = std::move(read_now);
  }
}

}  // namespace nodetopo::probes::detail
