// fetch_agent_document*(): load nodetopo-agent-client.so (agent_client_module.hpp) on first use
// and ask it. A `topo` that never asks an agent maps neither sdbus-c++ nor libsystemd.
#include <mutex>
#include <string>
#include <utility>

#include <nodetopo/daemon/agent_client.hpp>

#include "../module_path.hpp"
#include "agent_client_module.hpp"

namespace nodetopo::daemon {

namespace {

struct Module {
  NodetopoFetchAgentDocument fetch = nullptr;
  std::string error;
};

const Module& load_module() {
  static Module module;
  static std::once_flag once;
  std::call_once(once, [] {
    // Never closed: the process ends soon after its one request.
    ModuleEntry found = load_module_entry(
        NODETOPO_AGENT_CLIENT_MODULE, "NODETOPO_AGENT_CLIENT_MODULE_PATH",
        NODETOPO_AGENT_CLIENT_ENTRY, "the D-Bus client module", ": reinstall the nodetopo package");
    module.fetch = reinterpret_cast<NodetopoFetchAgentDocument>(found.address);
    module.error = std::move(found.error);
  });
  return module;
}

Result<AgentDocument> fetch(const std::string& bus, const std::string& kind,
                            const std::string& format, bool with_status) {
  const Module& module = load_module();
  if (module.fetch == nullptr) return make_error(ErrorCode::kUnavailable, module.error);
  Result<AgentDocument> out = make_error(ErrorCode::kUnavailable, "the module gave no answer");
  module.fetch(&bus, &kind, &format, with_status, &out);
  return out;
}

}  // namespace

Result<std::string> fetch_agent_document(const std::string& bus, const std::string& kind,
                                         const std::string& format) {
  auto doc = fetch(bus, kind, format, false);
  if (!doc) return doc.error();
  return std::move(doc.value().document);
}

Result<AgentDocument> fetch_agent_document_with_status(const std::string& bus,
                                                       const std::string& kind,
                                                       const std::string& format) {
  return fetch(bus, kind, format, true);
}

}  // namespace nodetopo::daemon
