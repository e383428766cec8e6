// The commands that `topo` runs as executables of their own (docs/cli.md, "Executables").
//
// `topo dump` is run far more often than anything else and must start as fast as lstopo; the
// commands below need large libraries (libarchive, libcurl with its TLS and LDAP libraries, gRPC,
// protobuf and abseil, libevent) whose mere loading costs `topo` tens of millions of
// instructions in the dynamic linker and megabytes of resident memory. So each of them is its
// own executable in <libexecdir>/nodetopo, linking only what it needs, and `topo COMMAND ...`
// replaces itself with it (execv: same pid, arguments and environment). This table is what both
// sides share: `topo` lists each command in its help with this description and knows which file
// to run; the helper registers the command under the same name and description.
#pragma once

#include <array>
#include <string_view>

namespace nodetopo::cli {

struct HelperCommand {
  std::string_view name;         ///< the subcommand: `topo <name> ...`
  std::string_view executable;   ///< its file, next to `topo` (build tree) or in libexec/nodetopo
  std::string_view description;  ///< the one paragraph `topo --help` lists it with
};

inline constexpr HelperCommand kCaptureCommand{
    "capture", "topo-capture",
    "Pack the files one discovery of the host reads (links kept as links), `topo --version` "
    "and the JSON dump into FILE.tar.gz, to send a machine as a test case. Replay: tar xzf "
    "FILE.tar.gz && topo dump --root FILE"};

inline constexpr HelperCommand kCleanupCommand{
    "cleanup", "topo-cleanup",
    "Remove what the agent published for a node: its ResourceSlices of the driver, the NFD "
    "NodeFeature, the Node labels nodetopo owns, the NodeResourceTopology (for uninstalling)"};

inline constexpr HelperCommand kKubeletPluginCommand{
    "kubelet-plugin", "topo-kubelet-plugin",
    "Run the DRA kubelet plugin of nodetopo's driver: register with the kubelet, prepare the "
    "claimed devices as CDI specs, optionally publish the ResourceSlices (docs/kubelet.md)"};

inline constexpr HelperCommand kAgentCommand{
    "agent", "topo-agent",
    "Run the long-running node agent: rediscover on hot-plug events, resync and SIGHUP; "
    "publish to the NFD feature file, a JSON file and D-Bus; health and metrics over HTTP "
    "(docs/agent.md)"};

/// Every helper, in the order `topo --help` lists them (after the commands `topo` runs itself).
inline constexpr std::array<HelperCommand, 4> kHelperCommands = {
    kCaptureCommand, kCleanupCommand, kKubeletPluginCommand, kAgentCommand};

}  // namespace nodetopo::cli
