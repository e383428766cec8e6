#include "io/fd_io.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <unistd.h>

namespace nodetopo::probes::detail {

namespace {

ErrorCode code_from_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return ErrorCode::kNotFound;
    case EACCES:
    case EPERM:
      return ErrorCode::kPermission;
    case ELOOP:
      return ErrorCode::kSymlinkLoop;
    default:
      return ErrorCode::kIo;
  }
}

}  // namespace

Error errno_error(int err, const std::string& what, std::string path) {
  return make_error(code_from_errno(err), what + ": " + std::strerror(err), std::move(path));
}

Result<std::string> read_all(int fd, std::size_t max_bytes) {
  // Into a stack buffer left uninitialised (zeroing 4 KiB per attribute cost more than the read)
  // and appended: sysfs attributes are a few bytes, returned whole by one read.
  std::string content;
  std::array<char, 4096> buf;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  while (content.size() < max_bytes) {
    const std::size_t want = std::min(buf.size(), max_bytes - content.size());
    const ssize_t got = ::read(fd, buf.data(), want);
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno_error(errno, "cannot read", {});
    }
    content.append(buf.data(), static_cast<std::size_t>(got));
    // A short read is the end: sysfs returns an attribute in one read, and regular files only
    // come up short at their end. Stopping here spares the read() that would return 0.
    if (got == 0 || static_cast<std::size_t>(got) < want) break;
  }
  return content;
}

Result<std::string> read_and_close_unnamed(int fd, std::size_t max_bytes) {
  auto content = read_all(fd, max_bytes);
  ::close(fd);
  return content;
}
}  // namespace nodetopo::probes::detail
