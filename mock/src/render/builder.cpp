#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodetopo/mock/builder.hpp>
#include <nodetopo/mock/profiles.hpp>

#include "plan/plan.hpp"
#include "render/image.hpp"
#include "render/writers.hpp"

namespace nodetopo::mock {

namespace fs = std::filesystem;

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

// Writes an image below an existing, empty directory.
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

bool directory_empty(const fs::path& dir) {
  std::error_code ec;
  return fs::directory_iterator(dir, ec) == fs::directory_iterator();
}

// mkdtemp on a pattern ending in XXXXXX; the directory has mode 0700.
Result<fs::path> make_temp_dir(const fs::path& pattern) {
  std::string buf = pattern.string();
  if (::mkdtemp(buf.data()) == nullptr) {
    return io_error("cannot create a temporary directory", pattern.parent_path(), errno);
  }
  return fs::path(buf);
}

void remove_tree(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

fs::path temp_base() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read once, no concurrent setenv in the builder
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? fs::path(tmp) : fs::path("/tmp");
}

}  // namespace

Result<HostImage> render_host(const Profile& profile, BuildSummary* summary) {
  auto plan = detail::make_plan(profile);
  if (!plan) return plan.error();
  HostImage image;
  detail::ImageWriter out(image);
  detail::write_system(*plan, out);
  detail::write_pci(*plan, out);
  detail::write_network(*plan, out);
  detail::write_accelerators(*plan, out);
  detail::write_fixtures(*plan, out);
  if (!out.conflicts().empty()) {
    return make_error(ErrorCode::kInvalid,
                      "internal error: the mock builder wrote '" + out.conflicts().front() +
                          "' twice (please report this with the profile)",
                      profile.source);
  }
  if (summary != nullptr) {
    summary->entries = image.size();
    summary->pci_functions = plan->functions.size();
    summary->gpus = 0;
    summary->nics = 0;
    for (const detail::PlanDevice& d : plan->devices) {
      summary->gpus += d.type == DeviceType::kGpu ? 1 : 0;
      summary->nics += d.type == DeviceType::kNic ? 1 : 0;
    }
    summary->nvml_fixture = image.files.count(std::string(kNvmlFixtureFile)) != 0;
  }
  return image;
}

Result<BuildSummary> build_host(const Profile& profile, const fs::path& dir_in,
                                const BuildOptions& options) {
  BuildSummary summary;
  auto image = render_host(profile, &summary);
  if (!image) return image.error();

  std::error_code ec;
  fs::path dir = fs::absolute(dir_in, ec).lexically_normal();
  if (!ec && !dir.has_filename()) dir = dir.parent_path();  // "out/" -> "out"
  if (ec || dir.filename().empty() || dir.filename() == "." || dir.filename() == "..") {
    return make_error(ErrorCode::kInvalid, "not a usable directory name", dir_in.string());
  }
  const bool exists = fs::exists(fs::symlink_status(dir, ec));
  if (exists) {
    if (!fs::is_directory(dir, ec)) {
      return make_error(ErrorCode::kInvalid, "exists and is not a directory", dir.string());
    }
    if (!directory_empty(dir)) {
      if (!options.replace_existing) {
        return make_error(ErrorCode::kInvalid,
                          "directory is not empty (use --force to replace a mock host built "
                          "there before)",
                          dir.string());
      }
      if (!fs::exists(dir / std::string(kManifestFile), ec)) {
        return make_error(ErrorCode::kInvalid,
                          "directory is not empty and holds no mock host (no " +
                              std::string(kManifestFile) + "): refusing to delete its contents",
                          dir.string());
      }
    }
  }
  const fs::path parent = dir.parent_path();
  fs::create_directories(parent, ec);
  if (ec) {
    return make_error(ErrorCode::kIo, "cannot create directory: " + ec.message(), parent.string());
  }

  // Build next to the destination, then move it into place: no partial host on failure.
  auto staging = make_temp_dir(parent / ("." + dir.filename().string() + ".partial-XXXXXX"));
  if (!staging) return staging.error();
  if (auto written = write_image(*image, *staging); !written) {
    remove_tree(*staging);
    return written.error();
  }
  if (!exists) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::chmod(staging->c_str(), 0777 & ~mask);  // mkdtemp made it private
    if (::rename(staging->c_str(), dir.c_str()) != 0) {
      const int err = errno;
      remove_tree(*staging);
      return io_error("cannot move the new host into place", dir, err);
    }
    return summary;
  }
  // An existing directory keeps its inode, owner and mode (it may be a mount point or someone's
  // working directory): its old entries (a previous mock host) are moved aside, the new ones
  // moved in, and the old ones deleted last.
  auto old = make_temp_dir(parent / ("." + dir.filename().string() + ".old-XXXXXX"));
  if (!old) {
    remove_tree(*staging);
    return old.error();
  }
  auto move_entries = [](const fs::path& from, const fs::path& to) -> Result<void> {
    std::error_code iter_ec;
    std::vector<fs::path> names;
    for (const auto& entry : fs::directory_iterator(from, iter_ec)) {
      names.push_back(entry.path().filename());
    }
    if (iter_ec) return make_error(ErrorCode::kIo, iter_ec.message(), from.string());
    for (const fs::path& name : names) {
      if (::rename((from / name).c_str(), (to / name).c_str()) != 0) {
        return io_error("cannot move into " + to.string(), from / name, errno);
      }
    }
    return {};
  };
  auto moved_aside = move_entries(dir, *old);
  auto moved_in = moved_aside ? move_entries(*staging, dir) : Result<void>();
  if (!moved_aside || !moved_in) {
    // Best effort: drop what arrived from staging, put the previous host back.
    if (moved_aside) {
      std::vector<fs::path> arrived;
      for (const auto& entry : fs::directory_iterator(dir, ec))
        arrived.push_back(entry.path());
      for (const fs::path& path : arrived)
        remove_tree(path);
    }
    (void)move_entries(*old, dir);
    remove_tree(*staging);
    remove_tree(*old);
    return moved_aside ? moved_in.error() : moved_aside.error();
  }
  remove_tree(*staging);
  remove_tree(*old);
  return summary;
}

// ---------------------------------------------------------------- TempHost

TempHost::TempHost(fs::path root, BuildSummary summary)
    : root_(std::move(root)), summary_(summary) {}

TempHost::TempHost(TempHost&& other) noexcept
    : root_(std::move(other.root_)), summary_(other.summary_) {
  other.root_.clear();
}

TempHost& TempHost::operator=(TempHost&& other) noexcept {
  if (this != &other) {
    remove();
    root_ = std::move(other.root_);
    summary_ = other.summary_;
    other.root_.clear();
  }
  return *this;
}

TempHost::~TempHost() {
  remove();
}

void TempHost::remove() {
  if (!root_.empty()) remove_tree(root_);
  root_.clear();
}

std::string TempHost::nvml_fixture() const {
  if (!summary_.nvml_fixture) return {};
  return (root_ / std::string(kNvmlFixtureFile)).string();
}

Result<TempHost> TempHost::create(std::string_view spec) {
  auto profile = load_profile(spec);
  if (!profile) return profile.error();
  return create(*profile);
}

Result<TempHost> TempHost::create(const Profile& profile) {
  BuildSummary summary;
  auto image = render_host(profile, &summary);
  if (!image) return image.error();
  auto dir = make_temp_dir(temp_base() / "nodetopo-mock-XXXXXX");
  if (!dir) return dir.error();
  TempHost host(*dir, summary);  // owns the directory from here on: removed on every path
  if (auto written = write_image(*image, host.root_); !written) return written.error();
  return host;
}

}  // namespace nodetopo::mock
