#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodetopo/base/str_cat.hpp>
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

// Whether `dir` holds a mock host built before, and nothing else, so that --force may delete its
// contents. A marker file alone proves nothing (anyone can create nodetopo-mock/manifest.json):
// it must be a regular file holding a manifest this builder writes, and every other entry must
// be one a mock host has. Anything else is refused, naming what is foreign.
Result<void> check_previous_host(const fs::path& dir) {
  const fs::path manifest = dir / std::string(kManifestFile);
  auto refuse = [&](const std::string& why) {
    return make_error(ErrorCode::kInvalid,
                      "directory is not empty and " + why + ": refusing to delete its contents",
                      dir.string());
  };
  const int fd = ::open(manifest.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return refuse("holds no mock host (no regular " + std::string(kManifestFile) + ")");
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      st.st_size <= (std::int64_t{4} << 20)) {
    text.resize(static_cast<std::size_t>(st.st_size));
    const ssize_t n = ::read(fd, text.data(), text.size());
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  }
  ::close(fd);
  if (!detail::is_manifest(text)) {
    return refuse(std::string(kManifestFile) + " is not a mock host's manifest");
  }
  // The entries a mock host has at its top and in nodetopo-mock/.
  constexpr std::array<std::string_view, 4> kTop = {"sys", "proc", "etc", "nodetopo-mock"};
  constexpr std::array<std::string_view, 2> kMarker = {"manifest.json", "nvml.json"};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (std::find(kTop.begin(), kTop.end(), name) == kTop.end() || !entry.is_directory(ec) ||
        entry.is_symlink(ec)) {
      return refuse("holds '" + name + "', which is no part of a mock host");
    }
  }
  for (const auto& entry : fs::directory_iterator(manifest.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (std::find(kMarker.begin(), kMarker.end(), name) == kMarker.end()) {
      return refuse("holds 'nodetopo-mock/" + name + "', which is no part of a mock host");
    }
  }
  if (ec) return io_error("cannot list", dir, ec.value());
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
  ImageWriter out(image);
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
      if (auto mock = check_previous_host(dir); !mock) return mock.error();
    }
  }
  const fs::path parent = dir.parent_path();
  fs::create_directories(parent, ec);
  if (ec) {
    return make_error(ErrorCode::kIo, "cannot create directory: " + ec.message(), parent.string());
  }

  // Build next to the destination, then move it into place: no partial host on failure.
  auto staging = make_temp_dir(parent / str_cat('.', dir.filename().string(), ".partial-XXXXXX"));
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
  auto old = make_temp_dir(parent / str_cat('.', dir.filename().string(), ".old-XXXXXX"));
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
