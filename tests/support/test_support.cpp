#include "test_support.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn/spawn.hpp"

extern char** environ;

namespace nodetopo::test {

namespace fs = std::filesystem;

fs::path shared_dir() {
  if (const char* env = std::getenv("NODETOPO_SHARED_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return NODETOPO_TEST_SHARED_DIR;
}

fs::path captures_dir() {
  return NODETOPO_TEST_CAPTURES_DIR;
}
fs::path source_dir() {
  return NODETOPO_TEST_SOURCE_DIR;
}
fs::path build_dir() {
  return NODETOPO_TEST_BUILD_DIR;
}

std::vector<std::string> hwloc_capture_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(shared_dir() / "fixtures/hwloc/linux")) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".tar.bz2";
    if (file.size() > suffix.size() && file.ends_with(suffix)) {
      names.push_back(file.substr(0, file.size() - suffix.size()));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "nodetopo-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  // Make read-only trees (captures copy their modes) removable first.
  for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
  }
  fs::remove_all(path_, ec);
}

void write_file(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void make_symlink(const std::string& target, const fs::path& link) {
  fs::create_directories(link.parent_path());
  fs::create_symlink(target, link);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandResult run_command(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env) {
  spawn::ChildOptions options;
  options.env = env;
  spawn::ChildResult child = spawn::run(argv, options);
  return CommandResult{child.exit_code, std::move(child.out), std::move(child.err)};
}

std::string compare_golden(const std::string& name, const std::string& actual) {
  const fs::path path = source_dir() / "tests/golden" / name;
  const char* update = std::getenv("TOPO_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    write_file(path, actual);
    return {};
  }
  if (!fs::exists(path)) {
    return "golden file " + path.string() +
           " is missing; create it with TOPO_UPDATE_GOLDEN=1 and review the diff";
  }
  const std::string expected = read_file(path);
  if (expected == actual) return {};
  // Point at the first differing line; the full diff is for `git diff` after an update.
  std::istringstream a(expected);
  std::istringstream b(actual);
  std::string la;
  std::string lb;
  int line = 0;
  while (true) {
    ++line;
    const bool ga = static_cast<bool>(std::getline(a, la));
    const bool gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb) break;
    if (!ga || !gb || la != lb) {
      return "differs from golden " + path.string() + " at line " + std::to_string(line) +
             "\n  golden: " + (ga ? la : "<end>") + "\n  actual: " + (gb ? lb : "<end>") +
             "\n(regenerate with TOPO_UPDATE_GOLDEN=1 if the change is intended)";
    }
  }
  return "differs from golden " + path.string();
}

}  // namespace nodetopo::test
