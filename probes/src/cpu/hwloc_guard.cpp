// The guard's libc entry points. See hwloc_guard.hpp for why they exist.
//
// Fortified inline wrappers would clash with definitions of the same functions.
#undef _FORTIFY_SOURCE

#include "cpu/hwloc_guard.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <mntent.h>
#include <stdio_ext.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nodetopo/base/atomic_file.hpp>
#include <nodetopo/probes/parsers.hpp>

#include "io/fd_io.hpp"

namespace nodetopo::probes::detail {

namespace {

// The guard of the thread inside hwloc_topology_load(), if any. hwloc's Linux backend reads from
// the thread that loads the topology, and other threads' calls must not be touched.
thread_local HwlocGuard* t_guard = nullptr;

// libc's own definitions, found past ours.
template <class Fn>
Fn next_symbol(const char* name) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));  // NOLINT: dlsym's type is void*
}

using OpenatFn = int (*)(int, const char*, int, ...);
using FaccessatFn = int (*)(int, const char*, int, int);
using FstatatFn = int (*)(int, const char*, struct stat*, int);
using ReadlinkatFn = ssize_t (*)(int, const char*, char*, std::size_t);
using SetmntentFn = FILE* (*)(const char*, const char*);
using SysconfFn = long (*)(int);

OpenatFn real_openat() {
  static const OpenatFn fn = next_symbol<OpenatFn>("openat");
  return fn;
}
FaccessatFn real_faccessat() {
  static const FaccessatFn fn = next_symbol<FaccessatFn>("faccessat");
  return fn;
}
FstatatFn real_fstatat() {
  static const FstatatFn fn = next_symbol<FstatatFn>("fstatat");
  return fn;
}
ReadlinkatFn real_readlinkat() {
  static const ReadlinkatFn fn = next_symbol<ReadlinkatFn>("readlinkat");
  return fn;
}
SetmntentFn real_setmntent() {
  static const SetmntentFn fn = next_symbol<SetmntentFn>("setmntent");
  return fn;
}
SysconfFn real_sysconf() {
  static const SysconfFn fn = next_symbol<SysconfFn>("sysconf");
  return fn;
}

constexpr const char* kCpuOnline = "sys/devices/system/cpu/online";

std::string_view relative(const char* path) {
  std::string_view rel = path != nullptr ? path : "";
  while (!rel.empty() && rel.front() == '/')
    rel.remove_prefix(1);
  return rel;
}

// `<cpu dir>/cpuN/cache/...` or `<cpu dir>/cpuN/topology/cluster_*`, where <cpu dir> is one of
// the two hwloc 2.9 reads CPUs from (sys/bus/cpu/devices when the kernel has it, else
// sys/devices/system/cpu).
bool is_unused_description(std::string_view rel) {
  for (const std::string_view dir : {std::string_view("sys/bus/cpu/devices/cpu"),
                                     std::string_view("sys/devices/system/cpu/cpu")}) {
    if (!rel.starts_with(dir)) continue;
    std::string_view rest = rel.substr(dir.size());
    std::size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9')
      ++digits;
    if (digits == 0) return false;
    rest.remove_prefix(digits);
    return rest.starts_with("/cache/") || rest == "/cache" ||
           rest.starts_with("/topology/cluster_");
  }
  return false;
}

constexpr std::string_view kCpuDir = "sys/devices/system/cpu/cpu";

// The N of `sys/devices/system/cpu/cpuN` followed by `rest` (the only CPU directory hwloc 2.9's
// look_sysfscpu() reads), or nullopt.
std::optional<std::uint32_t> cpu_followed_by(std::string_view rel,
                                             std::initializer_list<std::string_view> rests) {
  if (!rel.starts_with(kCpuDir)) return std::nullopt;
  rel.remove_prefix(kCpuDir.size());
  std::uint32_t cpu = 0;
  std::size_t digits = 0;
  // Ten digits would pass 2^32: no kernel numbers CPUs that far.
  while (digits < rel.size() && digits < 9 && rel[digits] >= '0' && rel[digits] <= '9')
    cpu = cpu * 10 + static_cast<std::uint32_t>(rel[digits++] - '0');
  if (digits == 0) return std::nullopt;
  rel.remove_prefix(digits);
  for (const std::string_view rest : rests) {
    if (rel == rest) return cpu;
  }
  return std::nullopt;
}

// The CPU whose package mask `rel` is (package_cpus, or core_siblings before Linux 5.x).
std::optional<std::uint32_t> package_mask_cpu(std::string_view rel) {
  return cpu_followed_by(rel, {"/topology/package_cpus", "/topology/core_siblings"});
}

// The CPUs of a mask in the kernel's own form ("000000ff,ffffffff\n": 8-digit hex words,
// commas, one newline at most), which hwloc's parser (sscanf "%lx" word by word) reads the same
// way; nullopt for anything else.
std::optional<CpuSet> kernel_cpumask(std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  if ((text.size() + 1) % 9 != 0) return std::nullopt;
  for (std::size_t comma = 8; comma < text.size(); comma += 9) {
    if (text[comma] != ',') return std::nullopt;
  }
  // Words of 8 characters between the commas: parse_cpumask() takes each as hex digits or
  // refuses the mask.
  auto mask = parse_cpumask(text);
  if (!mask) return std::nullopt;
  return std::move(mask.value());
}

}  // namespace

struct HwlocGuard::Access {
  // The active guard when the call names its root: `dirfd` is the root directory or, for a
  // guard that contains nothing (the root "/", where hwloc opens absolute paths with descriptor
  // -1 instead of a root descriptor), the path is absolute. Else nullptr.
  static HwlocGuard* guarding(int dirfd, const char* path) {
    HwlocGuard* guard = t_guard;
    if (guard == nullptr || !guard->valid_) return nullptr;
    if (!guard->mode_.contain && path != nullptr && path[0] == '/') return guard;
    if (dirfd < 0) return nullptr;
    if (dirfd == guard->root_fd_) return guard;
    struct stat st {};
    if (::fstat(dirfd, &st) != 0) return nullptr;
    if (st.st_dev != guard->dev_ || st.st_ino != guard->ino_) return nullptr;
    guard->root_fd_ = dirfd;
    return guard;
  }

  // `path` as hwloc named it, relative to the root: relative to the root descriptor already, or
  // (a guard containing nothing) absolute, then taken relative to the root's own path. nullopt
  // for an absolute path outside the root.
  static std::optional<std::string_view> root_relative(const HwlocGuard& guard, const char* path) {
    if (path == nullptr) return std::nullopt;
    if (!guard.mode_.contain && path[0] == '/') return below_root(guard, path);
    return relative(path);
  }

  // The absolute `path` relative to the guard's root (as hwloc spells it: the HWLOC_FSROOT
  // string, then '/'), or nullopt when it lies outside.
  static std::optional<std::string_view> below_root(const HwlocGuard& guard, const char* path) {
    const std::string_view root = guard.root_.path().native();
    const std::string_view named = path;
    if (root == "/") return relative(path);
    if (root.empty() || !named.starts_with(root) || named.substr(root.size(), 1) != "/") {
      return std::nullopt;
    }
    return relative(path + root.size());
  }

  // True (errno ENOENT) when the guard answers this call itself: a description it skips.
  static bool skipped(HwlocGuard& guard, const char* path) {
    if (!guard.mode_.skip_unused_descriptions) return false;
    auto rel = root_relative(guard, path);
    if (!rel || !is_unused_description(*rel)) return false;
    ++guard.skipped_calls_;
    errno = ENOENT;
    return true;
  }

  // The active containing guard when `path` lies under its root as hwloc spells it (the
  // HWLOC_FSROOT string, then '/'), with the rest of the path; else nullptr. For the one file
  // hwloc 2.9 opens by name instead of through the root descriptor: `<root>/proc/mounts`, which
  // it hands to setmntent() ("setmntent() doesn't support openat()", topology-linux.c).
  static HwlocGuard* guarding_named(const char* path, std::string_view* rel) {
    HwlocGuard* guard = t_guard;
    if (guard == nullptr || !guard->valid_ || !guard->mode_.contain || path == nullptr) {
      return nullptr;
    }
    const auto below = below_root(*guard, path);
    if (!below) return nullptr;
    *rel = *below;
    return guard;
  }

  // setmntent() for hwloc on a containing guard's root: the file opened as every other hwloc
  // open (inside the root, read-only, non-blocking, a bounded regular file or refused with a
  // warning naming it) and handed over as glibc's setmntent() hands its own stream.
  static FILE* open_mount_table(HwlocGuard& guard, std::string_view rel, const char* mode) {
    const bool read_only = mode != nullptr && std::strpbrk(mode, "wa+") == nullptr;
    int root_fd = guard.root_fd_;
    int opened_root = -1;
    if (root_fd < 0) {
      opened_root = ::open(guard.root_.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (opened_root < 0) return nullptr;
      root_fd = opened_root;
    }
    const int fd = open_file(guard, root_fd, rel, read_only ? O_RDONLY : O_RDWR);
    const int err = errno;
    if (opened_root >= 0) ::close(opened_root);
    if (fd < 0) {
      errno = err;
      return nullptr;
    }
    FILE* stream = ::fdopen(fd, "r");
    if (stream == nullptr) {
      const int fdopen_err = errno;
      ::close(fd);
      errno = fdopen_err;
      return nullptr;
    }
    // As glibc's setmntent(): the stream is read by the caller's thread only.
    ::__fsetlocking(stream, FSETLOCKING_BYCALLER);
    return stream;
  }

  // The CPU whose package mask `path` is, when the guard skips known package siblings: asked once
  // per open, for known_sibling() before it and note_package_mask() after.
  static std::optional<std::uint32_t> package_mask_of(const HwlocGuard& guard, const char* path) {
    if (!guard.mode_.skip_known_package_siblings) return std::nullopt;
    auto rel = root_relative(guard, path);
    return rel ? package_mask_cpu(*rel) : std::nullopt;
  }

  // True (errno ENOENT) when `cpu`'s package mask is one an earlier mask listed it in: the guard
  // answers for hwloc, which would drop that mask unused (see the header).
  static bool known_sibling(HwlocGuard& guard, std::optional<std::uint32_t> cpu) {
    if (!cpu || !guard.known_siblings_.contains(*cpu)) return false;
    ++guard.skipped_siblings_;
    errno = ENOENT;
    return true;
  }

  // After hwloc opened `cpu`'s package mask as `fd`: when it is in the kernel's form and lists
  // `cpu`, its CPUs are known siblings from now on. Read with pread, so hwloc's own read still
  // starts at the beginning; errno is left as the open set it.
  static void note_package_mask(HwlocGuard& guard, std::optional<std::uint32_t> cpu, int fd) {
    if (!cpu || guard.known_siblings_.contains(*cpu)) return;
    const int err = errno;
    // One page holds the mask of 14,000 CPUs; a longer one is left to hwloc alone.
    std::string text(4096, '\0');
    const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
    errno = err;
    if (n <= 0 || static_cast<std::size_t>(n) == text.size()) return;
    text.resize(static_cast<std::size_t>(n));
    auto mask = kernel_cpumask(text);
    if (mask && mask->contains(*cpu)) guard.known_siblings_ |= *mask;
  }

  // Whether the access() check of `path` with `mode` is hwloc's check of a CPU's topology
  // directory, of which look_sysfscpu() uses only whether it failed with ENOENT.
  static bool only_existence_asked(const HwlocGuard& guard, std::string_view rel, int mode) {
    return guard.mode_.skip_known_package_siblings && mode == X_OK &&
           cpu_followed_by(rel, {"/topology"}).has_value();
  }

  static bool is_cpuinfo(const HwlocGuard& guard, const char* path) {
    if (!guard.mode_.shorten_cpuinfo) return false;
    auto rel = root_relative(guard, path);
    return rel && *rel == "proc/cpuinfo";
  }

  // An in-memory copy of what `fd` holds, its lines shortened (CpuinfoShortener), read from
  // the start; `fd` is closed. When the copy cannot be made, or the file is shorter than
  // kShortenFromBytes, `fd` itself, read from the start. Shortened as it is read, 16 KiB at a
  // time: /proc/cpuinfo of a large host is megabytes.
  static int shortened_copy(HwlocGuard& guard, int fd) {
    int copy = -1;
    auto as_it_is = [&] {
      if (copy >= 0) ::close(copy);
      ::lseek(fd, 0, SEEK_SET);  // hwloc reads the file as it is
      return fd;
    };
    // On the heap: hwloc runs on the main thread, whose stack pages, once touched, stay resident.
    std::vector<char> buf(std::size_t{16} << 10);
    // What was read before the copy is made, once kShortenFromBytes are in (procfs may return less
    // than asked before its end: only a read of 0 bytes says there is no more).
    std::string head;
    CpuinfoShortener shortener;
    std::string out;
    std::size_t total = 0;
    for (;;) {
      const ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return as_it_is();
      if (n == 0) break;
      total += static_cast<std::size_t>(n);
      if (total > kMaxFileBytes) return as_it_is();
      std::string_view piece(buf.data(), static_cast<std::size_t>(n));
      if (copy < 0) {
        head.append(piece);
        if (head.size() < kShortenFromBytes) continue;
        copy = ::memfd_create("nodetopo-cpuinfo", MFD_CLOEXEC);
        if (copy < 0) return as_it_is();
        piece = head;
      }
      out.clear();
      shortener.feed(piece, out);
      if (!write_all(copy, out, "the copy of proc/cpuinfo")) return as_it_is();
    }
    if (copy < 0) return as_it_is();  // a small file
    out.clear();
    shortener.finish(out);
    if (!write_all(copy, out, "the copy of proc/cpuinfo")) return as_it_is();
    ::lseek(copy, 0, SEEK_SET);
    ::close(fd);
    ++guard.shortened_cpuinfo_;
    return copy;
  }

  // After a failed access() of `path`: marks the guard when it is the check whose failure sends
  // hwloc 2.9's check_sysfs_cpu_path() to read cpu/online, which look_sysfscpu() then reads
  // again. That is cpu0's thread_siblings, the last cpu0 file it tries (only after
  // package_cpus, core_cpus and core_siblings failed). A failed check of the CPU directory itself
  // also leads to one reading, but hwloc then gives up on sysfs CPUs: no second one. The mark
  // can still be followed by one reading only (the fallback CPU undescribed too): then the
  // copy is made for nothing, a few bytes. errno is left as the failed check set it.
  static void note_failed_access(HwlocGuard& guard, const char* path) {
    const int err = errno;
    auto rel = root_relative(guard, path);
    if (rel && *rel == "sys/devices/system/cpu/cpu0/topology/thread_siblings") {
      guard.online_read_twice_ = true;
    }
    errno = err;
  }

  // An open of cpu/online once hwloc is known to read it twice (note_failed_access()).
  static bool is_online_read_twice(const HwlocGuard& guard, const char* path, int flags) {
    if (!guard.online_read_twice_ || (flags & O_ACCMODE) != O_RDONLY) return false;
    auto rel = root_relative(guard, path);
    return rel && *rel == kCpuOnline;
  }

  // A descriptor reading `text` (cpu/online's content) from the start, backed by no file; -1
  // when none is made.
  static int online_in_memory(std::string_view text) {
    const int fd = ::memfd_create("nodetopo-cpu-online", MFD_CLOEXEC);
    if (fd < 0) return -1;
    if (!write_all(fd, text, "the copy of cpu/online") || ::lseek(fd, 0, SEEK_SET) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }

  // The first reading of cpu/online, from `fd` (closed here), kept, and handed over as a copy.
  // When it cannot be read or copied, `fd` itself, read from the start, and nothing kept.
  static int keep_first_reading(HwlocGuard& guard, int fd) {
    // One byte past the limit, to tell a file of the limit's size from a longer one.
    auto text = read_all(fd, kMaxFileBytes + 1);
    const int copy = text && text->size() <= kMaxFileBytes ? online_in_memory(*text) : -1;
    if (copy < 0) {
      ::lseek(fd, 0, SEEK_SET);
      return fd;
    }
    ::close(fd);
    guard.online_copy_ = std::move(text.value());
    return copy;
  }

  // The kept first reading of cpu/online for hwloc's second open; -1 when there is none (or
  // no descriptor could be made for it): the file is then opened as any other.
  static int kept_reading(HwlocGuard& guard) {
    if (!guard.online_copy_) return -1;
    const int fd = online_in_memory(*guard.online_copy_);
    if (fd >= 0) ++guard.reread_from_copy_;
    return fd;
  }

  static bool kept_online(const HwlocGuard& guard) { return guard.online_copy_.has_value(); }

  // sysconf(_SC_NPROCESSORS_ONLN) asked by hwloc on the live root "/" (see the header): the
  // CPUs of the machine's cpu/online, read once and kept for hwloc's own open of the file, which
  // is then handed the copy. nullopt when the guard does not answer: libc's sysconf() does.
  static std::optional<long> online_cpus(HwlocGuard& guard) {
    if (guard.mode_.contain || !guard.valid_ || guard.root_.path().native() != "/" ||
        guard.online_copy_) {
      return std::nullopt;
    }
    const int err = errno;
    const std::string path = std::string("/") + kCpuOnline;
    const int fd = real_openat()(AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      errno = err;
      return std::nullopt;
    }
    auto text = read_all(fd, kMaxFileBytes + 1);
    ::close(fd);
    errno = err;
    if (!text || text->size() > kMaxFileBytes) return std::nullopt;
    // glibc counts the CPUs of the same list (its ranges never overlap); a list that does not
    // parse is left to libc, which then reads the file itself.
    auto cpus = parse_cpulist(*text);
    if (!cpus || cpus->empty()) return std::nullopt;
    guard.online_copy_ = std::move(text.value());
    guard.online_read_twice_ = true;
    return static_cast<long>(cpus->count());
  }

  static bool contains(const HwlocGuard& guard) { return guard.mode_.contain; }

  static void refuse(HwlocGuard& guard, std::string_view rel, const std::string& why) {
    guard.refusals_.push_back(std::string(rel.empty() ? "." : rel) + ": " + why);
  }

  // Opens `rel` under the root with the kernel keeping every step inside it. -1 with errno set.
  static int open_in_root(HwlocGuard& guard, int dirfd, std::string_view rel, int flags) {
    ++guard.guarded_calls_;
    const std::string path = rel.empty() ? std::string(".") : std::string(rel);
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags) | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    const long fd = ::syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof(how));
    if (fd >= 0) return static_cast<int>(fd);
    const int err = errno;
    if (err != ENOSYS && err != EPERM && err != E2BIG) {
      if (err == ELOOP) refuse(guard, rel, "too many levels of symbolic links");
      if (err == ENXIO) refuse(guard, rel, "a socket or absent device: not read");
      errno = err;
      return -1;
    }
    // No openat2 (Linux before 5.6, or a seccomp profile denying it): the root's own user-space
    // resolution, then an open that follows no link in the last component.
    auto resolved = guard.root_.resolve(path);
    if (!resolved) {
      if (resolved.error().code != ErrorCode::kNotFound) {
        refuse(guard, rel, resolved.error().message);
      }
      errno = resolved.error().code == ErrorCode::kNotFound ? ENOENT : EACCES;
      return -1;
    }
    const std::string target = resolved.value().empty() ? "." : resolved.value();
    return real_openat()(dirfd, target.c_str(), flags | O_CLOEXEC | O_NOFOLLOW);
  }

  // openat() for hwloc: read-only, non-blocking, and only directories and bounded regular files.
  static int open_file(HwlocGuard& guard, int dirfd, std::string_view rel, int flags) {
    if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)) != 0) {
      refuse(guard, rel, "hwloc asked to write");
      errno = EACCES;
      return -1;
    }
    const int fd = open_in_root(guard, dirfd, rel, flags | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return -1;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      errno = err;
      return -1;
    }
    if (S_ISDIR(st.st_mode)) return fd;
    const char* why = nullptr;
    if (!S_ISREG(st.st_mode)) {
      why = "not a regular file (FIFO, socket or device node): not read";
    } else if (static_cast<std::uint64_t>(st.st_size) > kMaxFileBytes) {
      why = "file larger than 16 MiB: not read";
    }
    if (why == nullptr) return fd;
    ::close(fd);
    refuse(guard, rel, why);
    errno = EINVAL;
    return -1;
  }

  // The directory holding the last component of `rel`, opened inside the root, and that
  // component's name: for the calls that must not follow the last link.
  static int open_parent(HwlocGuard& guard, int dirfd, std::string_view rel, std::string* name) {
    const std::size_t slash = rel.rfind('/');
    const std::string_view parent = slash == std::string_view::npos ? "" : rel.substr(0, slash);
    const std::string_view last = slash == std::string_view::npos ? rel : rel.substr(slash + 1);
    // Assigned in one step (not "name, then '.' if empty"): GCC 12 at -O2 reports a false
    // -Wrestrict overlap for the second assignment into the same string.
    name->assign(last.empty() ? std::string_view(".") : last);
    return open_in_root(guard, dirfd, parent, O_PATH | O_DIRECTORY);
  }
};

void HwlocGuard::CpuinfoShortener::feed(std::string_view text, std::string& out) {
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::size_t len = nl == std::string_view::npos ? text.size() : nl;
    if (nl != std::string_view::npos && column_ == 0) {
      // A whole line in this piece (nearly all of them): decided on where it lies, not copied.
      emit(text.substr(0, std::min(len, kCpuinfoLineChars)), true, out);
      text.remove_prefix(nl + 1);
      continue;
    }
    const std::size_t room = kCpuinfoLineChars - std::min(column_, kCpuinfoLineChars);
    line_.append(text.substr(0, std::min(len, room)));
    column_ += len;
    if (nl == std::string_view::npos) break;
    emit(line_, true, out);
    line_.clear();
    column_ = 0;
    text.remove_prefix(nl + 1);
  }
}

void HwlocGuard::CpuinfoShortener::finish(std::string& out) {
  if (column_ == 0) return;
  emit(line_, false, out);
  line_.clear();
  column_ = 0;
}

void HwlocGuard::CpuinfoShortener::emit(std::string_view line, bool newline, std::string& out) {
  if (first_line_ || hwloc_reads(line)) {
    out.append(line);
    if (newline) out.push_back('\n');
  }
  first_line_ = false;
}

bool HwlocGuard::CpuinfoShortener::hwloc_reads(std::string_view line) {
  if (line.empty()) return true;
  // hwloc_linux_parse_cpuinfo() skips a line without ':' or not starting with a letter, and
  // hands the key, trailing blanks cut, to "processor" and to the architecture's parser.
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  const char first = line.front();
  if (!((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z'))) return false;
  std::string_view key = line.substr(0, colon);
  while (!key.empty() && (key.back() == ' ' || key.back() == '\t'))
    key.remove_suffix(1);
  // Every key hwloc 2.9's parsers compare: processor; x86 (vendor_id, model name, model, cpu
  // family, stepping); IA-64 (vendor, family); ARM (Processor, CPU implementer/architecture/
  // variant/part/revision, Hardware, Revision, Serial); POWER (cpu, platform, Board ID, Board,
  // Machine, Hardware rev, SVR, PVR); the generic one (chip type, cpu model).
  // Grouped by length, so that a line is compared with at most six keys of its own length.
  auto is_any = [key](std::initializer_list<std::string_view> keys) {
    for (const std::string_view wanted : keys) {
      bool same = true;
      for (std::size_t i = 0; i < wanted.size() && same; ++i) {
        const char c = key[i];
        same = (c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) == wanted[i];
      }
      if (same) return true;
    }
    return false;
  };
  switch (key.size()) {
    case 3:
      return is_any({"cpu", "svr", "pvr"});
    case 5:
      return is_any({"model", "board"});
    case 6:
      return is_any({"vendor", "family", "serial"});
    case 7:
      return is_any({"machine"});
    case 8:
      return is_any({"stepping", "cpu part", "hardware", "revision", "platform", "board id"});
    case 9:
      return is_any({"processor", "vendor_id", "chip type", "cpu model"});
    case 10:
      return is_any({"model name", "cpu family"});
    case 11:
      return is_any({"cpu variant"});
    case 12:
      return is_any({"cpu revision", "hardware rev"});
    case 15:
      return is_any({"cpu implementer"});
    case 16:
      return is_any({"cpu architecture"});
    default:
      return false;
  }
}

HwlocGuard::HwlocGuard(const SysRoot& root, Mode mode) : root_(root), mode_(mode) {
  struct stat st {};
  if (::stat(root.path().c_str(), &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    valid_ = true;
  }
  t_guard = this;
}

HwlocGuard::HwlocGuard(const SysRoot& root) : HwlocGuard(root, Mode{}) {}

HwlocGuard::~HwlocGuard() {
  t_guard = nullptr;
}

}  // namespace nodetopo::probes::detail

using nodetopo::probes::detail::HwlocGuard;

// The definitions libhwloc's calls bind to. Same signatures as glibc's declarations.
extern "C" int openat(int dirfd, const char* path, int flags, ...) {
  mode_t mode = 0;
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) {
    va_list args;
    va_start(args, flags);
    mode = static_cast<mode_t>(va_arg(args, unsigned));
    va_end(args);
  }
  if (HwlocGuard* guard = HwlocGuard::Access::guarding(dirfd, path)) {
    const std::string_view rel = nodetopo::probes::detail::relative(path);
    if (HwlocGuard::Access::skipped(*guard, path)) return -1;
    const auto mask_cpu = HwlocGuard::Access::package_mask_of(*guard, path);
    if (HwlocGuard::Access::known_sibling(*guard, mask_cpu)) return -1;
    const bool online_read_twice = HwlocGuard::Access::is_online_read_twice(*guard, path, flags);
    if (online_read_twice) {
      if (const int kept = HwlocGuard::Access::kept_reading(*guard); kept >= 0) return kept;
    }
    const int fd = HwlocGuard::Access::contains(*guard)
                       ? HwlocGuard::Access::open_file(*guard, dirfd, rel, flags)
                       : nodetopo::probes::detail::real_openat()(dirfd, path, flags, mode);
    if (fd >= 0 && HwlocGuard::Access::is_cpuinfo(*guard, path)) {
      return HwlocGuard::Access::shortened_copy(*guard, fd);
    }
    if (fd >= 0 && online_read_twice && !HwlocGuard::Access::kept_online(*guard)) {
      return HwlocGuard::Access::keep_first_reading(*guard, fd);
    }
    if (fd >= 0) HwlocGuard::Access::note_package_mask(*guard, mask_cpu, fd);
    return fd;
  }
  return nodetopo::probes::detail::real_openat()(dirfd, path, flags, mode);
}

extern "C" int faccessat(int dirfd, const char* path, int mode, int flags) noexcept {
  HwlocGuard* guard = HwlocGuard::Access::guarding(dirfd, path);
  if (guard != nullptr && HwlocGuard::Access::skipped(*guard, path)) return -1;
  if (guard != nullptr && HwlocGuard::Access::contains(*guard)) {
    if ((mode & W_OK) != 0) {
      errno = EACCES;
      return -1;
    }
    // Existence through a kernel-contained O_PATH open; readability asked of the kernel on that
    // descriptor (faccessat2 with AT_EMPTY_PATH, Linux 5.8), so the file is opened for reading
    // once, by hwloc's own open that follows. Older kernels: a read-only open, nothing read.
    const std::string_view rel = nodetopo::probes::detail::relative(path);
    const int fd = HwlocGuard::Access::open_in_root(*guard, dirfd, rel, O_PATH);
    if (fd < 0) {
      HwlocGuard::Access::note_failed_access(*guard, path);
      return -1;
    }
    int rc = 0;
    if (HwlocGuard::Access::only_existence_asked(*guard, rel, mode)) {
      ::close(fd);
      return 0;
    }
    if ((mode & (R_OK | X_OK)) != 0) {
      rc = static_cast<int>(::syscall(SYS_faccessat2, fd, "", mode, AT_EMPTY_PATH));
      if (rc != 0 && (errno == ENOSYS || errno == EINVAL || errno == EPERM)) {
        const int readable =
            HwlocGuard::Access::open_in_root(*guard, dirfd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY);
        rc = readable < 0 ? -1 : 0;
        if (readable >= 0) ::close(readable);
      }
    }
    const int err = errno;
    ::close(fd);
    if (rc != 0) HwlocGuard::Access::note_failed_access(*guard, path);
    errno = err;
    return rc;
  }
  const int rc = nodetopo::probes::detail::real_faccessat()(dirfd, path, mode, flags);
  if (rc != 0 && guard != nullptr) HwlocGuard::Access::note_failed_access(*guard, path);
  return rc;
}

extern "C" int fstatat(int dirfd, const char* __restrict path, struct stat* __restrict st,
                       int flags) noexcept {
  HwlocGuard* guard = HwlocGuard::Access::guarding(dirfd, path);
  if (guard != nullptr && HwlocGuard::Access::skipped(*guard, path)) return -1;
  if (guard != nullptr && HwlocGuard::Access::contains(*guard)) {
    const std::string_view rel = nodetopo::probes::detail::relative(path);
    int fd = -1;
    if ((flags & AT_SYMLINK_NOFOLLOW) != 0) {
      std::string name;
      const int parent = HwlocGuard::Access::open_parent(*guard, dirfd, rel, &name);
      if (parent < 0) return -1;
      const int rc =
          nodetopo::probes::detail::real_fstatat()(parent, name.c_str(), st, AT_SYMLINK_NOFOLLOW);
      const int err = errno;
      ::close(parent);
      errno = err;
      return rc;
    }
    fd = HwlocGuard::Access::open_in_root(*guard, dirfd, rel, O_PATH);
    if (fd < 0) return -1;
    const int rc = ::fstat(fd, st);
    const int err = errno;
    ::close(fd);
    errno = err;
    return rc;
  }
  return nodetopo::probes::detail::real_fstatat()(dirfd, path, st, flags);
}

extern "C" ssize_t readlinkat(int dirfd, const char* __restrict path, char* __restrict buf,
                              std::size_t len) noexcept {
  HwlocGuard* guard = HwlocGuard::Access::guarding(dirfd, path);
  if (guard != nullptr && HwlocGuard::Access::skipped(*guard, path)) return -1;
  if (guard != nullptr && HwlocGuard::Access::contains(*guard)) {
    std::string name;
    const int parent = HwlocGuard::Access::open_parent(
        *guard, dirfd, nodetopo::probes::detail::relative(path), &name);
    if (parent < 0) return -1;
    const ssize_t n = nodetopo::probes::detail::real_readlinkat()(parent, name.c_str(), buf, len);
    const int err = errno;
    ::close(parent);
    errno = err;
    return n;
  }
  return nodetopo::probes::detail::real_readlinkat()(dirfd, path, buf, len);
}

extern "C" FILE* setmntent(const char* file, const char* mode) noexcept {
  std::string_view rel;
  if (HwlocGuard* guard = HwlocGuard::Access::guarding_named(file, &rel)) {
    return HwlocGuard::Access::open_mount_table(*guard, rel, mode);
  }
  return nodetopo::probes::detail::real_setmntent()(file, mode);
}

// hwloc 2.9 asks the running system's online CPU count on the live root
// (hwloc_gather_system_info() -> hwloc_fallback_nbprocessors()), and glibc's answer reads
// /sys/devices/system/cpu/online, which hwloc's look_sysfscpu() then reads again. Every other
// call, and that one without a guard on the calling thread, goes to libc.
extern "C" long sysconf(int name) noexcept {
  if (name == _SC_NPROCESSORS_ONLN) {
    if (HwlocGuard* guard = nodetopo::probes::detail::t_guard) {
      if (auto n = HwlocGuard::Access::online_cpus(*guard)) return *n;
    }
  }
  return nodetopo::probes::detail::real_sysconf()(name);
}
