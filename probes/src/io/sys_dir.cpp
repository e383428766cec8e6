#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <utility>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nodetopo/probes/sys_dir.hpp>

#include "io/fd_io.hpp"

namespace nodetopo::probes {

namespace {

// The record getdents64 fills (the kernel's struct linux_dirent64; glibc 2.36 has no wrapper).
struct linux_dirent64 {
  std::uint64_t d_ino;
  std::int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

SysDir::EntryType type_from_dirent(unsigned char d_type) {
  switch (d_type) {
    case DT_REG:
      return SysDir::EntryType::kFile;
    case DT_DIR:
      return SysDir::EntryType::kDirectory;
    case DT_LNK:
      return SysDir::EntryType::kLink;
    case DT_UNKNOWN:
      return SysDir::EntryType::kUnknown;
    default:
      return SysDir::EntryType::kOther;
  }
}

}  // namespace

SysDir::SysDir(SysRoot root, std::string rel, int fd)
    : root_(std::move(root)), rel_(std::move(rel)), fd_(fd) {}

SysDir::SysDir(SysDir&& other) noexcept
    : root_(other.root_),
      rel_(std::move(other.rel_)),
      fd_(std::exchange(other.fd_, -1)),
      listed_(other.listed_),
      names_(std::move(other.names_)),
      slots_(std::move(other.slots_)) {}

SysDir& SysDir::operator=(SysDir&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    root_ = other.root_;
    rel_ = std::move(other.rel_);
    fd_ = std::exchange(other.fd_, -1);
    listed_ = other.listed_;
    names_ = std::move(other.names_);
    slots_ = std::move(other.slots_);
  }
  return *this;
}

SysDir::~SysDir() {
  if (fd_ >= 0) ::close(fd_);
}

std::string SysDir::host_path(std::string_view name) const {
  return root_.host_path(rel_ + "/" + std::string(name));
}

void SysDir::list() const {
  if (listed_) return;
  listed_ = true;
  root_.record(rel_, true);
  root_.count(SysRoot::Counter::kDirLists);
  // getdents64 on the directory's own descriptor: opendir() would open it again, fstat it and
  // set its flags, four system calls more per device for nothing.
  // Not value-initialised: zeroing 32 KiB per device directory cost more than the listing.
  alignas(8) std::array<char, 32768> buf;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  while (true) {
    const long n = ::syscall(SYS_getdents64, fd_, buf.data(), buf.size());
    if (n <= 0) break;
    // Names take fewer bytes than their records, and a record takes at least 24 bytes: one
    // allocation each for names and slots, not one per doubling.
    names_.reserve(names_.size() + static_cast<std::size_t>(n));
    slots_.reserve(slots_.size() + static_cast<std::size_t>(n) / 24 + 1);
    for (long off = 0; off < n;) {
      const auto* ent = reinterpret_cast<const linux_dirent64*>(buf.data() + off);
      // The name is NUL-terminated inside the record, past the fixed fields.
      const std::string_view name(buf.data() + off + offsetof(linux_dirent64, d_name));
      if (name != "." && name != "..") {
        // sysfs names are short (NAME_MAX is 255): the 16-bit size always holds them.
        slots_.push_back({static_cast<std::uint32_t>(names_.size()),
                          static_cast<std::uint16_t>(name.size()), type_from_dirent(ent->d_type)});
        names_.append(name);
      }
      off += ent->d_reclen;
    }
    // A buffer this size holds any sysfs device directory: a short batch was the last one.
    if (static_cast<std::size_t>(n) < buf.size() / 2) break;
  }
}

std::vector<SysDir::Entry> SysDir::entries() const {
  list();
  std::vector<Entry> out;
  out.reserve(slots_.size());
  for (const Slot& slot : slots_)
    out.push_back({name_of(slot), slot.type});
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return out;
}

std::optional<SysDir::EntryType> SysDir::type_of(std::string_view name) const {
  list();
  // A linear scan, unsorted: a device directory has some thirty entries and a probe asks for a
  // handful of them; comparing sizes first rejects nearly all without touching the names.
  for (const Slot& slot : slots_) {
    if (slot.size == name.size() && name_of(slot) == name) return slot.type;
  }
  return std::nullopt;
}

Result<int> SysDir::open_regular(std::string_view name) const {
  root_.record(rel_, name);
  root_.count(SysRoot::Counter::kOpens);
  const std::string file(name);
  // Opened directly, not looked up in a listing first: listing a device directory costs more
  // than reading three attributes, and an absent one costs one failed openat. O_NOFOLLOW: a link
  // is resolved by the root, with its escape and loop checks. O_NONBLOCK, O_NOCTTY: a FIFO or
  // terminal planted in a capture neither blocks nor becomes the controlling terminal.
  const int fd =
      ::openat(fd_, file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return make_error(ErrorCode::kNotFound, "no such file", host_path(name));
    }
    if (err == ELOOP) return make_error(ErrorCode::kSymlinkLoop, "a symlink", host_path(name));
    return detail::errno_error(err, "cannot open", host_path(name));
  }
  // sysfs attributes are regular files. Anything else (a FIFO, a device node, a socket, a
  // directory) planted in a capture is refused before a byte of it is read.
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(ErrorCode::kInvalid, "not a regular file", host_path(name));
  }
  return fd;
}

Result<std::string> SysDir::read_file(std::string_view name, std::size_t max_bytes) const {
  auto fd = open_regular(name);
  if (!fd) {
    if (fd.error().code == ErrorCode::kSymlinkLoop) {
      return root_.read_file(rel_ + "/" + std::string(name), max_bytes);
    }
    return fd.error();
  }
  auto content = detail::read_all(*fd, max_bytes);
  ::close(*fd);
  if (!content) {
    Error e = content.error();
    e.path = host_path(name);
    return e;
  }
  return content;
}

std::optional<std::string> SysDir::read_file_below(std::string_view rel,
                                                   std::size_t max_bytes) const {
  root_.record(rel_, rel);
  const int fd = root_.open_checked_at(fd_, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  auto content = detail::read_all(fd, max_bytes);
  ::close(fd);
  if (!content) return std::nullopt;
  return std::move(content.value());
}

Result<SysFile> SysDir::open_file(std::string_view name) const {
  auto fd = open_regular(name);
  if (!fd) {
    Error e = fd.error();
    if (e.code == ErrorCode::kSymlinkLoop) e.code = ErrorCode::kInvalid;
    return e;
  }
  return SysFile(*fd, host_path(name));
}

SysFile::SysFile(SysFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

SysFile& SysFile::operator=(SysFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

SysFile::~SysFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::string> SysFile::read_up_to(std::size_t max_bytes) const {
  std::string content(max_bytes, '\0');
  std::size_t got = 0;
  while (got < max_bytes) {
    auto n = read_at(
        got, std::span(reinterpret_cast<std::uint8_t*>(content.data()) + got, max_bytes - got));
    if (!n) return n.error();
    if (*n == 0) break;
    got += *n;
  }
  content.resize(got);
  return content;
}

Result<std::size_t> SysFile::read_at(std::size_t offset, std::span<std::uint8_t> out) const {
  for (;;) {
    const ssize_t n = ::pread(fd_, out.data(), out.size(), static_cast<off_t>(offset));
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR) return detail::errno_error(errno, "cannot read", path_);
  }
}

Result<std::string> SysDir::read_attr(std::string_view name) const {
  auto content = read_file(name);
  if (!content) return content.error();
  std::string& s = content.value();
  const auto is_space = [](char c) {
    return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\0';
  };
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && is_space(s[b]))
    ++b;
  while (e > b && is_space(s[e - 1]))
    --e;
  return s.substr(b, e - b);
}

// One readlinkat through `fd`, counted and recorded as every read of a SysDir is; the target,
// or -1 with errno set.
ssize_t SysDir::readlink_here(std::string_view name, std::array<char, 4096>& buf) const {
  root_.record(rel_, name);
  root_.count(SysRoot::Counter::kReadlinks);
  const std::string link(name);
  return ::readlinkat(fd_, link.c_str(), buf.data(), buf.size());
}

Result<std::string> SysDir::read_link(std::string_view name) const {
  std::array<char, 4096> buf;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  const ssize_t len = readlink_here(name, buf);
  if (len < 0) {
    if (errno == ENOENT) return make_error(ErrorCode::kNotFound, "no such link", host_path(name));
    if (errno == EINVAL) return make_error(ErrorCode::kInvalid, "not a symlink", host_path(name));
    return detail::errno_error(errno, "cannot read symlink", host_path(name));
  }
  return std::string(buf.data(), static_cast<std::size_t>(len));
}

std::optional<std::string> SysDir::link_if_present(std::string_view name) const {
  std::array<char, 4096> buf;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  const ssize_t len = readlink_here(name, buf);
  if (len < 0) return std::nullopt;
  return std::string(buf.data(), static_cast<std::size_t>(len));
}

std::optional<SysDir> SysDir::open_subdir(std::string_view name) const {
  // A name with '/' would walk further than one component, "." and ".." not downwards.
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos) {
    return std::nullopt;
  }
  root_.record(rel_, name);
  root_.count(SysRoot::Counter::kOpens);
  const std::string sub(name);
  const int fd = ::openat(fd_, sub.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  return SysDir(root_, rel_ + "/" + sub, fd);
}

}  // namespace nodetopo::probes
