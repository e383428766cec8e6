// HwlocGuard: keeps every file hwloc's Linux backend opens inside the host root.
//
// hwloc is handed the root as HWLOC_FSROOT and opens what it needs itself: it opens the root
// directory once, then everything with openat/faccessat/fstatat/readlinkat relative to that
// descriptor, and the kernel follows every symlink on the way. A capture holding
// `sys/devices/virtual/dmi/id/product_name -> /etc/hostname` or `proc -> /proc` would make it
// read the machine running nodetopo. hwloc_guard.cpp defines those four libc entry points in
// nodetopo itself (the executable's definitions take precedence over libc's for libhwloc's
// calls). While a guard is active on the calling thread, a call whose directory descriptor is the
// guarded root is resolved by the kernel with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS):
// absolute links and ".." stay inside the root, exactly as a capture is meant to be read. One
// file hwloc 2.9 opens by name, not through its root descriptor: `<root>/proc/mounts`, given to
// setmntent() (which has no openat form) when it looks for cgroup mounts; the guard defines
// setmntent() too and opens that path the same way, so a mount table linked out of the root,
// or one that is a FIFO or device node, is neither read outside nor waited on. Opens
// are made non-blocking, and only regular files of bounded size and directories are handed to
// hwloc: a FIFO, device node or socket, or a huge file, is refused with a warning naming it.
// Every other call (other threads, other descriptors, no guard) is forwarded to libc untouched.
//
// The same entry points also spare hwloc work nodetopo throws away: with caches filtered out
// (KEEP_NONE), hwloc 2.9's Linux backend still opens `cpuN/cache/indexM/shared_cpu_map` for ten
// indexes of every CPU (2,240 opens on a 224-CPU machine, a third of all its file-system calls)
// and builds cache objects only to drop them. A guard that skips cache descriptions answers
// those opens ENOENT without a system call — what hwloc sees on a kernel without cache
// information — so the topology it keeps is the same (the golden and oracle suites compare
// every capture). Cluster descriptions (`cpuN/topology/cluster_*`) are skipped the same way: the
// probe filters cores and dies out too (it reports packages, NUMA nodes and their CPU sets), and
// without core information hwloc would open every CPU's cluster_cpus to build cluster groups
// nobody reads; without cluster information (kernels before 5.16) it reads one file per CPU,
// package_cpus, instead of core_cpus, core_id, cluster_cpus and die_cpus. NUMA nodes keep their
// own CPU sets: groups stay allowed, so hwloc still makes one for a node inside a package. That
// mode alone, without containment, is what the real root "/" gets; there hwloc opens absolute
// paths (descriptor -1), so the guard looks at the path instead of the descriptor.
//
// hwloc parses /proc/cpuinfo with fgets() into a 128-byte buffer and skips the rest of a longer
// line with fscanf("%*[^\n]"), which goes a character at a time: on a 224-CPU x86 host the
// `flags`, `bugs` and `vmx flags` lines (1.5 KB each) cost it 4 M instructions, a third of its
// whole load. A guard that shortens cpuinfo hands hwloc, instead of the file, an in-memory copy
// with every line cut to the 127 characters hwloc's parser reads of it: hwloc sees the same
// text, line by line, and skips nothing. The copy also leaves out the lines hwloc's parser
// provably ignores: those whose key (the text before ':') none of hwloc 2.9's cpuinfo parsers
// (x86, ARM, POWER, IA-64, generic) compares, and those it skips unread (no ':', not starting
// with a letter). On x86 that is 20 of every CPU's 27 lines (flags, bugs, cpu MHz, cache size,
// siblings, apicid, ...): on a 224-CPU host 35 KB instead of 380 KB, a tenth of hwloc's load.
//
// One file hwloc 2.9 reads twice: when cpu0 has no topology (an offline cpu0, as in hwloc's own
// offline-cpu0-node0 capture), check_sysfs_cpu_path() reads `sys/devices/system/cpu/online` to
// find the first online CPU, and look_sysfscpu() then reads it again. The guard sees that
// fallback coming — the access() check of cpu0 that precedes it failed — and from then on hands
// hwloc that file as an in-memory copy of its first reading: the file is read once, hwloc sees the
// same text twice. On every other root nothing changes (one reading, of the file itself).
//
// hwloc 2.9 reads every CPU's package mask (`cpuN/topology/package_cpus`, or `core_siblings` on
// kernels before 5.x) and keeps it only for the first CPU it lists; for every other CPU the mask is
// read, parsed and freed. The kernel writes one mask per package: every CPU of it lists the same
// set (x86 and arm64 link package siblings both ways, from the same package id). A guard that
// skips known package siblings reads the mask of a package's first CPU once more (pread, before
// hwloc reads it: hwloc's own read still starts at offset 0), and answers ENOENT for the package
// mask of any later CPU it lists, without a system call: hwloc then finds no package for that
// CPU, which is what it finds from reading the mask (its first CPU is an earlier one). The file
// must be in the kernel's own form (8-digit hex words, commas) and list the CPU it was read for;
// anything else is read by hwloc alone and changes nothing. A capture whose package masks
// contradict each other could get fewer packages than lstopo gives it; no kernel writes one.
// Only while hwloc keeps no dies and no clusters: it compares those with the package mask.
// In the same mode, hwloc's access(cpuN/topology, X_OK) check, one per CPU, is answered by the
// contained O_PATH open alone: look_sysfscpu() leaves a CPU out only when that check fails with
// ENOENT, which the open tells (224 faccessat2 calls fewer on a DGX H100).
//
// On the live root "/" the same file has a second reader: hwloc 2.9 asks the running system's
// online CPU count (hwloc_gather_system_info() -> hwloc_fallback_nbprocessors() ->
// sysconf(_SC_NPROCESSORS_ONLN)), and glibc answers by reading /sys/devices/system/cpu/online,
// which look_sysfscpu() reads again. hwloc_guard.cpp defines sysconf() as well: on the guarded
// thread, on "/", it reads the file once, answers with the CPUs of that list and keeps the text
// for hwloc's own open. Every other sysconf() call, and this one anywhere else, is libc's.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/probes/sys_root.hpp>
#include <nodetopo/topology/cpu_set.hpp>

namespace nodetopo::probes::detail {

class HwlocGuard {
 public:
  /// The largest file handed to hwloc. /proc/cpuinfo of a 1024-CPU machine is about 1.5 MiB.
  static constexpr std::size_t kMaxFileBytes = std::size_t{16} << 20;

  /// What a guard does to the calling thread's hwloc calls on its root.
  struct Mode {
    /// Resolve every call inside the root (a root other than "/"; see above).
    bool contain = true;
    /// Answer opens of per-CPU cache and cluster descriptions ENOENT (only when caches are
    /// filtered out and cores or clusters are not wanted).
    bool skip_unused_descriptions = false;
    /// Hand hwloc proc/cpuinfo with its lines cut to what hwloc reads of them (see above).
    bool shorten_cpuinfo = false;
    /// Answer the package mask of a CPU already listed in another CPU's package mask ENOENT,
    /// and the existence check of a CPU's topology directory by the open alone (see above).
    /// Only while hwloc keeps no dies or clusters (it compares those with the package mask):
    /// the probe's filters, and skip_unused_descriptions for clusters.
    bool skip_known_package_siblings = false;
  };

  /// The longest line hwloc's cpuinfo parser reads whole (its fgets() buffer holds 128 bytes).
  static constexpr std::size_t kCpuinfoLineChars = 127;
  /// The size from which cpuinfo is shortened; a shorter one (up to some ten x86 CPUs) is handed
  /// over as it is. hwloc parses it in less time than making the copy takes (the memfd, its
  /// write): hwloc's 2-16-CPU captures ran 2-5 % faster without the copy, the 26 KB cpuinfo of
  /// 24 CPUs 1 % slower, the 115 KB one of 80 CPUs 14 % slower (docs/performance.md, round 14).
  static constexpr std::size_t kShortenFromBytes = std::size_t{16} << 10;

  /// Cuts every line longer than kCpuinfoLineChars to that length (newlines kept) and leaves out
  /// the lines hwloc's cpuinfo parser ignores (see above; the first line is always kept, because
  /// hwloc also reads it alone), for text fed a piece at a time (lines may span pieces).
  class CpuinfoShortener {
   public:
    /// Appends the shortened form of `text`, which continues what was fed before, to `out`.
    /// A line is appended once its newline has been fed.
    void feed(std::string_view text, std::string& out);
    /// Ends the text: appends a last line that has no newline, if it is kept.
    void finish(std::string& out);

    /// Whether hwloc's cpuinfo parser may use `line` (its first kCpuinfoLineChars characters,
    /// without the newline): empty lines (they end a processor's block), and lines whose key
    /// is one of those hwloc 2.9 compares (case-insensitively, a superset of its comparisons).
    static bool hwloc_reads(std::string_view line);

   private:
    // Appends one ended line (its first kCpuinfoLineChars characters) when it is kept.
    void emit(std::string_view line, bool newline, std::string& out);

    std::string line_;        // the current line's first kCpuinfoLineChars characters
    std::size_t column_ = 0;  // characters of the current line fed so far
    bool first_line_ = true;
  };

  /// Guards the calling thread's hwloc calls on `root` until destroyed. Guards do not nest.
  HwlocGuard(const SysRoot& root, Mode mode);
  /// A containing guard that reads everything hwloc asks for.
  explicit HwlocGuard(const SysRoot& root);
  ~HwlocGuard();
  HwlocGuard(const HwlocGuard&) = delete;
  HwlocGuard& operator=(const HwlocGuard&) = delete;

  /// What was refused, one message per path (root-relative), in the order met.
  [[nodiscard]] const std::vector<std::string>& refusals() const { return refusals_; }
  /// Number of calls resolved inside the root (for tests: proof that the guard saw hwloc).
  [[nodiscard]] std::size_t guarded_calls() const { return guarded_calls_; }
  /// Number of cache-description opens answered without a system call.
  [[nodiscard]] std::size_t skipped_calls() const { return skipped_calls_; }
  /// Number of times cpuinfo was handed over shortened.
  [[nodiscard]] std::size_t shortened_cpuinfo() const { return shortened_cpuinfo_; }
  /// Whether the first reading of cpu/online was kept for hwloc's second one (see above).
  [[nodiscard]] bool kept_online() const { return online_copy_.has_value(); }
  /// Number of opens of cpu/online answered from that copy.
  [[nodiscard]] std::size_t reread_from_copy() const { return reread_from_copy_; }
  /// Number of package masks answered ENOENT: CPUs already listed in an earlier CPU's mask.
  [[nodiscard]] std::size_t skipped_siblings() const { return skipped_siblings_; }

  // Used by the interposed functions (hwloc_guard.cpp).
  struct Access;

 private:
  friend struct Access;
  const SysRoot& root_;
  Mode mode_;
  // The descriptor last found to be the root: hwloc opens its root once and names it in every
  // call of the load, so one fstat identifies it. A number reused for another directory (hwloc
  // does not close its root during the load) would only be resolved more strictly, never less.
  int root_fd_ = -1;
  unsigned long long dev_ = 0;
  unsigned long long ino_ = 0;
  bool valid_ = false;
  std::vector<std::string> refusals_;
  std::size_t guarded_calls_ = 0;
  std::size_t skipped_calls_ = 0;
  std::size_t shortened_cpuinfo_ = 0;
  // hwloc's access() checks of cpu0 failed: it is about to read cpu/online, and will again.
  bool online_read_twice_ = false;
  std::optional<std::string> online_copy_;  // what that first reading gave
  std::size_t reread_from_copy_ = 0;
  // The CPUs listed in the package masks read so far, each mask counted only when it lists the
  // CPU it was read for (the kernel's always do).
  CpuSet known_siblings_;
  std::size_t skipped_siblings_ = 0;
};

}  // namespace nodetopo::probes::detail
