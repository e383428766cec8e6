#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodetopo/mock/sysfs_image.hpp>

namespace nodetopo::mock {

namespace fs = std::filesystem;

void ImageWriter::parents(const std::string& path) {
  std::size_t slash = path.rfind('/');
  while (slash != std::string::npos && slash > 0) {
    if (!image_.dirs.insert(path.substr(0, slash)).second) break;  // its parents are known too
    slash = path.rfind('/', slash - 1);
  }
}

void ImageWriter::claim(const std::string& path) {
  if (image_.files.count(path) != 0 || image_.symlinks.count(path) != 0 ||
      image_.dirs.count(path) != 0) {
    conflicts_.push_back(path);
  }
}

void ImageWriter::file(const std::string& path, std::string content) {
  claim(path);
  parents(path);
  image_.files[path] = std::move(content);
}

void ImageWriter::attr(const std::string& path, std::string_view value) {
  std::string content(value);
  content += '\n';
  file(path, std::move(content));
}

void ImageWriter::link(const std::string& path, const std::string& target) {
  claim(path);
  parents(path);
  image_.symlinks[path] = relative_target(path, target);
}

void ImageWriter::raw_link(const std::string& path, const std::string& target) {
  claim(path);
  parents(path);
  image_.symlinks[path] = target;
}

void ImageWriter::dir(const std::string& path) {
  if (image_.files.count(path) != 0 || image_.symlinks.count(path) != 0) {
    conflicts_.push_back(path);
  }
  parents(path);
  image_.dirs.insert(path);
}

namespace {

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    std::size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    if (end > pos) out.push_back(path.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

}  // namespace

std::string relative_target(const std::string& link, const std::string& target) {
  std::vector<std::string_view> from = components(link);
  if (!from.empty()) from.pop_back();  // the link's own name
  const std::vector<std::string_view> to = components(target);
  std::size_t common = 0;
  while (common < from.size() && common < to.size() && from[common] == to[common])
    ++common;
  // A link to an ancestor goes up past it and back down, as sysfs writes it
  // ("device -> ../../../0000:60:00.0").
  if (common == to.size() && common > 0) --common;
  std::string out;
  for (std::size_t k = common; k < from.size(); ++k)
    out += "../";
  for (std::size_t k = common; k < to.size(); ++k) {
    out += to[k];
    if (k + 1 < to.size()) out += '/';
  }
  return out;
}

std::string hex_id(std::uint32_t value, int digits) {
  std::array<char, 16> buf{};
  std::snprintf(buf.data(), buf.size(), "0x%0*x", digits, value);
  return buf.data();
}

namespace {

Error io_error(const std::string& what, const fs::path& path, int err) {
  return make_error(ErrorCode::kIo, what + ": " + std::strerror(err), path.string());
}

Result<void> write_all(int fd, const std::string& data, const fs::path& path) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("cannot write", path, errno);
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

// Opens directories of the image relative to the root and keeps the last one open: files are
// created with openat() on it, which spares the kernel a full path walk per file (the image is
// sorted, so most files of a directory come in a row).
class DirCache {
 public:
  explicit DirCache(const fs::path& root) : root_(root) {}
  DirCache(const DirCache&) = delete;
  DirCache& operator=(const DirCache&) = delete;
  ~DirCache() { close_current(); }

  // The fd of `dir` (root-relative), or -1 with errno set.
  int get(const std::string& dir) {
    if (fd_ >= 0 && dir == dir_) return fd_;
    close_current();
    const fs::path path = root_ / dir;
    fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    dir_ = dir;
    return fd_;
  }

 private:
  void close_current() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  fs::path root_;
  std::string dir_;
  int fd_ = -1;
};

std::pair<std::string, std::string> split(const std::string& rel) {
  const std::size_t slash = rel.rfind('/');
  if (slash == std::string::npos) return {".", rel};
  return {rel.substr(0, slash), rel.substr(slash + 1)};
}

}  // namespace

Result<void> write_image(const HostImage& image, const fs::path& root) {
  for (const std::string& dir : image.dirs) {
    const fs::path path = root / dir;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      return io_error("cannot create directory", path, errno);
    }
  }
  DirCache dirs(root);
  for (const auto& [rel, content] : image.files) {
    const auto [dir, name] = split(rel);
    const fs::path path = root / rel;
    const int dfd = dirs.get(dir);
    if (dfd < 0) return io_error("cannot open directory", root / dir, errno);
    const int fd = ::openat(dfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return io_error("cannot create file", path, errno);
    auto written = write_all(fd, content, path);
    if (::close(fd) != 0 && written) written = io_error("cannot write", path, errno);
    if (!written) return written.error();
  }
  for (const auto& [rel, target] : image.symlinks) {
    const auto [dir, name] = split(rel);
    const int dfd = dirs.get(dir);
    if (dfd < 0) return io_error("cannot open directory", root / dir, errno);
    if (::symlinkat(target.c_str(), dfd, name.c_str()) != 0) {
      return io_error("cannot create symlink", root / rel, errno);
    }
  }
  return {};
}

}  // namespace nodetopo::mock
