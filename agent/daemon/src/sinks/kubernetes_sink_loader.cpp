// make_kubernetes_sink(): loads nodetopo-kube-sink.so (kubernetes_sink_module.hpp) on first use
// and asks it for the sink. An agent without the Kubernetes sink never maps libcurl and its
// libraries.
#include <mutex>
#include <string>
#include <utility>

#include <nodetopo/base/log.hpp>

#include "../module_path.hpp"
#include "kubernetes_sink.hpp"
#include "kubernetes_sink_module.hpp"

namespace nodetopo::daemon {

namespace {

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
    // Never closed: the sink's code lives in it until the process ends.
    ModuleEntry found =
        load_module_entry(NODETOPO_KUBE_SINK_MODULE, "NODETOPO_KUBE_SINK_MODULE_PATH",
                          NODETOPO_KUBE_SINK_ENTRY, "the Kubernetes sink module");
    module.make = reinterpret_cast<NodetopoMakeKubernetesSink>(found.address);
    module.error = std::move(found.error);
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
