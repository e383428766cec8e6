#include "capture_archive.hpp"

#include <array>
#include <cerrno>
#include <memory>
#include <utility>
#include <vector>

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nodetopo::cli {

namespace {

namespace fs = std::filesystem;

// Link hops on one path, as the kernel's and SysRoot's limit.
constexpr int kMaxHops = 40;
// The largest file stored: sysfs attributes are one page, proc/cpuinfo of a large machine some
// hundred KiB; a file bigger than this is no attribute a probe reads.
constexpr std::size_t kMaxFileBytes = std::size_t{8} << 20;

std::vector<std::string> components(std::string_view rel) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= rel.size()) {
    const std::size_t slash = rel.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? rel.size() : slash;
    const std::string_view part = rel.substr(start, end - start);
    if (!part.empty() && part != ".") parts.emplace_back(part);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to; ++i) {
    if (!out.empty()) out += '/';
    out += parts[i];
  }
  return out;
}

// Reads a whole file without blocking (a FIFO in a capture, a sysfs file that never ends);
// empty when it cannot be read (a write-only attribute): the entry then still exists, as the
// probe saw it in its directory.
std::string read_content(const fs::path& full) {
  const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return {};
  std::string out;
  std::array<char, 65536> buf{};
  while (out.size() < kMaxFileBytes) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

struct ArchiveDeleter {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryDeleter {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

la_ssize_t append_to_string(archive* /*a*/, void* client, const void* buffer, size_t length) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

}  // namespace

CaptureTree::CaptureTree(fs::path root, bool live) : root_(std::move(root)), live_(live) {}

void CaptureTree::add_path(std::string_view rel) {
  (void)add(std::string(rel), 0);
}

std::optional<std::string> CaptureTree::add(const std::string& rel, int hops) {
  const std::vector<std::string> parts = components(rel);
  std::string cur;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == "..") return std::nullopt;  // not canonical: SysRoot resolves these itself
    if (!cur.empty()) cur += '/';
    cur += parts[i];
    const fs::path full = root_ / cur;
    struct stat st {};
    if (::lstat(full.c_str(), &st) != 0) return std::nullopt;
    if (S_ISLNK(st.st_mode)) {
      std::array<char, 4096> buf{};
      const ssize_t len = ::readlink(full.c_str(), buf.data(), buf.size());
      if (len <= 0) return std::nullopt;
      std::string target(buf.data(), static_cast<std::size_t>(len));
      entries_[cur] = Entry{.kind = Kind::kLink, .data = target};
      if (hops >= kMaxHops) return std::nullopt;
      // Where the link leads, root-relative: relative targets from the link's folder, absolute
      // ones from the root itself, and only on a live root (SysRoot refuses them elsewhere).
      fs::path next;
      if (!target.empty() && target.front() == '/') {
        if (!live_) return std::nullopt;
        next = fs::path(target.substr(1)).lexically_normal();
      } else {
        next = (fs::path(cur).parent_path() / target).lexically_normal();
      }
      const std::string next_rel = next.string();
      if (next_rel == ".." || next_rel.rfind("../", 0) == 0) return std::nullopt;  // leaves root
      std::string rest = join(parts, i + 1, parts.size());
      std::string joined = next_rel == "." ? std::string() : next_rel;
      if (!rest.empty()) joined += joined.empty() ? rest : "/" + rest;
      return add(joined, hops + 1);
    }
    const bool last = i + 1 == parts.size();
    if (S_ISDIR(st.st_mode)) {
      entries_.try_emplace(cur, Entry{.kind = Kind::kDir, .data = {}});
      continue;
    }
    if (!last || !S_ISREG(st.st_mode)) return std::nullopt;  // a FIFO, a device: nothing to keep
    add_file(cur, full);
  }
  return cur;
}

void CaptureTree::add_file(const std::string& rel, const fs::path& full) {
  auto it = entries_.find(rel);
  if (it != entries_.end() && it->second.kind == Kind::kFile) return;  // read once
  entries_[rel] = Entry{.kind = Kind::kFile, .data = read_content(full)};
}

void CaptureTree::add_listing(std::string_view rel) {
  const std::optional<std::string> dir = add(std::string(rel), 0);
  if (dir) add_below(*dir, 1, false);
}

void CaptureTree::add_tree(std::string_view rel, int depth) {
  const std::optional<std::string> top = add(std::string(rel), 0);
  if (top) add_below(*top, depth, true);
}

void CaptureTree::add_below(const std::string& rel, int depth, bool read_files) {
  if (depth <= 0) return;
  const fs::path full = root_ / rel;
  DIR* d = ::opendir(full.c_str());
  if (d == nullptr) return;
  std::vector<std::string> names;
  while (const dirent* ent = ::readdir(d)) {  // NOLINT(concurrency-mt-unsafe): one DIR per call
    const std::string_view name = ent->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(d);
  for (const std::string& name : names) {
    const std::string child = rel.empty() ? name : rel + "/" + name;
    struct stat st {};
    if (::lstat((full / name).c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      std::array<char, 4096> buf{};
      const ssize_t len = ::readlink((full / name).c_str(), buf.data(), buf.size());
      if (len > 0) {
        entries_[child] = Entry{.kind = Kind::kLink,
                                .data = std::string(buf.data(), static_cast<std::size_t>(len))};
      }
    } else if (S_ISDIR(st.st_mode)) {
      entries_.try_emplace(child, Entry{.kind = Kind::kDir, .data = {}});
      add_below(child, depth - 1, read_files);
    } else if (S_ISREG(st.st_mode)) {
      if (read_files) {
        add_file(child, full / name);
      } else {
        entries_.try_emplace(child, Entry{.kind = Kind::kPlaceholder, .data = {}});
      }
    }
  }
}

void CaptureTree::add_extra(const std::string& rel, std::string content) {
  entries_[rel] = Entry{.kind = Kind::kFile, .data = std::move(content)};
}

std::size_t CaptureTree::files() const {
  std::size_t n = 0;
  for (const auto& [path, entry] : entries_)
    n += entry.kind == Kind::kFile ? 1 : 0;
  return n;
}

std::size_t CaptureTree::links() const {
  std::size_t n = 0;
  for (const auto& [path, entry] : entries_)
    n += entry.kind == Kind::kLink ? 1 : 0;
  return n;
}

Result<std::string> CaptureTree::archive(const std::string& top) const {
  std::unique_ptr<::archive, ArchiveDeleter> a(archive_write_new());
  if (!a) return make_error(ErrorCode::kIo, "libarchive: out of memory");
  std::string out;
  const auto failed = [&](const std::string& what) {
    const char* why = archive_error_string(a.get());
    std::string message = "libarchive: ";
    message += what;
    message += ": ";
    message += why != nullptr ? why : "?";
    return make_error(ErrorCode::kIo, std::move(message));
  };
  // pax: sysfs paths and link targets are longer than ustar's 100 bytes.
  if (archive_write_set_format_pax_restricted(a.get()) != ARCHIVE_OK) return failed("pax format");
  if (archive_write_add_filter_gzip(a.get()) != ARCHIVE_OK) return failed("gzip filter");
  // No timestamp in the gzip header, so the same tree gives the same bytes.
  archive_write_set_filter_option(a.get(), "gzip", "timestamp", nullptr);
  if (archive_write_open(a.get(), &out, nullptr, append_to_string, nullptr) != ARCHIVE_OK) {
    return failed("open");
  }
  std::unique_ptr<archive_entry, EntryDeleter> e(archive_entry_new());
  const auto write = [&](const std::string& path, const Entry& entry) -> bool {
    archive_entry_clear(e.get());
    archive_entry_set_pathname(e.get(), path.c_str());
    archive_entry_set_mtime(e.get(), 0, 0);
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    switch (entry.kind) {
      case Kind::kDir:
        archive_entry_set_filetype(e.get(), AE_IFDIR);
        archive_entry_set_perm(e.get(), 0755);
        break;
      case Kind::kLink:
        archive_entry_set_filetype(e.get(), AE_IFLNK);
        archive_entry_set_perm(e.get(), 0777);
        archive_entry_set_symlink(e.get(), entry.data.c_str());
        break;
      case Kind::kFile:
      case Kind::kPlaceholder:
        archive_entry_set_filetype(e.get(), AE_IFREG);
        archive_entry_set_perm(e.get(), 0644);
        archive_entry_set_size(e.get(), static_cast<la_int64_t>(entry.data.size()));
        break;
    }
    if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK) return false;
    if (!entry.data.empty() && entry.kind != Kind::kLink) {
      if (archive_write_data(a.get(), entry.data.data(), entry.data.size()) < 0) return false;
    }
    return true;
  };
  if (!write(top, Entry{})) return failed("write " + top);
  for (const auto& [path, entry] : entries_) {
    const std::string name = top + "/" + path;
    if (!write(name, entry)) return failed("write " + name);
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) return failed("close");
  return out;
}

}  // namespace nodetopo::cli
