// The module nodetopo-agent-client.so (agent_client_module.hpp): the D-Bus calls of
// `--from-agent`, through the proxy generated from the agent's IDL.
#include <dev.nodetopo.Topology1.proxy.h>
#include <sdbus-c++/sdbus-c++.h>

#include "agent_client_module.hpp"

namespace {

using nodetopo::daemon::AgentDocument;
using nodetopo::daemon::AgentStatus;

class Client final : public sdbus::ProxyInterfaces<dev::nodetopo::Topology1_proxy> {
 public:
  Client(sdbus::IConnection& connection)
      : ProxyInterfaces(connection, "dev.nodetopo.Topology1", "/dev/nodetopo/Topology1") {
    registerProxy();
  }
  ~Client() { unregisterProxy(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

 private:
  void onChanged(const uint64_t& /*generation*/, const std::string& /*shape*/) override {}
};

nodetopo::Result<AgentDocument> fetch(const std::string& bus, const std::string& kind,
                                      const std::string& format, bool with_status) {
  try {
    auto connection =
        bus == "session" ? sdbus::createSessionBusConnection() : sdbus::createSystemBusConnection();
    Client client(*connection);
    const auto status = [&client] {
      return AgentStatus{client.Generation(), client.Health(), client.LastRefresh()};
    };
    AgentDocument out;
    if (with_status) out.before = status();
    if (kind == "dump") {
      out.document = client.GetTopology(format);
    } else if (kind == "matrix") {
      out.document = client.GetMatrix(format);
    } else {
      out.document = client.Export(kind, format);
    }
    if (with_status) out.after = status();
    return out;
  } catch (const sdbus::Error& e) {
    return nodetopo::make_error(nodetopo::ErrorCode::kUnavailable,
                                "no answer from topo agent (dev.nodetopo.Topology1 on the " + bus +
                                    " bus): " + e.getName() + ": " + e.getMessage());
  }
}

}  // namespace

extern "C" void nodetopo_fetch_agent_document_v1(const std::string* bus, const std::string* kind,
                                                 const std::string* format, bool with_status,
                                                 nodetopo::Result<AgentDocument>* out) {
  *out = fetch(*bus, *kind, *format, with_status);
}
