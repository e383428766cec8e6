#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include <nodetopo/base/atomic_file.hpp>

namespace nodetopo {

namespace {

Result<void> write_all(int fd, std::string_view content, const std::string& what) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error(errno, "write failed", what);
    }
    content.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

}  // namespace

Result<void> write_stdout(std::string_view content) {
  std::fflush(stdout);
  return write_all(STDOUT_FILENO, content, "standard output");
}

Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view content,
                               unsigned mode) {
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  // A dot-file: NFD and most directory watchers skip hidden files.
  const std::string tmp =
      (dir / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()))).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                        static_cast<mode_t>(mode));
  if (fd < 0) {
    return errno_error(errno, "cannot create temporary file", tmp);
  }
  Result<void> written = write_all(fd, content, tmp);
  if (written && ::fsync(fd) != 0) {
    written = errno_error(errno, "fsync failed", tmp);
  }
  if (::close(fd) != 0 && written) {
    written = errno_error(errno, "close failed", tmp);
  }
  if (written && ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    written = errno_error(err, "rename failed", path.string());
  }
  if (!written) ::unlink(tmp.c_str());
  return written;
}

}  // namespace nodetopo
