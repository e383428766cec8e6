// topo-agent: the process of `topo agent` (docs/agent.md). `topo` links every command's
// libraries (gRPC and protobuf for the kubelet plugin, libarchive for capture, ...); a process
// that runs for months on every node should not map them. `topo agent` replaces itself with this
// executable (main.cpp), which links only the daemon, so the agent's resident memory is the
// agent's. Installed outside PATH (libexec/nodetopo): the interface stays `topo agent`.
#include <nodetopo/daemon/agent_command.hpp>

int main(int argc, char** argv) {
  return nodetopo::daemon::agent_main(argc, argv);
}
