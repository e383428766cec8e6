// Locating the device behind a sysfs class entry (sys/class/net/<if>, sys/class/infiniband/<dev>):
// where its directory is and which PCI function of the topology it belongs to. Shared by the NIC
// and RDMA probes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nodetopo/probes/probe.hpp>
#include <nodetopo/probes/sys_dir.hpp>
#include <nodetopo/topology/pci.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::probes {

/// A class entry after resolution.
struct ClassDevice {
  /// Resolved, root-relative directory of the entry. Empty when the entry is a link to a software
  /// device (devices/virtual/...) that the capture left out: the device is known by name only.
  std::string dir;
  /// Resolved directory of its `device` link (the parent device: a PCI function for NICs);
  /// empty when it has none.
  std::string device_dir;
  /// The PCI function node the device belongs to; kNoNode when it has none in this topology.
  NodeIndex pci_function = kNoNode;
};

/// The nearest PCI function on a resolved sysfs device path: the last PCI address of the run of
/// PCI components that follows a root bus ("pci0000:17"). For
/// "sys/devices/pci0000:00/0000:00:03.0/virtio0/net/ens3" that is 0000:00:03.0. nullopt for
/// paths outside the PCI hierarchy (devices/virtual, platform devices).
std::optional<PciAddress> nearest_pci_function(std::string_view resolved_path);

/// Resolves `class_dir`/`name` and finds its PCI function: from the entry's `device` link when it
/// resolves, else from the entry's own path (software devices have no `device` link). A `device`
/// link that cannot be followed (it leaves the root, loops) is reported and the entry's own path
/// used instead. Returns nullopt, with one warning, when the entry must be skipped (a dangling
/// link to a non-virtual device, a link leaving the root).
std::optional<ClassDevice> locate_class_device(ProbeContext& ctx, const TopologyBuilder& builder,
                                               std::string_view class_dir, const std::string& name);

/// The first half of locate_class_device(): resolves the entry and tells, in `address`, the PCI
/// function it belongs to (nullopt: none), without looking at the topology.
std::optional<ClassDevice> resolve_class_device(ProbeContext& ctx, std::string_view class_dir,
                                                const std::string& name,
                                                std::optional<PciAddress>& address);

/// resolve_class_device() without the walk, for entry `name` of the open, canonical class
/// directory `class_dir` whose link text is `target` (read through its descriptor): the text is
/// joined to the class directory as the kernel writes it ("../../devices/pci0000:00/..."), and the
/// kernel proves the result canonical by opening it with no symlink allowed on the way
/// (SysRoot::open_canonical_dir), which also gives `opened`, for reading the attributes. The
/// entry's `device` link is read through that descriptor and joined the same way: a target that is
/// an ancestor of the entry's directory is proven by that open already ("../../../0000:17:00.0"),
/// any other is opened canonical too. nullopt, with nothing said, whenever any of this is not
/// plain (a text with "." or a later "..", a path that is not canonical or does not exist, a
/// `device` entry that is not a link): the caller then calls resolve_class_device(), which reads
/// the entry as it always has and words its warnings.
std::optional<ClassDevice> locate_lexically(const SysRoot& root, const SysDir& class_dir,
                                            std::string_view target,
                                            std::optional<PciAddress>& address,
                                            std::optional<SysDir>& opened);

/// The root-relative path class entry `name` of the open, canonical class directory `class_dir`
/// leads to, joined from its link's text (read through the directory's descriptor) when that text
/// is plain; nullopt otherwise. Not proven canonical: a caller that opens files below it by path
/// (SysRoot::read_attr) gets them checked by the kernel, or resolved in user space where the
/// kernel refuses, with the same answer the link's full resolution gives.
std::optional<std::string> class_entry_path(const SysDir& class_dir, std::string_view name);

/// The second half: sets `device.pci_function` to the node of `address`, or warns that the
/// function is not in the topology.
void attach_class_device(ProbeContext& ctx, const TopologyBuilder& builder,
                         std::string_view class_dir, const std::string& name,
                         const std::optional<PciAddress>& address, ClassDevice& device);

/// Reads an optional attribute of a class device: nullopt when absent or unreadable. Read errors
/// other than "absent" are reported unless `quiet` (attributes like a down link's `speed` fail
/// with EINVAL by design).
std::optional<std::string> read_optional_attr(ProbeContext& ctx, const std::string& rel,
                                              bool quiet = false);

/// Reads the attributes of one class device directory `dir`: through `opened`, its descriptor,
/// when there is one (one openat of one component each), else by root-relative path. Values and
/// warnings are those of read_optional_attr() on `dir`/name: an attribute the descriptor cannot
/// read for any reason other than its absence (a FIFO, a directory, EACCES: rare) is read again
/// by path, so that its warning is worded as the path read words it (SysDir's wording differs).
class ClassAttrs {
 public:
  ClassAttrs(ProbeContext& ctx, const std::string& dir, const SysDir* opened)
      : ctx_(ctx), dir_(dir), opened_(opened) {}

  /// The value of attribute `name`, nullopt when absent or unreadable; `quiet` as in
  /// read_optional_attr().
  [[nodiscard]] std::optional<std::string> read(std::string_view name, bool quiet = false) const;
  /// Root-relative path of attribute `name`, for messages.
  [[nodiscard]] std::string path(std::string_view name) const;

 private:
  ProbeContext& ctx_;
  const std::string& dir_;
  const SysDir* opened_;
};

}  // namespace nodetopo::probes
