#include "module_path.hpp"

#include <cstdlib>
#include <string>

namespace nodetopo::daemon {

namespace fs = std::filesystem;

std::vector<fs::path> module_candidates(std::string_view file, const char* env_override) {
  std::vector<fs::path> out;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read when the module is first needed, on one thread
  if (const char* env = std::getenv(env_override); env && *env) {
    out.emplace_back(env);
    return out;
  }
  std::error_code ec;
  // The executable's own location (a property of this process, not of the host root).
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path dir = exe.parent_path();
    const fs::path lib = fs::path(NODETOPO_INSTALL_LIBDIR) / "nodetopo" / file;
    out.push_back(dir / "agent/daemon" / file);
    out.push_back(dir / ".." / lib);
    out.push_back(dir / "../.." / lib);
  }
  out.emplace_back(fs::path(NODETOPO_INSTALL_FULL_LIBDIR) / "nodetopo" / file);
  return out;
}

}  // namespace nodetopo::daemon
