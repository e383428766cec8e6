// SysDir: one open directory inside a host root, for reading many attributes of one device.
//
// Reading `vendor`, `class`, `numa_node`, ... of a PCI function through full paths makes the
// kernel walk ten path components per file; through the directory's descriptor (openat) it walks
// one. Attributes are opened directly: an absent one costs one failed openat, cheaper than listing
// the directory (which getdents does only when entries() or type_of() ask for it). Whatever is
// not a regular file is reported as such instead of read (a FIFO neither blocks nor counts as an
// empty value). Attribute names never contain '/', so nothing read through a SysDir can leave
// the directory; an attribute that is a symlink is resolved by the SysRoot it came from, with all
// of its checks.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/types.h>

#include <nodetopo/probes/sys_root.hpp>

namespace nodetopo::probes {

/// One attribute opened for reads at chosen offsets (SysDir::open_file()): for a file whose every
/// byte read has a cost of its own, such as a PCI function's `config` on a live root, where the
/// kernel makes one configuration cycle per dword. Closed when destroyed.
class SysFile {
 public:
  SysFile(SysFile&& other) noexcept;
  SysFile& operator=(SysFile&& other) noexcept;
  SysFile(const SysFile&) = delete;
  SysFile& operator=(const SysFile&) = delete;
  ~SysFile();

  /// Reads up to `out.size()` bytes at `offset` (one pread, retried on EINTR): the count read,
  /// fewer at the end of what the file lets this process read. The error names the file.
  [[nodiscard]] Result<std::size_t> read_at(std::size_t offset, std::span<std::uint8_t> out) const;
  /// The file from its start, at most `max_bytes`: what SysDir::read_file() returns.
  [[nodiscard]] Result<std::string> read_up_to(std::size_t max_bytes) const;

 private:
  friend class SysDir;
  SysFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;  // for errors
};

class SysDir {
 public:
  enum class EntryType { kFile, kDirectory, kLink, kOther, kUnknown };

  SysDir(SysDir&& other) noexcept;
  SysDir& operator=(SysDir&& other) noexcept;
  SysDir(const SysDir&) = delete;
  SysDir& operator=(const SysDir&) = delete;
  ~SysDir();

  /// The directory's resolved, root-relative path.
  [[nodiscard]] const std::string& rel() const { return rel_; }

  /// One directory entry. `name` stays valid as long as the SysDir it came from.
  struct Entry {
    std::string_view name;
    EntryType type;
  };
  /// Every entry with its type, sorted by name, without "." and "..".
  [[nodiscard]] std::vector<Entry> entries() const;

  /// The type of entry `name`, or nullopt when the directory has no such entry.
  [[nodiscard]] std::optional<EntryType> type_of(std::string_view name) const;
  [[nodiscard]] bool has(std::string_view name) const { return type_of(name).has_value(); }

  /// Reads attribute `name` whole (at most `max_bytes`). kNotFound when absent, kInvalid when it
  /// is not a regular file and reads as nothing (a FIFO or directory planted in a capture).
  [[nodiscard]] Result<std::string> read_file(std::string_view name,
                                              std::size_t max_bytes = 65536) const;
  /// Opens attribute `name` with read_file()'s checks, for reads at chosen offsets. kNotFound when
  /// absent, kInvalid when it is not a regular file or is a symlink (read_file() resolves one
  /// through the root; a caller falls back to it).
  [[nodiscard]] Result<SysFile> open_file(std::string_view name) const;
  /// The content of `rel`, plain components below this directory ("3/properties"), opened by one
  /// kernel-checked openat2 (no link on the way, nothing above), not one open per directory on
  /// the way, with read_file()'s checks. nullopt on any failure and whenever the kernel cannot
  /// check paths (SysRoot::checks_paths_in_kernel()): the caller then reads by path, which
  /// resolves links and words the error.
  [[nodiscard]] std::optional<std::string> read_file_below(std::string_view rel,
                                                           std::size_t max_bytes = 65536) const;
  /// read_file() with surrounding whitespace stripped: a sysfs attribute's value.
  [[nodiscard]] Result<std::string> read_attr(std::string_view name) const;
  /// The target of symlink `name` as stored (e.g. "../../../bus/pci/drivers/nvidia").
  [[nodiscard]] Result<std::string> read_link(std::string_view name) const;
  /// The target of symlink `name`, nullopt when there is none or it cannot be read: for links
  /// whose absence is the normal case and is not reported (a PCI function's physfn, driver). No
  /// error is built, so no path string for each of the functions that have none.
  [[nodiscard]] std::optional<std::string> link_if_present(std::string_view name) const;
  /// Opens subdirectory `name` (one plain component) through this directory's descriptor: one
  /// openat that refuses a symlink, so the child is canonical as this directory is. nullopt when
  /// it is absent, a link, not a directory or not openable: the caller then takes the root's
  /// path (SysRoot::open_dir, list_dir), which words the error.
  [[nodiscard]] std::optional<SysDir> open_subdir(std::string_view name) const;

 private:
  friend class SysRoot;
  SysDir(SysRoot root, std::string rel, int fd);
  // The descriptor of regular file `name` opened through fd_ (counted and recorded), or an
  // error; ELOOP (a symlink) is returned as kSymlinkLoop for the caller to resolve.
  Result<int> open_regular(std::string_view name) const;
  ssize_t readlink_here(std::string_view name, std::array<char, 4096>& buf) const;
  // Where one entry's name lies in names_: offsets, not views, so that moving a SysDir (and its
  // names_, whose short-string buffer moves with it) keeps them valid.
  struct Slot {
    std::uint32_t offset;
    std::uint16_t size;
    EntryType type;
  };
  void list() const;
  [[nodiscard]] std::string_view name_of(const Slot& slot) const {
    return std::string_view(names_).substr(slot.offset, slot.size);
  }
  [[nodiscard]] std::string host_path(std::string_view name) const;

  SysRoot root_;
  std::string rel_;
  int fd_ = -1;
  mutable bool listed_ = false;
  // The listing: every name back to back in one string, and a slot per entry in directory order.
  // A device directory has some thirty entries; a string each made listing cost more than
  // reading them.
  mutable std::string names_;
  mutable std::vector<Slot> slots_;
};

}  // namespace nodetopo::probes
