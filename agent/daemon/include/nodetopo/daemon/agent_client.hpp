// The client side of dev.nodetopo.Topology1, for `topo dump|matrix|export ... --from-agent`:
// read what a running agent published instead of discovering the host again.
#pragma once

#include <string>

#include <nodetopo/base/error.hpp>

namespace nodetopo::daemon {

/// Asks the agent on `bus` ("system" or "session") for one document: kind "dump" calls
/// GetTopology(format), "matrix" GetMatrix(format), any other kind Export(kind, format). The
/// document equals what the one-shot command prints. The error carries the D-Bus error name and
/// message (no agent on the bus, not ready, unknown format).
Result<std::string> fetch_agent_document(const std::string& bus, const std::string& kind,
                                         const std::string& format);

}  // namespace nodetopo::daemon
