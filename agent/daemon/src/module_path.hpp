// Where a module of this build (nodetopo-kube-sink.so, nodetopo-agent-client.so) is: the files a
// program dlopen()s on first use so that it maps their libraries only when it needs them.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

namespace nodetopo::daemon {

/// The paths to try for module `file`, in order: `$<env_override>` alone when set (tests of an
/// installed layout); else next to the build tree's executables (<build>/agent/daemon/), the
/// installed <libdir>/nodetopo/ seen from <prefix>/bin/topo or
/// <prefix>/libexec/nodetopo/topo-agent, then the configured install path.
std::vector<std::filesystem::path> module_candidates(std::string_view file,
                                                     const char* env_override);

}  // namespace nodetopo::daemon
