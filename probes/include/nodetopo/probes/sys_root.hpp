// SysRoot: the host root directory that every probe reads from, and the only code in nodetopo that
// opens host paths.
//
// A root is a directory holding `sys/` and `proc/`: `/` on a node, `/host` in a DaemonSet pod, or a
// captured or mock tree in tests. Paths handed to SysRoot are relative to the root ("sys/bus/pci").
// Symlinks are resolved inside the root, the way sysfs' relative links are meant to be read; a
// link or ".." that would leave the root, an absolute link in a non-live root, and link loops are
// refused with an error naming the path.
//
// Most paths a probe reads hold no symlink at all (a file in a device directory, a device
// directory reached through its canonical path). Those are opened with one openat2() that the
// kernel refuses if any component is a symlink or climbs out of the root (RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS): success proves the path canonical without a readlink() per component.
// Everything else, and kernels without openat2 (before 5.6, or a seccomp profile that denies it),
// takes the user-space walk, which reports every refusal with its own message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/base/error.hpp>

namespace nodetopo::probes {

class SysDir;

class SysRoot {
 public:
  /// How the root relates to the machine this process runs on.
  enum class Liveness {
    kAuto,     ///< live when the directory is "/"
    kLive,     ///< the root is the host we run on (e.g. HOST_ROOT=/host in a container)
    kCapture,  ///< a capture or mock tree: never touch real hardware
  };

  /// How paths are walked.
  enum class PathWalk {
    kKernelChecked,  ///< openat2() first for symlink-free paths, the user-space walk otherwise
    kUserSpace,      ///< always the user-space walk (tests run hostile roots both ways)
  };

  /// Opens `dir`. Fails when it is not a directory or holds no `sys/` directory; the error names
  /// the path and says what a host root must contain.
  static Result<SysRoot> open(const std::filesystem::path& dir, Liveness liveness = Liveness::kAuto,
                              PathWalk walk = PathWalk::kKernelChecked);

  /// A fresh SysRoot over the same path, liveness and walk, with empty caches: what a later
  /// discovery of the same host opens, so that hot-plugged devices and a swapped root are seen.
  [[nodiscard]] Result<SysRoot> reopen() const;

  /// Absolute, normalised path of the root directory.
  [[nodiscard]] const std::filesystem::path& path() const { return root_; }
  /// True when the root describes the running machine, so hardware APIs (NVML, netlink) may be
  /// used. Captures and mock roots are never live.
  [[nodiscard]] bool is_live() const { return live_; }

  /// Root-joined path for messages and for libraries configured with a directory (libpci's
  /// sysfs.path, hwloc's HWLOC_FSROOT). `rel` is root-relative.
  [[nodiscard]] std::string host_path(std::string_view rel) const;

  /// Inverse of host_path(): strips the root from an absolute path inside it, so that messages
  /// about a capture read the same wherever it is unpacked. Other strings are returned unchanged.
  [[nodiscard]] std::string relative(std::string_view path) const;

  /// Resolves every symlink in `rel` inside the root and returns the canonical root-relative path
  /// (no leading '/'). Errors: kNotFound, kEscapesRoot, kSymlinkLoop, kIo.
  [[nodiscard]] Result<std::string> resolve(std::string_view rel) const;

  /// Reads a whole file (at most `max_bytes`; sysfs attributes are one page). Content is returned
  /// as is, trailing newline included.
  [[nodiscard]] Result<std::string> read_file(std::string_view rel,
                                              std::size_t max_bytes = 65536) const;
  /// Reads a file and strips surrounding whitespace: the form of a sysfs attribute value.
  [[nodiscard]] Result<std::string> read_attr(std::string_view rel) const;

  /// Names in a directory, sorted, without "." and "..".
  [[nodiscard]] Result<std::vector<std::string>> list_dir(std::string_view rel) const;
  /// The target of the symlink at `rel`, as stored (usually relative).
  [[nodiscard]] Result<std::string> read_link(std::string_view rel) const;
  /// True when `rel` resolves to an existing file or directory inside the root.
  [[nodiscard]] bool exists(std::string_view rel) const;

  /// Opens the directory `rel` (symlinks resolved inside the root) for reading its entries
  /// through one descriptor. See sys_dir.hpp.
  [[nodiscard]] Result<SysDir> open_dir(std::string_view rel) const;
  /// True while kernel-checked opens are in use (PathWalk::kKernelChecked on a kernel that has
  /// openat2): only then can open_canonical_dir() succeed.
  [[nodiscard]] bool checks_paths_in_kernel() const;
  /// Opens the directory `rel` only when `rel` is already canonical: no symlink on the way, no
  /// "." or ".." component, inside the root. nullopt otherwise, and whenever the kernel cannot
  /// tell (no openat2, PathWalk::kUserSpace): the caller then resolves the path it came from.
  [[nodiscard]] std::optional<SysDir> open_canonical_dir(std::string_view rel) const;

  /// Counters of the system calls made, for tests and benchmarks ("no file read twice").
  struct Stats {
    std::size_t opens = 0;
    std::size_t lstats = 0;
    std::size_t readlinks = 0;
    std::size_t dir_lists = 0;
  };
  [[nodiscard]] Stats stats() const;

  /// Paths a discovery asked for, for `topo capture` (which packs exactly those files). Off until
  /// record_reads() is called; kept, like stats(), in the state that copies of this root share,
  /// so it is const. Requested paths are kept as given (links unresolved, absent files included):
  /// the capture resolves them itself, storing every link on the way as a link.
  struct ReadLog {
    std::vector<std::string> paths;        ///< files, links and directories opened or resolved
    std::vector<std::string> listed_dirs;  ///< directories whose entries were listed
  };
  void record_reads() const;
  /// Sorted and without duplicates.
  [[nodiscard]] ReadLog read_log() const;

 private:
  friend class SysDir;
  struct Cache;
  // One per field of Stats; counted without a lock (reader threads open files side by side).
  enum class Counter : std::uint8_t { kOpens, kLstats, kReadlinks, kDirLists };
  void count(Counter counter) const;
  // Adds `rel` to the read log when recording (one relaxed load otherwise).
  void record(std::string_view rel, bool listed) const;
  // Adds `dir`/`name` to the read log when recording: the path is joined only then, not for
  // every attribute a discovery reads.
  void record(std::string_view dir, std::string_view name) const;
  SysRoot(std::filesystem::path root, bool live, PathWalk walk);
  // A descriptor for `rel` opened by one kernel-checked openat2(), or -1 when the path is not
  // canonical, does not exist, or the kernel cannot check it: the caller then takes the
  // user-space walk, which words the error. `error` (optional) gets openat2's errno, or 0 when
  // it was not tried.
  [[nodiscard]] int open_checked(std::string_view rel, int flags, int* error = nullptr) const;
  // open_checked() of `rel` below the directory open as `dir_fd` (a SysDir's) instead of the root.
  [[nodiscard]] int open_checked_at(int dir_fd, std::string_view rel, int flags,
                                    int* error = nullptr) const;
  // Opens the resolved, root-relative `rel` with the kernel refusing any symlink or climb out on
  // the way (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, else one O_NOFOLLOW openat per
  // component), in either walk: what a walk checked cannot be swapped before the open. -1 with
  // errno (ELOOP: a component is a link now).
  [[nodiscard]] int open_resolved(const std::string& rel, int flags) const;
  // The error for a failed open_resolved(): a link met there is reported as a change during the
  // walk.
  [[nodiscard]] Error open_error(int err, const std::string& what, std::string_view rel) const;
  // True when the resolved `rel` is a directory.
  [[nodiscard]] bool is_directory(const std::string& rel) const;
  // Reads the open `fd` when it is a regular file (closing it); refuses anything else.
  [[nodiscard]] Result<std::string> read_regular(int fd, std::size_t max_bytes,
                                                 std::string_view rel) const;
  // Whether directory `rel` (plain) holds no symlink on its way, by one kernel-checked open;
  // answers are cached.
  [[nodiscard]] bool is_canonical_dir(const std::string& rel) const;

  [[nodiscard]] Result<std::string> resolve_impl(std::string_view rel, bool follow_last) const;
  // What readlink() said about a root-relative path whose parents are resolved.
  struct PathEntry {
    int error = 0;  // errno of lstat, 0 when the path exists
    bool symlink = false;
    std::string target;
  };
  [[nodiscard]] PathEntry lookup(const std::string& rel) const;

  std::filesystem::path root_;
  std::string root_prefix_;  // root_ with a trailing '/', for joining
  bool live_ = false;
  std::shared_ptr<Cache> cache_;  // shared by copies: resolved directories and link targets
};

}  // namespace nodetopo::probes
