#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nodetopo/probes/sys_dir.hpp>
#include <nodetopo/probes/sys_root.hpp>

#include "io/fd_io.hpp"

namespace nodetopo::probes {

namespace {

using detail::errno_error;

// Linux gives up after 40 links in one lookup (MAXSYMLINKS); so do we.
constexpr int kMaxSymlinkHops = 40;

std::deque<std::string> split_path(std::string_view path) {
  std::deque<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    if (end > start) parts.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// True for "a/b/c": relative, no empty, "." or ".." component. Only such a path can be proven
// canonical by a walk that refuses symlinks: "a/link/../b" would pass that walk lexically while
// the user-space walk reads ".." after the link's target.
bool is_plain_relative(std::string_view rel) {
  if (rel.empty() || rel.front() == '/' || rel.back() == '/') return false;
  std::size_t start = 0;
  while (start <= rel.size()) {
    const std::size_t end = std::min(rel.find('/', start), rel.size());
    const std::string_view part = rel.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

// What one lstat (and readlink) told us about a root-relative path. Cached because sysfs lookups
// share long prefixes: every device of a PCI tree resolves the same parent directories.
struct SysRoot::Cache {
  std::mutex mutex;
  std::unordered_map<std::string, PathEntry> entries;
  // Whole paths already resolved (a device link, and the canonical path it led to, which probes
  // then open): one lookup instead of one per component.
  std::unordered_map<std::string, std::string> resolved;
  // Directories a kernel-checked open proved free of symlinks (true) or not (false).
  std::unordered_map<std::string, bool> canonical_dirs;
  // The counters, by Counter, in one slot per reader thread (a thread takes slot
  // thread_slot()): reader threads count every open side by side, and one shared set of
  // counters bounced its cache line between the CPUs at each of them, along with the flags
  // below that every open reads. Summed by stats().
  struct alignas(64) CounterSlot {
    std::array<std::atomic<std::size_t>, 4> by_counter{};
  };
  std::array<CounterSlot, 8> counters{};
  // The read log of record_reads(), under `mutex`; `recording` is read without it.
  std::atomic<bool> recording{false};
  std::set<std::string> read_paths;
  std::set<std::string> listed_dirs;
  // The root directory, for openat2() and for the final open of every resolved path.
  int root_fd = -1;
  // False once openat2() is refused: resolved paths are then opened one component at a time.
  std::atomic<bool> have_openat2{true};
  // Cleared for good once the kernel turns openat2() down (ENOSYS before Linux 5.6, EPERM or
  // ENOSYS from a seccomp filter): one failed call per process, not one per file.
  std::atomic<bool> kernel_checks{false};

  Cache() = default;
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;
  ~Cache() {
    if (root_fd >= 0) ::close(root_fd);
  }
};

SysRoot::SysRoot(std::filesystem::path root, bool live, PathWalk walk)
    : root_(std::move(root)), live_(live), cache_(std::make_shared<Cache>()) {
  root_prefix_ = root_.string();
  if (root_prefix_.empty() || root_prefix_.back() != '/') root_prefix_ += '/';
  // Opened in both walks: whichever resolves a path, the kernel opens it (open_resolved()).
  cache_->root_fd = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  cache_->kernel_checks = walk == PathWalk::kKernelChecked && cache_->root_fd >= 0;
  cache_->have_openat2 = cache_->root_fd >= 0;
}

Result<SysRoot> SysRoot::reopen() const {
  return open(root_, live_ ? Liveness::kLive : Liveness::kCapture,
              checks_paths_in_kernel() ? PathWalk::kKernelChecked : PathWalk::kUserSpace);
}

Result<SysRoot> SysRoot::open(const std::filesystem::path& dir, Liveness liveness, PathWalk walk) {
  if (dir.empty()) {
    return make_error(ErrorCode::kInvalid, "host root path is empty");
  }
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(dir, ec).lexically_normal();
  if (ec) return make_error(ErrorCode::kIo, "cannot make path absolute: " + ec.message(), dir);
  std::string abs = absolute.string();
  while (abs.size() > 1 && abs.back() == '/')
    abs.pop_back();

  struct stat st {};
  if (::stat(abs.c_str(), &st) != 0) {
    return errno_error(errno, "host root is not accessible", abs);
  }
  if (!S_ISDIR(st.st_mode)) {
    return make_error(ErrorCode::kInvalid, "host root is not a directory", abs);
  }
  const std::string sys = (abs == "/" ? std::string() : abs) + "/sys";
  if (::stat(sys.c_str(), &st) != 0 && errno != ENOENT) {
    // EACCES and the like: the directory may well be there; say what the kernel said.
    return errno_error(errno, "cannot access the host root's sys/", sys);
  }
  if (::stat(sys.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return make_error(ErrorCode::kNotFound,
                      "no sys/ directory: a host root must hold the host's sys/ and proc/ "
                      "(pass --root DIR or set HOST_ROOT)",
                      sys);
  }
  const bool live = liveness == Liveness::kLive || (liveness == Liveness::kAuto && abs == "/");
  return SysRoot(std::filesystem::path(abs), live, walk);
}

int SysRoot::open_checked(std::string_view rel, int flags, int* error) const {
  return open_checked_at(cache_->root_fd, rel, flags, error);
}

int SysRoot::open_checked_at(int dir_fd, std::string_view rel, int flags, int* error) const {
  if (error != nullptr) *error = 0;
  if (!cache_->kernel_checks.load(std::memory_order_relaxed) || !is_plain_relative(rel)) return -1;
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags) | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const std::string path(rel);
  count(Counter::kOpens);
  const long fd = ::syscall(SYS_openat2, dir_fd, path.c_str(), &how, sizeof(how));
  if (fd >= 0) return static_cast<int>(fd);
  if (error != nullptr) *error = errno;
  if (errno == ENOSYS || errno == EPERM || errno == E2BIG) {
    cache_->kernel_checks.store(false, std::memory_order_relaxed);
  }
  return -1;
}

int SysRoot::open_resolved(const std::string& rel, int flags) const {
  count(Counter::kOpens);
  if (cache_->root_fd < 0) {
    errno = EBADF;
    return -1;
  }
  const std::string path = rel.empty() ? std::string(".") : rel;
  if (cache_->have_openat2.load(std::memory_order_relaxed)) {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags) | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const long fd = ::syscall(SYS_openat2, cache_->root_fd, path.c_str(), &how, sizeof(how));
    if (fd >= 0) return static_cast<int>(fd);
    if (errno != ENOSYS && errno != EPERM && errno != E2BIG) return -1;
    cache_->have_openat2.store(false, std::memory_order_relaxed);
  }
  // Without openat2: one component at a time, each opened relative to the previous one and
  // refused when it is a link (O_NOFOLLOW): still the kernel that decides, on what it opens.
  int dir = ::openat(cache_->root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  std::deque<std::string> parts = split_path(rel);
  if (parts.empty()) parts.emplace_back(".");
  while (!parts.empty()) {
    const std::string part = std::move(parts.front());
    parts.pop_front();
    if (part == "..") {
      ::close(dir);
      errno = EXDEV;
      return -1;
    }
    const int next_flags = parts.empty() ? flags : (O_PATH | O_DIRECTORY);
    const int next = ::openat(dir, part.c_str(), next_flags | O_NOFOLLOW | O_CLOEXEC);
    const int err = errno;
    ::close(dir);
    if (next < 0) {
      errno = err;
      return -1;
    }
    dir = next;
  }
  return dir;
}

Error SysRoot::open_error(int err, const std::string& what, std::string_view rel) const {
  // The path was resolved without a link a moment ago: the kernel met one now (or a climb out).
  if (err == ELOOP || err == EXDEV) {
    return make_error(ErrorCode::kEscapesRoot,
                      "changed while being read (a component became a symlink): not followed",
                      host_path(rel));
  }
  return errno_error(err, what, host_path(rel));
}

bool SysRoot::is_directory(const std::string& rel) const {
  const int fd = open_resolved(rel, O_PATH | O_DIRECTORY);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

std::string SysRoot::host_path(std::string_view rel) const {
  while (!rel.empty() && rel.front() == '/')
    rel.remove_prefix(1);
  if (rel.empty()) return root_.string();
  return root_prefix_ + std::string(rel);
}

std::string SysRoot::relative(std::string_view path) const {
  if (path.starts_with(root_prefix_)) path.remove_prefix(root_prefix_.size());
  return std::string(path);
}

Result<std::string> SysRoot::resolve(std::string_view rel) const {
  record(rel, false);
  const std::string key(rel);
  {
    std::lock_guard lock(cache_->mutex);
    if (auto it = cache_->resolved.find(key); it != cache_->resolved.end()) return it->second;
  }
  auto result = resolve_impl(rel, /*follow_last=*/true);
  if (result) {
    std::lock_guard lock(cache_->mutex);
    cache_->resolved.emplace(key, result.value());
    cache_->resolved.emplace(result.value(), result.value());
  }
  return result;
}

SysRoot::PathEntry SysRoot::lookup(const std::string& rel) const {
  std::lock_guard lock(cache_->mutex);
  auto it = cache_->entries.find(rel);
  if (it != cache_->entries.end()) return it->second;
  PathEntry entry;
  const std::string full = root_prefix_ + rel;
  // readlink() alone answers both questions sysfs paths ask, in one call: a link (and where to),
  // or EINVAL for an existing non-link; lstat() plus readlink() took two.
  std::array<char, 4096> buf;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  count(Counter::kReadlinks);
  const ssize_t len = ::readlink(full.c_str(), buf.data(), buf.size());
  if (len >= 0) {
    entry.symlink = true;
    entry.target.assign(buf.data(), static_cast<std::size_t>(len));
  } else if (errno != EINVAL) {
    entry.error = errno;
  }
  cache_->entries.emplace(rel, entry);
  return entry;
}

bool SysRoot::is_canonical_dir(const std::string& rel) const {
  {
    std::lock_guard lock(cache_->mutex);
    if (auto it = cache_->canonical_dirs.find(rel); it != cache_->canonical_dirs.end()) {
      return it->second;
    }
  }
  const int fd = open_checked(rel, O_PATH | O_DIRECTORY);
  if (fd >= 0) ::close(fd);
  // Remembered only while the kernel can check: a refusal for want of openat2 says nothing.
  if (fd >= 0 || checks_paths_in_kernel()) {
    std::lock_guard lock(cache_->mutex);
    cache_->canonical_dirs.emplace(rel, fd >= 0);
  }
  return fd >= 0;
}

Result<std::string> SysRoot::resolve_impl(std::string_view rel, bool follow_last) const {
  std::deque<std::string> todo;
  // The resolved prefix, kept as one string: each step appends a component or cuts the last one,
  // so resolving a path of depth d costs O(d) string work, not O(d^2).
  std::string done;
  // A parent directory the kernel proves free of symlinks is resolved as it stands: only the
  // last component is then looked up ("sys/devices/.../net/ib0" + "device"), not every one.
  const std::size_t last_slash = rel.rfind('/');
  if (last_slash != std::string_view::npos && last_slash + 1 < rel.size() &&
      checks_paths_in_kernel() && is_plain_relative(rel.substr(0, last_slash)) &&
      is_canonical_dir(std::string(rel.substr(0, last_slash)))) {
    done = std::string(rel.substr(0, last_slash));
    todo = split_path(rel.substr(last_slash + 1));
  } else {
    todo = split_path(rel);
  }
  auto pop_component = [&done] {
    const std::size_t slash = done.rfind('/');
    done.erase(slash == std::string::npos ? 0 : slash);
  };
  int hops = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.front());
    todo.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      if (done.empty()) {
        return make_error(ErrorCode::kEscapesRoot, "path leads above the host root",
                          host_path(rel));
      }
      // "file/.." is not the directory holding the file: the kernel refuses it, so do we.
      if (!is_directory(done)) {
        return make_error(ErrorCode::kNotFound, "not a directory", host_path(done));
      }
      pop_component();
      continue;
    }
    const std::size_t before = done.size();
    if (!done.empty()) done += '/';
    done += part;
    if (todo.empty() && !follow_last) break;

    const PathEntry entry = lookup(done);
    if (entry.error != 0) return errno_error(entry.error, "cannot resolve", host_path(done));
    if (!entry.symlink) continue;
    if (++hops > kMaxSymlinkHops) {
      return make_error(ErrorCode::kSymlinkLoop, "too many levels of symbolic links",
                        host_path(rel));
    }
    if (!entry.target.empty() && entry.target.front() == '/') {
      // In the live root an absolute link means the same machine; inside a capture it would point
      // at whatever machine runs the tool, so it is refused.
      if (!live_) {
        return make_error(ErrorCode::kEscapesRoot,
                          "absolute symlink to '" + entry.target + "' leaves the host root",
                          host_path(done));
      }
      done.clear();
    } else {
      done.resize(before);  // the link's own name is replaced by its target
    }
    std::deque<std::string> expansion = split_path(entry.target);
    todo.insert(todo.begin(), expansion.begin(), expansion.end());
    // `done` holds no symlink, so the link's leading ".." are its lexical parents. If the rest
    // holds no symlink either (sysfs links lead to real directories), one kernel-checked open
    // proves it, instead of a readlink() per component.
    while (!todo.empty() && todo.front() == ".." && !done.empty()) {
      pop_component();
      todo.pop_front();
    }
    if (follow_last && !todo.empty()) {
      std::string candidate = done;
      for (const std::string& p : todo) {
        if (!candidate.empty()) candidate += '/';
        candidate += p;
      }
      if (const int fd = open_checked(candidate, O_PATH); fd >= 0) {
        ::close(fd);
        return candidate;
      }
    }
  }
  // "file/" names a directory: refused when it is not one, as the kernel would.
  if (follow_last && !rel.empty() && (rel.back() == '/' || rel.ends_with("/.")) &&
      !is_directory(done)) {
    return make_error(ErrorCode::kNotFound, "not a directory", host_path(rel));
  }
  return done;
}

Result<std::string> SysRoot::read_file(std::string_view rel, std::size_t max_bytes) const {
  record(rel, false);
  // Resolve the directories, then open the last component without following it: a regular
  // attribute costs one open(). O_NONBLOCK: a FIFO planted in a capture must not hang the probe
  // (sysfs and regular files ignore the flag). Only when that last component is itself a link
  // (ELOOP) is it resolved and opened again.
  int err = 0;
  if (const int fd = open_checked(rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, &err); fd >= 0) {
    return read_regular(fd, max_bytes, rel);
  }
  // The kernel walked every component up to the missing one without meeting a symlink: the
  // user-space walk would find it missing too.
  if (err == ENOENT) return errno_error(err, "cannot open", host_path(rel));
  auto parent = resolve_impl(rel, /*follow_last=*/false);
  if (!parent) return parent.error();
  // Opened by the kernel, refusing any link on the way: a directory swapped for a symlink after
  // the walk above is refused, not followed. Only when the last component is itself a link
  // (ELOOP) is it resolved and opened again.
  constexpr int kFlags = O_RDONLY | O_NONBLOCK | O_NOCTTY;
  int fd = open_resolved(parent.value(), kFlags);
  if (fd < 0 && errno == ELOOP) {
    auto target = resolve(rel);
    if (!target) return target.error();
    fd = open_resolved(target.value(), kFlags);
  }
  if (fd < 0) return open_error(errno, "cannot open", rel);
  return read_regular(fd, max_bytes, rel);
}

Result<std::string> SysRoot::read_regular(int fd, std::size_t max_bytes,
                                          std::string_view rel) const {
  // Only regular files are read: a FIFO, socket or device node planted in a capture (or a
  // directory) is refused before a byte is read, naming the path.
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(ErrorCode::kInvalid,
                      S_ISDIR(st.st_mode) ? "is a directory, not a file"
                                          : "not a regular file (FIFO, socket or device node)",
                      host_path(rel));
  }
  return detail::read_and_close(fd, max_bytes, [&] { return host_path(rel); });
}

Result<std::string> SysRoot::read_attr(std::string_view rel) const {
  auto content = read_file(rel);
  if (!content) return content.error();
  std::string& s = content.value();
  const auto not_space = [](unsigned char c) {
    return c != ' ' && c != '\n' && c != '\t' && c != '\r' && c != '\0';
  };
  const auto first = std::find_if(s.begin(), s.end(), not_space);
  const auto last = std::find_if(s.rbegin(), s.rend(), not_space).base();
  if (first >= last) return std::string();
  return std::string(first, last);
}

Result<std::vector<std::string>> SysRoot::list_dir(std::string_view rel) const {
  record(rel, true);
  if (auto dir = open_canonical_dir(rel)) {
    std::vector<std::string> names;
    for (const SysDir::Entry& entry : dir->entries())
      names.emplace_back(entry.name);
    return names;
  }
  auto resolved = resolve(rel);
  if (!resolved) return resolved.error();
  count(Counter::kDirLists);
  const int fd = open_resolved(resolved.value(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return open_error(errno, "cannot list directory", rel);
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return errno_error(errno, "cannot list directory", host_path(rel));
  }
  std::vector<std::string> names;
  while (const dirent* ent = ::readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): one DIR per call
    const std::string_view name = ent->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> SysRoot::read_link(std::string_view rel) const {
  record(rel, false);
  auto parent = resolve_impl(rel, /*follow_last=*/false);
  if (!parent) return parent.error();
  const PathEntry entry = lookup(parent.value());
  if (entry.error != 0) return errno_error(entry.error, "cannot read symlink", host_path(rel));
  if (!entry.symlink) return make_error(ErrorCode::kInvalid, "not a symlink", host_path(rel));
  return entry.target;
}

bool SysRoot::exists(std::string_view rel) const {
  // First one kernel-checked open: a plain path without a link on the way is answered by it
  // (found; or ENOENT/ENOTDIR, missing, since the kernel refuses a link it meets with ELOOP before
  // it can miss anything beyond). Only a refusal is resolved in full, links followed inside the
  // root. The question is asked at every start (`--root` asks for nodetopo-mock/), and the full
  // resolution of a missing path builds the error message resolve() returns.
  int error = 0;
  const int fd = open_checked(rel, O_PATH, &error);
  if (fd >= 0) {
    ::close(fd);
    record(rel, false);
    return true;
  }
  if (error == ENOENT || error == ENOTDIR) {
    record(rel, false);
    return false;
  }
  return resolve(rel).ok();
}

namespace {

// The counter slot of the calling thread: threads take the slots in turn as they first count.
std::size_t thread_slot(std::size_t slots) {
  static std::atomic<std::size_t> next{0};
  thread_local const std::size_t slot = next.fetch_add(1, std::memory_order_relaxed);
  return slot % slots;
}

}  // namespace

void SysRoot::count(Counter counter) const {
  auto& slot = cache_->counters[thread_slot(cache_->counters.size())];
  slot.by_counter[static_cast<std::size_t>(counter)].fetch_add(1, std::memory_order_relaxed);
}

Result<SysDir> SysRoot::open_dir(std::string_view rel) const {
  record(rel, false);
  if (auto dir = open_canonical_dir(rel)) return std::move(*dir);
  auto resolved = resolve(rel);
  if (!resolved) return resolved.error();
  const int fd = open_resolved(resolved.value(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return open_error(errno, "cannot open directory", rel);
  return SysDir(*this, std::move(resolved.value()), fd);
}

bool SysRoot::checks_paths_in_kernel() const {
  return cache_->kernel_checks.load(std::memory_order_relaxed);
}

std::optional<SysDir> SysRoot::open_canonical_dir(std::string_view rel) const {
  record(rel, false);
  const int fd = open_checked(rel, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return std::nullopt;
  return SysDir(*this, std::string(rel), fd);
}

void SysRoot::record(std::string_view rel, bool listed) const {
  if (!cache_->recording.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(cache_->mutex);
  (listed ? cache_->listed_dirs : cache_->read_paths).emplace(rel);
}

void SysRoot::record(std::string_view dir, std::string_view name) const {
  if (!cache_->recording.load(std::memory_order_relaxed)) return;
  std::string rel;
  rel.reserve(dir.size() + 1 + name.size());
  rel.append(dir).append("/").append(name);
  std::lock_guard lock(cache_->mutex);
  cache_->read_paths.emplace(std::move(rel));
}

void SysRoot::record_reads() const {
  cache_->recording.store(true, std::memory_order_relaxed);
}

SysRoot::ReadLog SysRoot::read_log() const {
  std::lock_guard lock(cache_->mutex);
  return ReadLog{.paths = {cache_->read_paths.begin(), cache_->read_paths.end()},
                 .listed_dirs = {cache_->listed_dirs.begin(), cache_->listed_dirs.end()}};
}

SysRoot::Stats SysRoot::stats() const {
  const auto get = [this](Counter counter) {
    std::size_t sum = 0;
    for (const Cache::CounterSlot& slot : cache_->counters)
      sum += slot.by_counter[static_cast<std::size_t>(counter)].load(std::memory_order_relaxed);
    return sum;
  };
  return Stats{.opens = get(Counter::kOpens),
               .lstats = get(Counter::kLstats),
               .readlinks = get(Counter::kReadlinks),
               .dir_lists = get(Counter::kDirLists)};
}

}  // namespace nodetopo::probes
