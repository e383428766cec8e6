// The net and RDMA parts of a DiscoveryCache (nodetopo/probes/discovery_cache.hpp): every entry
// of sys/class/net and sys/class/infiniband as the last discovery read it, so that a refresh
// reads again only the entries an event points at.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nodetopo/probes/probe.hpp>
#include <nodetopo/probes/sys_dir.hpp>
#include <nodetopo/topology/node.hpp>
#include <nodetopo/topology/pci.hpp>

#include "net/net_class_device.hpp"
#include "parallel.hpp"

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

/// One entry of a class directory after the first phase of a visit: read (or taken from the
/// cache) but not yet attached to the topology.
template <class Info>
struct ReadClassEntry {
  std::string name;
  ClassEntry<Info> entry;
  bool cached = false;   ///< taken from the cache, not read
  bool skipped = false;  ///< could not be resolved: only the warnings of that remain
  /// Warnings of the resolution and of the attribute reads: as met, or (a cached entry) as the
  /// discovery that read it recorded them.
  std::vector<ProbeContext::HeldWarning> located;
  std::vector<ProbeContext::HeldWarning> read;
};

/// Sends the context's warnings to `into` while alive.
class CapturedWarnings {
 public:
  CapturedWarnings(ProbeContext& ctx, std::vector<ProbeContext::HeldWarning>& into) : ctx_(ctx) {
    ctx_.capture_warnings(&into);
  }
  ~CapturedWarnings() { ctx_.capture_warnings(nullptr); }
  CapturedWarnings(const CapturedWarnings&) = delete;
  CapturedWarnings& operator=(const CapturedWarnings&) = delete;

 private:
  ProbeContext& ctx_;
};

inline std::vector<std::string> recorded(const std::vector<ProbeContext::HeldWarning>& held) {
  std::vector<std::string> out;
  out.reserve(held.size());
  for (const ProbeContext::HeldWarning& w : held)
    out.push_back(w.recorded);
  return out;
}

// A cached entry's warnings as the discovery that read it recorded them, to be given again in that
// form (ProbeContext::replay).
inline std::vector<ProbeContext::HeldWarning> repeated(const std::vector<std::string>& recorded) {
  std::vector<ProbeContext::HeldWarning> out;
  out.reserve(recorded.size());
  for (const std::string& w : recorded)
    out.push_back({w, w});
  return out;
}

/// One name of a class directory, with its type when the directory was listed through its
/// descriptor (kUnknown otherwise).
struct ClassName {
  std::string name;
  SysDir::EntryType type = SysDir::EntryType::kUnknown;
};

/// The first phase of a visit of the entries `names` of `class_dir`, in order: locates each and
/// reads its attributes with `read(ProbeContext&, const ClassDevice&, const SysDir* opened, Info&)`
/// (the context to warn through: this probe's or, on a helper thread, a sibling's; `opened`:
/// the entry's directory, when it was opened by its descriptor; null when it was resolved by
/// path), or, with a cache, takes an entry whose link text is unchanged and that no event points
/// at from it. With `listing` (the class directory, opened canonical), a link entry is located
/// lexically (locate_lexically(): its link read through the directory's descriptor, its path
/// proven by one kernel-checked open) and anything that is not plain is resolved in full
/// (resolve_class_device(), with its warnings), as every entry is without `listing`. It needs no
/// topology, so that it can run as a prefetch beside earlier probes; its warnings are kept with
/// the entries for add_class_entries() to give in the order a one-pass visit gives them. Counts
/// entries read and reused.
/// Entries per reader thread of read_class_entries(): some 30 µs each on the benchmark VM (a
/// virtual interface: its link, its directory and five attributes), so a Kubernetes node's
/// hundreds of pod interfaces are worth a second thread, a GPU server's dozen are not.
inline constexpr std::size_t kClassEntriesPerThread = 32;
inline constexpr unsigned kMaxClassReaderThreads = 4;

template <class Info, class Read>
std::vector<ReadClassEntry<Info>> read_class_entries(ProbeContext& ctx, std::string_view class_dir,
                                                     const SysDir* listing,
                                                     const std::vector<ClassName>& names,
                                                     const ClassCache<Info>* cache,
                                                     std::size_t& read_count,
                                                     std::size_t& reused_count, Read&& read) {
  std::vector<ReadClassEntry<Info>> out(names.size());
  std::atomic<std::size_t> read_total{0};
  std::atomic<std::size_t> reused_total{0};
  // One entry, read with `c` (this probe's context or a helper thread's sibling); what it
  // warns is captured with the entry, so the order of the warnings does not depend on threads.
  auto visit = [&](ProbeContext& c, std::size_t i) {
    const auto& [name, type] = names[i];
    ReadClassEntry<Info>& e = out[i];
    e.name = name;
    // The link's text, read once through the class directory's descriptor: for the cache's
    // comparison and for the lexical path.
    std::optional<std::string> link;
    if (listing != nullptr && type == SysDir::EntryType::kLink) {
      if (auto text = listing->read_link(name)) link = std::move(text.value());
    }
    const ClassEntry<Info>* cached = nullptr;
    if (cache != nullptr) {
      if (link) {
        e.entry.target = *link;
      } else if (auto target = c.root().read_link(std::string(class_dir) + "/" + name)) {
        e.entry.target = std::move(target.value());
      }
      auto found = cache->entries.find(name);
      if (cache->valid && !e.entry.target.empty() && found != cache->entries.end() &&
          found->second.target == e.entry.target && !cache->dirty(found->second)) {
        cached = &found->second;
      }
    }
    if (cached != nullptr) {
      e.entry = *cached;
      e.cached = true;
      e.located = repeated(e.entry.located_warnings);
      e.read = repeated(e.entry.read_warnings);
      ++reused_total;
      return;
    }
    ++read_total;
    std::optional<SysDir> opened;
    std::optional<ClassDevice> resolved;
    if (link) resolved = locate_lexically(c.root(), *listing, *link, e.entry.address, opened);
    if (!resolved) {
      CapturedWarnings capture(c, e.located);
      resolved = resolve_class_device(c, class_dir, name, e.entry.address);
    }
    if (!resolved) {
      e.skipped = true;
      return;
    }
    e.entry.located = std::move(*resolved);
    {
      CapturedWarnings capture(c, e.read);
      read(c, e.entry.located, opened ? &*opened : nullptr, e.entry.info);
    }
    e.entry.located_warnings = recorded(e.located);
    e.entry.read_warnings = recorded(e.read);
  };
  // Helper threads warn through siblings of `ctx` (a ProbeContext is one thread's).
  const unsigned threads =
      reader_threads(names.size(), kClassEntriesPerThread, kMaxClassReaderThreads);
  std::vector<std::unique_ptr<ProbeContext>> siblings;
  for (unsigned worker = 1; worker < threads; ++worker)
    siblings.push_back(ctx.sibling());
  // Every descriptor of an entry's read is closed by its end (the listing was opened before).
  for_each_on_threads(
      names.size(), threads,
      [&](unsigned worker, std::size_t i) { visit(worker == 0 ? ctx : *siblings[worker - 1], i); },
      Descriptors::kPrivatePerWorker);
  read_count += read_total;
  reused_count += reused_total;
  return out;
}

/// A class directory after the first phase: its entries, or why it could not be listed.
template <class Info>
struct ClassDirRead {
  Result<void> result;
  std::vector<ReadClassEntry<Info>> entries;
  std::size_t read = 0;
  std::size_t reused = 0;
};

/// Lists `class_dir` (`absent`: the message when the facility is not there) and runs
/// read_class_entries() over it. While the kernel checks paths (SysRoot::checks_paths_in_kernel)
/// and the class directory opens as canonical, it is listed through its descriptor and its
/// entries are located lexically; otherwise it is listed and every entry resolved by path.
template <class Info, class Read>
ClassDirRead<Info> read_class_dir(ProbeContext& ctx, std::string_view class_dir,
                                  std::string_view absent, const ClassCache<Info>* cache,
                                  Read&& read) {
  ClassDirRead<Info> out;
  std::optional<SysDir> listing;
  if (ctx.root().checks_paths_in_kernel()) listing = ctx.root().open_canonical_dir(class_dir);
  std::vector<ClassName> names;
  if (listing) {
    const std::vector<SysDir::Entry> entries = listing->entries();
    names.reserve(entries.size());
    for (const SysDir::Entry& entry : entries)
      names.push_back({std::string(entry.name), entry.type});
  } else {
    auto listed = list_subsystem(ctx.root(), class_dir, absent);
    if (!listed) {
      out.result = listed.error();
      return out;
    }
    names.reserve(listed.value().size());
    for (std::string& name : listed.value())
      names.push_back({std::move(name), SysDir::EntryType::kUnknown});
  }
  out.entries = read_class_entries<Info>(ctx, class_dir, listing ? &*listing : nullptr, names,
                                         cache, out.read, out.reused, std::forward<Read>(read));
  return out;
}

/// The second phase: finds each entry's PCI function in the topology and hands it to
/// `add(name, const ClassDevice&, Info)`, giving every warning where a one-pass visit gives it
/// (resolution, attachment, attribute reads). With a cache, the cache then holds this
/// discovery's entries; entries that are not links, or are skipped, are never cached.
template <class Info, class Add>
void add_class_entries(ProbeContext& ctx, const TopologyBuilder& builder,
                       std::string_view class_dir, std::vector<ReadClassEntry<Info>>& entries,
                       ClassCache<Info>* cache, Add&& add) {
  std::map<std::string, ClassEntry<Info>, std::less<>> kept;
  std::set<std::string, std::less<>> read_now;
  for (ReadClassEntry<Info>& e : entries) {
    if (!e.cached) read_now.insert(e.name);
    ctx.replay(e.located);
    if (e.skipped) continue;
    ClassDevice located = e.entry.located;
    attach_class_device(ctx, builder, class_dir, e.name, e.entry.address, located);
    ctx.replay(e.read);
    add(e.name, located, Info(e.entry.info));
    if (cache != nullptr && !e.entry.target.empty()) kept.emplace(e.name, std::move(e.entry));
  }
  if (cache != nullptr) {
    cache->remember(std::move(kept));
    cache->read_now = std::move(read_now);
  }
}

}  // namespace nodetopo::probes::detail
