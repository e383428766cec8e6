// Fake sysfs trees: a host root described in memory (HostImage), built with ImageWriter, and
// written to disk with write_image().
//
// This is the one writer of fake host trees in the project: the mock builder renders whole
// profiles with it (builder.hpp), and the tests' hand-made hosts use it for the few files a test
// needs. Keeping one writer keeps one set of rules about what a fake tree looks like — links
// stored relative to their directory the way sysfs stores them, attributes ending in the newline
// the kernel appends, IDs in sysfs' hex format — so a probe never passes on a hand-made tree for
// a reason a real or mock root would not share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/base/error.hpp>

namespace nodetopo::mock {

/// A host rendered in memory: root-relative path -> content. Paths are sorted, so writing or
/// hashing it is deterministic. Directories are implied by the paths (plus `dirs` for empty
/// ones); symlinks hold their target as it will be stored (relative, as sysfs stores them).
struct HostImage {
  std::map<std::string, std::string> files;
  std::map<std::string, std::string> symlinks;
  std::set<std::string> dirs;  ///< every directory, parents included

  /// Total number of entries (files + symlinks + directories).
  [[nodiscard]] std::size_t size() const { return files.size() + symlinks.size() + dirs.size(); }
};

/// Adds entries to a HostImage. Paths are root-relative, without a leading '/'; parents are
/// added as directories. Writing one path twice is recorded in conflicts() rather than
/// silently replacing the first entry: in the mock builder that is a writer bug, and
/// render_host() refuses an image with any.
class ImageWriter {
 public:
  explicit ImageWriter(HostImage& image) : image_(image) {}

  /// A file with `content` at `path`.
  void file(const std::string& path, std::string content);
  /// A sysfs attribute: `value` plus the newline the kernel appends.
  void attr(const std::string& path, std::string_view value);
  /// A symlink at `path` to root-relative `target`, stored relative to the link's directory the
  /// way sysfs stores its links ("../../../devices/pci0000:15/0000:15:01.0").
  void link(const std::string& path, const std::string& target);
  /// A symlink at `path` holding `target` exactly as given (absolute, dangling or climbing out
  /// of the root: what hostile-root tests plant; the mock builder never writes one).
  void raw_link(const std::string& path, const std::string& target);
  /// An (empty) directory.
  void dir(const std::string& path);

  /// Paths written twice.
  [[nodiscard]] const std::vector<std::string>& conflicts() const { return conflicts_; }

 private:
  void parents(const std::string& path);
  void claim(const std::string& path);

  HostImage& image_;
  std::vector<std::string> conflicts_;
};

/// Writes `image` below the existing directory `root`: directories first (existing ones are
/// kept, so images can be written into one tree one after another), then files with mode 0644,
/// then symlinks. A file or link that already exists is an error, never overwritten: creating
/// with O_EXCL means the writer cannot follow a planted link or write through a hard link into
/// someone else's file. Errors name the path.
Result<void> write_image(const HostImage& image, const std::filesystem::path& root);

/// `target` relative to the directory holding `link` (both root-relative), as sysfs writes its
/// links; a link to an ancestor goes up past it and back down ("../../../0000:60:00.0").
std::string relative_target(const std::string& link, const std::string& target);

/// An ID or class as sysfs prints it: "0x10de" (digits 4), "0x030200" (digits 6).
std::string hex_id(std::uint32_t value, int digits);

}  // namespace nodetopo::mock
