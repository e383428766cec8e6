// The client side of dev.nodetopo.Topology1, for `topo dump|matrix|export ... --from-agent`:
// read what a running agent published instead of discovering the host again.
#pragma once

#include <cstdint>
#include <string>

#include <nodetopo/base/error.hpp>

namespace nodetopo::daemon {

/// Asks the agent on `bus` ("system" or "session") for one document: kind "dump" calls
/// GetTopology(format), "matrix" GetMatrix(format), any other kind Export(kind, format). The
/// document equals what the one-shot command prints. The error carries the D-Bus error name and
/// message (no agent on the bus, not ready, unknown format).
Result<std::string> fetch_agent_document(const std::string& bus, const std::string& kind,
                                         const std::string& format);

/// The agent's properties: what a client checks before trusting a document.
struct AgentStatus {
  std::uint64_t generation = 0;
  std::string health;                   ///< "ok", "starting...", "degraded: ..."
  std::uint64_t last_refresh_usec = 0;  ///< end of the last discovery, CLOCK_REALTIME
};

/// A document with the agent's status read just before and just after it, on one connection:
/// equal generations mean the document belongs to that status (no publish in between).
struct AgentDocument {
  std::string document;
  AgentStatus before;
  AgentStatus after;
};

/// As fetch_agent_document, with the status around it (`topo fit --from-agent`).
Result<AgentDocument> fetch_agent_document_with_status(const std::string& bus,
                                                       const std::string& kind,
                                                       const std::string& format);

}  // namespace nodetopo::daemon
