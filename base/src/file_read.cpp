#include <array>
#include <cerrno>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodetopo/base/file_read.hpp>
#include <nodetopo/base/str_cat.hpp>

namespace nodetopo {

namespace {

// Closes the descriptor on every return path.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string size_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

Result<std::string> read_regular_file(const std::string& path, std::string_view what,
                                      std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
  const Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)};
  if (f.fd < 0) return errno_error(errno, str_cat("cannot read the ", what), path);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return errno_error(errno, str_cat("cannot read the ", what), path);
  if (!S_ISREG(st.st_mode)) {
    return make_error(ErrorCode::kInvalid,
                      str_cat("the ", what, " is not a regular file: not read"), path);
  }
  const std::string too_big =
      str_cat("the ", what, " is larger than ", size_text(max_bytes), ": not read");
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    return make_error(ErrorCode::kInvalid, too_big, path);
  std::string text;
  std::array<char, 65536> buf{};
  for (;;) {
    const ssize_t n = ::read(f.fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_error(errno, str_cat("cannot read the ", what), path);
    if (n == 0) break;
    text.append(buf.data(), static_cast<std::size_t>(n));
    // A file that grows while read (or lies in st_size) is still bounded.
    if (text.size() > max_bytes) return make_error(ErrorCode::kInvalid, too_big, path);
  }
  return text;
}

}  // namespace nodetopo
