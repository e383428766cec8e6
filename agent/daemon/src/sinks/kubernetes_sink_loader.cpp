// make_kubernetes_sink(): loads nodetopo-kube-sink.so (kubernetes_sink_module.hpp) on first use
// and asks it for the sink. An agent without the Kubernetes sink never maps libcurl and its
// libraries.
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include <dlfcn.h>

#include <nodetopo/base/log.hpp>

#include "kubernetes_sink.hpp"
#include "kubernetes_sink_module.hpp"

namespace nodetopo::daemon {

namespace {

namespace fs = std::filesystem;

// Where the module of this executable is: `NODETOPO_KUBE_SINK_MODULE_PATH` when set (tests of
// an installed layout), else next to the build tree's topo / topo-agent, else the installed
// <libdir>/nodetopo/ seen from <prefix>/bin/topo or <prefix>/libexec/nodetopo/topo-agent, else
// the configured install path.
std::vector<fs::path> module_candidates() {
  std::vector<fs::path> out;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read on the loop thread at start
  if (const char* env = std::getenv("NODETOPO_KUBE_SINK_MODULE_PATH"); env && *env) {
    out.emplace_back(env);
    return out;
  }
  std::error_code ec;
  // The executable's own location (a property of this process, not of the host root).
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path dir = exe.parent_path();
    const fs::path lib = fs::path(NODETOPO_INSTALL_LIBDIR) / "nodetopo" / NODETOPO_KUBE_SINK_MODULE;
    out.push_back(dir / "agent/daemon" / NODETOPO_KUBE_SINK_MODULE);
    out.push_back(dir / ".." / lib);
    out.push_back(dir / "../.." / lib);
  }
  out.emplace_back(fs::path(NODETOPO_INSTALL_FULL_LIBDIR) / "nodetopo" / NODETOPO_KUBE_SINK_MODULE);
  return out;
}

struct Module {
  NodetopoMakeKubernetesSink make = nullptr;
  std::string error;
};

const Module& load_module() {
  static Module module;
  static std::once_flag once;
  std::call_once(once, [] {
    // The module logs through the "kube" logger. Created here, it gets this process's log
    // settings, and later ones (SIGHUP): the module's component_logger() finds it in spdlog's
    // registry, which both share, instead of making its own.
    component_logger("kube");
    std::string tried;
    for (const fs::path& candidate : module_candidates()) {
      std::error_code ec;
      if (!fs::is_regular_file(candidate, ec)) {
        tried += (tried.empty() ? "" : ", ") + candidate.lexically_normal().string();
        continue;
      }
      // Never closed: the sink's code lives in it until the process ends.
      void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* why = ::dlerror();
        module.error = candidate.string() + ": cannot load: " + (why ? why : "unknown error");
        return;
      }
      module.make =
          reinterpret_cast<NodetopoMakeKubernetesSink>(::dlsym(handle, NODETOPO_KUBE_SINK_ENTRY));
      if (module.make == nullptr) {
        module.error = candidate.string() + ": no " NODETOPO_KUBE_SINK_ENTRY
                                            " (a module of another nodetopo build?)";
      }
      return;
    }
    module.error = "the Kubernetes sink module " NODETOPO_KUBE_SINK_MODULE
                   " is not installed (looked for " +
                   tried + ")";
  });
  return module;
}

}  // namespace

Result<std::unique_ptr<Sink>> make_kubernetes_sink(const AgentConfig::Kubernetes& config,
                                                   const AgentConfig::Hami& hami) {
  const Module& module = load_module();
  if (module.make == nullptr) return make_error(ErrorCode::kUnavailable, module.error);
  Result<std::unique_ptr<Sink>> out =
      make_error(ErrorCode::kUnavailable, "the module built no sink");
  module.make(&config, &hami, &out);
  return out;
}

}  // namespace nodetopo::daemon
