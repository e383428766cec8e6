#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
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
  Stats stats;
  // The root directory, for openat2(); -1 when kernel-checked opens are off.
  int root_fd = -1;
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
  if (walk == PathWalk::kKernelChecked) {
    cache_->root_fd = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    cache_->kernel_checks = cache_->root_fd >= 0;
  }
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
  if (error != nullptr) *error = 0;
  if (!cache_->kernel_checks.load(std::memory_order_relaxed) || !is_plain_relative(rel)) return -1;
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags) | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const std::string path(rel);
  count(&Stats::opens);
  const long fd = ::syscall(SYS_openat2, cache_->root_fd, path.c_str(), &how, sizeof(how));
  if (fd >= 0) return static_cast<int>(fd);
  if (error != nullptr) *error = errno;
  if (errno == ENOSYS || errno == EPERM || errno == E2BIG) {
    cache_->kernel_checks.store(false, std::memory_order_relaxed);
  }
  return -1;
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
  ++cache_->stats.readlinks;
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
  return done;
}

Result<std::string> SysRoot::read_file(std::string_view rel, std::size_t max_bytes) const {
  // Resolve the directories, then open the last component without following it: a regular
  // attribute costs one open(). O_NONBLOCK: a FIFO planted in a capture must not hang the probe
  // (sysfs and regular files ignore the flag). Only when that last component is itself a link
  // (ELOOP) is it resolved and opened again.
  int err = 0;
  if (const int fd = open_checked(rel, O_RDONLY | O_NONBLOCK, &err); fd >= 0) {
    return detail::read_and_close(fd, max_bytes, [&] { return host_path(rel); });
  }
  // The kernel walked every component up to the missing one without meeting a symlink: the
  // user-space walk would find it missing too.
  if (err == ENOENT) return errno_error(err, "cannot open", host_path(rel));
  auto parent = resolve_impl(rel, /*follow_last=*/false);
  if (!parent) return parent.error();
  std::string full = root_prefix_ + parent.value();
  {
    std::lock_guard lock(cache_->mutex);
    ++cache_->stats.opens;
  }
  int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0 && errno == ELOOP) {
    auto target = resolve(rel);
    if (!target) return target.error();
    full = root_prefix_ + target.value();
    std::lock_guard lock(cache_->mutex);
    ++cache_->stats.opens;
    fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  }
  if (fd < 0) return errno_error(errno, "cannot open", host_path(rel));
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
  if (auto dir = open_canonical_dir(rel)) {
    std::vector<std::string> names;
    for (const SysDir::Entry& entry : dir->entries())
      names.emplace_back(entry.name);
    return names;
  }
  auto resolved = resolve(rel);
  if (!resolved) return resolved.error();
  const std::string full = root_prefix_ + resolved.value();
  {
    std::lock_guard lock(cache_->mutex);
    ++cache_->stats.dir_lists;
  }
  DIR* dir = ::opendir(full.c_str());
  if (dir == nullptr) return errno_error(errno, "cannot list directory", host_path(rel));
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
  auto parent = resolve_impl(rel, /*follow_last=*/false);
  if (!parent) return parent.error();
  const PathEntry entry = lookup(parent.value());
  if (entry.error != 0) return errno_error(entry.error, "cannot read symlink", host_path(rel));
  if (!entry.symlink) return make_error(ErrorCode::kInvalid, "not a symlink", host_path(rel));
  return entry.target;
}

bool SysRoot::exists(std::string_view rel) const {
  return resolve(rel).ok();
}

void SysRoot::count(std::size_t Stats::*counter) const {
  std::lock_guard lock(cache_->mutex);
  ++(cache_->stats.*counter);
}

Result<SysDir> SysRoot::open_dir(std::string_view rel) const {
  if (auto dir = open_canonical_dir(rel)) return std::move(*dir);
  auto resolved = resolve(rel);
  if (!resolved) return resolved.error();
  count(&Stats::opens);
  const std::string full = root_prefix_ + resolved.value();
  const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW);
  if (fd < 0) return errno_error(errno, "cannot open directory", host_path(rel));
  return SysDir(*this, std::move(resolved.value()), fd);
}

bool SysRoot::checks_paths_in_kernel() const {
  return cache_->kernel_checks.load(std::memory_order_relaxed);
}

std::optional<SysDir> SysRoot::open_canonical_dir(std::string_view rel) const {
  const int fd = open_checked(rel, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return std::nullopt;
  return SysDir(*this, std::string(rel), fd);
}

SysRoot::Stats SysRoot::stats() const {
  std::lock_guard lock(cache_->mutex);
  return cache_->stats;
}

}  // namespace nodetopo::probes
