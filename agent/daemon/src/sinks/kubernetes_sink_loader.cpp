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

#include "../module_path.hpp"
#include "kubernetes_sink.hpp"
#include "kubernetes_sink_module.hpp"

namespace nodetopo::daemon {

namespace {

namespace fs = std::filesystem;

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
    for (const fs::path& candidate :
         module_candidates(NODETOPO_KUBE_SINK_MODULE, "NODETOPO_KUBE_SINK_MODULE_PATH")) {
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
