#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodetopo/base/atomic_file.hpp>

namespace nodetopo {

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

namespace {

// Writes into an existing non-regular file (a terminal, /dev/null, a FIFO with a reader) as it
// is, without replacing it. A FIFO without a reader is refused (O_NONBLOCK: ENXIO), not waited on.
Result<void> write_in_place(const std::filesystem::path& path, std::string_view content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ENXIO) {
      return make_error(ErrorCode::kIo, "FIFO has no reader: not written", path.string());
    }
    return errno_error(err, "cannot open for writing", path.string());
  }
  // Blocking from here on: a pipe with a reader takes the whole document.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  Result<void> written = write_all(fd, content, path.string());
  if (::close(fd) != 0 && written) {
    written = errno_error(errno, "close failed", path.string());
  }
  return written;
}

// A temporary dot-file next to `path` with a name nobody can predict, created by this call
// (O_EXCL | O_NOFOLLOW): a file, link or hard link planted under a guessed name is never opened.
int create_temporary(const std::filesystem::path& path, unsigned mode, std::string* name) {
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::array<unsigned char, 8> random{};
    if (::getrandom(random.data(), random.size(), 0) != static_cast<ssize_t>(random.size())) {
      return -1;
    }
    std::string suffix;
    for (unsigned char byte : random) {
      constexpr std::string_view kHex = "0123456789abcdef";
      suffix += kHex[byte >> 4U];
      suffix += kHex[byte & 15U];
    }
    // A dot-file: NFD and most directory watchers skip hidden files.
    // Appended, not a chain of operator+: GCC 12 warns falsely (-Wrestrict) about "." + string.
    std::string file = ".";
    file += path.filename().string();
    file += ".tmp.";
    file += suffix;
    *name = (dir / file).string();
    const int fd = ::open(name->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                          static_cast<mode_t>(mode));
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// Writes a new file and renames it over `path`.
Result<void> replace_file(const std::filesystem::path& path, std::string_view content,
                          unsigned mode) {
  std::string tmp;
  const int fd = create_temporary(path, mode, &tmp);
  if (fd < 0) {
    return errno_error(errno, "cannot create temporary file", tmp.empty() ? path.string() : tmp);
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

}  // namespace

Result<void> write_stdout(std::string_view content) {
  std::fflush(stdout);
  return write_all(STDOUT_FILENO, content, "standard output");
}

Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view content,
                               unsigned mode) {
  // "-" and /dev/stdout mean standard output: replacing /dev/stdout (a link into /proc) would
  // destroy the link, and reopening it would write over a redirected file from its start.
  if (path == "-" || path == "/dev/stdout" || path == "/proc/self/fd/1") {
    return write_stdout(content);
  }
  if (path.empty()) return make_error(ErrorCode::kInvalid, "output path is empty");
  // What is there now decides how it is written: a link is followed to the file it names (the
  // link stays), a non-regular file (a device, a FIFO, a socket) is written in place, never
  // replaced, and only a regular file or nothing is replaced by a rename.
  std::filesystem::path target = path;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    target = std::filesystem::weakly_canonical(std::filesystem::absolute(path), ec);
    if (ec) {
      return make_error(ErrorCode::kIo, "cannot resolve the output link: " + ec.message(),
                        path.string());
    }
  }
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return make_error(ErrorCode::kInvalid, "output path is a directory", path.string());
    }
    if (!S_ISREG(st.st_mode)) return write_in_place(path, content);
  }
  return replace_file(target, content, mode);
}

}  // namespace nodetopo
