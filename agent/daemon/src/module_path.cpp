#include "module_path.hpp"

#include <cstdlib>
#include <string>

#include <dlfcn.h>

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

ModuleEntry load_module_entry(std::string_view file, const char* env_override, const char* entry,
                              std::string_view what, std::string_view remedy) {
  ModuleEntry out;
  std::string tried;
  for (const fs::path& candidate : module_candidates(file, env_override)) {
    std::error_code ec;
    if (!fs::is_regular_file(candidate, ec)) {
      tried += (tried.empty() ? "" : ", ") + candidate.lexically_normal().string();
      continue;
    }
    void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      out.error = candidate.string() + ": cannot load: " + (why ? why : "unknown error");
      return out;
    }
    out.address = ::dlsym(handle, entry);
    if (out.address == nullptr) {
      out.error = candidate.string() + ": no " + entry + " (a module of another nodetopo build?)";
    }
    return out;
  }
  out.error = std::string(what) + " " + std::string(file) + " is not installed (looked for " +
              tried + ")" + std::string(remedy);
  return out;
}

}  // namespace nodetopo::daemon
