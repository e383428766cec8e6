// Where a module of this build (nodetopo-kube-sink.so, nodetopo-agent-client.so) is: the files a
// program dlopen()s on first use so that it maps their libraries only when it needs them.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace nodetopo::daemon {

/// The paths to try for module `file`, in order: `$<env_override>` alone when set (tests of an
/// installed layout); else next to the build tree's executables (<build>/agent/daemon/), the
/// installed <libdir>/nodetopo/ seen from <prefix>/bin/topo or
/// <prefix>/libexec/nodetopo/topo-agent, then the configured install path.
std::vector<std::filesystem::path> module_candidates(std::string_view file,
                                                     const char* env_override);

/// A module's entry point, or why there is none.
struct ModuleEntry {
  void* address = nullptr;
  std::string error;  ///< set when address is nullptr
};

/// dlopen()s the first of module_candidates(file, env_override) that is a file (RTLD_NOW,
/// RTLD_LOCAL; never closed: its code is used until the process ends) and looks `entry` up.
/// Errors name the file and what failed; when none is there: "<what> <file> is not installed
/// (looked for A, B, ...)<remedy>".
ModuleEntry load_module_entry(std::string_view file, const char* env_override, const char* entry,
                              std::string_view what, std::string_view remedy = {});

}  // namespace nodetopo::daemon
