// The interface between `topo` and its D-Bus client module, nodetopo-agent-client.so, which
// answers `--from-agent` (agent_client.hpp).
//
// The client needs sdbus-c++, and sdbus-c++ needs libsystemd with its compression and crypto
// libraries (libgcrypt, liblz4, libzstd, liblzma, libcap): eight libraries, about 1 MiB of
// resident memory and a third of the dynamic linker's symbol lookups in every `topo dump`, which
// almost never asks an agent. So the client is a module, loaded by the first `--from-agent`
// request (agent_client_loader.cpp). Module and program are built together from the same
// headers, so C++ types cross the boundary; the entry point has C linkage only so that dlsym
// finds it by name. The module keeps its own copies of the static libraries it links (its
// version script exports the entry point alone).
#pragma once

#include <string>

#include <nodetopo/base/error.hpp>
#include <nodetopo/daemon/agent_client.hpp>

/// The entry point's name, versioned: a module of another build is refused by dlsym instead of
/// being called with another layout.
#define NODETOPO_AGENT_CLIENT_ENTRY "nodetopo_fetch_agent_document_v1"

/// File name of the module (build tree: <build>/agent/daemon/; installed: <libdir>/nodetopo/).
#define NODETOPO_AGENT_CLIENT_MODULE "nodetopo-agent-client.so"

extern "C" {
/// fetch_agent_document_with_status(bus, kind, format) into `*out`; with `with_status` false
/// the statuses are not read (one call less on the bus). Defined by the module only.
void nodetopo_fetch_agent_document_v1(const std::string* bus, const std::string* kind,
                                      const std::string* format, bool with_status,
                                      nodetopo::Result<nodetopo::daemon::AgentDocument>* out);

/// Its type, for dlsym.
using NodetopoFetchAgentDocument = void (*)(const std::string* bus, const std::string* kind,
                                            const std::string* format, bool with_status,
                                            nodetopo::Result<nodetopo::daemon::AgentDocument>* out);
}
