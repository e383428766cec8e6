// The archive `topo capture` writes: the files of a host root that a discovery read, with every
// symlink on their way stored as a link, plus a metadata folder. Private to the CLI.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nodetopo/base/error.hpp>

namespace nodetopo::cli {

/// The folder, inside a capture's top folder, that holds what is not part of the host tree.
inline constexpr std::string_view kCaptureMetadataDir = "nodetopo-capture";

/// Collects root-relative paths of one host root and packs them into a .tar.gz.
///
/// The tree is gathered the way `tar` would store it, not the way a program reads it: a path
/// through a link stores the link (its target as written) and then the path it leads to, so that
/// the unpacked tree resolves exactly as the original did. Links that leave the root, absolute
/// links in a non-live root and deep link chains stop the walk (the discovery refused them too).
class CaptureTree {
 public:
  /// `root`: the host root directory; `live`: whether absolute links mean the root itself (true
  /// for "/" and $HOST_ROOT, as in SysRoot).
  CaptureTree(std::filesystem::path root, bool live);

  /// Adds `rel` and everything on its way; a regular file with its content. Absent paths are
  /// ignored (a discovery asks for optional files).
  void add_path(std::string_view rel);
  /// Adds directory `rel` and its entries: links as links, directories as (empty) directories,
  /// files as empty placeholders unless their content is added too. A listing is what a probe
  /// saw; it reads the contents it needs, which add_path() stores.
  void add_listing(std::string_view rel);
  /// Adds `rel` and, when it is a directory, everything below it (links stored, not followed),
  /// at most `depth` levels: for the files hwloc reads through HWLOC_FSROOT, which SysRoot never
  /// sees.
  void add_tree(std::string_view rel, int depth);
  /// Adds a regular file that is not part of the host (the metadata).
  void add_extra(const std::string& rel, std::string content);

  [[nodiscard]] std::size_t files() const;
  [[nodiscard]] std::size_t links() const;

  /// The .tar.gz with every entry under `top/`, in path order, with fixed owners and times so
  /// that the same tree gives the same bytes.
  [[nodiscard]] Result<std::string> archive(const std::string& top) const;

 private:
  enum class Kind { kDir, kFile, kPlaceholder, kLink };
  struct Entry {
    Kind kind = Kind::kDir;
    std::string data;  // file content or link target
  };
  // Adds `rel` with links on the way; returns the resolved path, or nothing when it is absent.
  std::optional<std::string> add(const std::string& rel, int hops);
  void add_file(const std::string& rel, const std::filesystem::path& full);
  // The entries `depth` levels below directory `rel`: links and directories as they are,
  // regular files read (`read_files`) or as placeholders (a listing).
  void add_below(const std::string& rel, int depth, bool read_files);

  std::filesystem::path root_;
  bool live_;
  std::map<std::string, Entry> entries_;
};

}  // namespace nodetopo::cli
