#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include <nodetopo/exporters/sinks.hpp>

namespace nodetopo::exporters {

namespace {

Result<void> write_all(int fd, std::string_view content, const std::string& what) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(ErrorCode::kIo, std::string("write failed: ") + std::strerror(errno), what);
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
    return make_error(ErrorCode::kIo,
                      std::string("cannot create temporary file: ") + std::strerror(errno), tmp);
  }
  Result<void> written = write_all(fd, content, tmp);
  if (written && ::fsync(fd) != 0) {
    written = make_error(ErrorCode::kIo, std::string("fsync failed: ") + std::strerror(errno), tmp);
  }
  if (::close(fd) != 0 && written) {
    written = make_error(ErrorCode::kIo, std::string("close failed: ") + std::strerror(errno), tmp);
  }
  if (written && ::rename(tmp.c_str(), path.c_str()) != 0) {
    written = make_error(ErrorCode::kIo, std::string("rename failed: ") + std::strerror(errno),
                         path.string());
  }
  if (!written) ::unlink(tmp.c_str());
  return written;
}

}  // namespace nodetopo::exporters
