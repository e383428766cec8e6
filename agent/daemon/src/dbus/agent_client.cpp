#include <dev.nodetopo.Topology1.proxy.h>
#include <sdbus-c++/sdbus-c++.h>

#include <nodetopo/daemon/agent_client.hpp>

namespace nodetopo::daemon {

namespace {

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

}  // namespace

Result<std::string> fetch_agent_document(const std::string& bus, const std::string& kind,
                                         const std::string& format) {
  try {
    auto connection =
        bus == "session" ? sdbus::createSessionBusConnection() : sdbus::createSystemBusConnection();
    Client client(*connection);
    if (kind == "dump") return client.GetTopology(format);
    if (kind == "matrix") return client.GetMatrix(format);
    return client.Export(kind, format);
  } catch (const sdbus::Error& e) {
    return make_error(ErrorCode::kUnavailable,
                      "no answer from topo agent (dev.nodetopo.Topology1 on the " + bus +
                          " bus): " + e.getName() + ": " + e.getMessage());
  }
}

Result<AgentDocument> fetch_agent_document_with_status(const std::string& bus,
                                                       const std::string& kind,
                                                       const std::string& format) {
  try {
    auto connection =
        bus == "session" ? sdbus::createSessionBusConnection() : sdbus::createSystemBusConnection();
    Client client(*connection);
    const auto status = [&client] {
      return AgentStatus{client.Generation(), client.Health(), client.LastRefresh()};
    };
    AgentDocument out;
    out.before = status();
    if (kind == "dump") {
      out.document = client.GetTopology(format);
    } else if (kind == "matrix") {
      out.document = client.GetMatrix(format);
    } else {
      out.document = client.Export(kind, format);
    }
    out.after = status();
    return out;
  } catch (const sdbus::Error& e) {
    return make_error(ErrorCode::kUnavailable,
                      "no answer from topo agent (dev.nodetopo.Topology1 on the " + bus +
                          " bus): " + e.getName() + ": " + e.getMessage());
  }
}

}  // namespace nodetopo::daemon
