// Helpers shared by the test suites: fixture locations, temporary directories, running programs.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nodetopo::test {

/// The steering repository's shared/ directory (fixtures, k8s-openapi).
std::filesystem::path shared_dir();
/// Captures unpacked by the `captures` fixture: machines/<name> (captures.hpp), kfd/<name>.
std::filesystem::path captures_dir();
/// Names of the real hwloc sysfs captures (tarball names without .tar.bz2), sorted.
std::vector<std::string> hwloc_capture_names();
/// The source tree (for goldens under tests/).
std::filesystem::path source_dir();
/// The build tree (for the built `topo` binary and the mock NVML library).
std::filesystem::path build_dir();

/// A fresh directory removed (recursively) when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Writes `content` to `path`, creating parent directories.
void write_file(const std::filesystem::path& path, const std::string& content);

/// Writes the smallest CPU topology hwloc loads (one CPU, cpu0) under host root `root`: roots
/// without one fail the cpu probe, and the commands then exit 1 (a degraded discovery).
void write_minimal_cpu(const std::filesystem::path& root);
/// Creates a symlink `link` -> `target` (target as given, relative or absolute), with parents.
void make_symlink(const std::string& target, const std::filesystem::path& link);
/// Reads a whole file; empty string when absent.
std::string read_file(const std::filesystem::path& path);

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs argv (no shell) with extra environment variables ("NAME=value"), capturing both streams.
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env = {});

/// Compares `actual` with the golden file tests/golden/<name>; rewrites it instead when
/// TOPO_UPDATE_GOLDEN=1. Returns an empty string when equal, else a diff-like message.
std::string compare_golden(const std::string& name, const std::string& actual);

}  // namespace nodetopo::test
