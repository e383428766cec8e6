#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string_view>

#include <unistd.h>

#include <nodetopo/cli/commands.hpp>
#include <nodetopo/daemon/agent_command.hpp>

namespace {

namespace fs = std::filesystem;

// `topo agent ...` runs as topo-agent (agent/agent_main.cpp), which maps only the daemon's
// libraries: the same pid (systemd's MAINPID, NOTIFY_SOCKET), arguments and environment, a
// fraction of the resident memory. Looked up next to this executable (build tree), then in the
// installed libexec directory. Returns only when there is none or it cannot be executed; the
// agent then runs in this process, alike except for its size.
void exec_lean_agent(char** argv) {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read at start, before any thread
  const char* in_process = std::getenv("NODETOPO_AGENT_IN_PROCESS");
  if (in_process != nullptr && std::string_view(in_process) == "1") return;
  std::error_code ec;
  // The executable's own location (a property of this process, not of the host root).
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return;
  const fs::path libexec(NODETOPO_LIBEXECDIR);
  const fs::path candidates[] = {
      exe.parent_path() / "topo-agent",
      (libexec.is_absolute() ? libexec : exe.parent_path() / ".." / libexec) / "nodetopo" /
          "topo-agent"};
  for (const fs::path& candidate : candidates) {
    if (access(candidate.c_str(), X_OK) != 0) continue;
    execv(candidate.c_str(), argv);
    std::cerr << "topo: cannot run " << candidate.string() << " (" << std::strerror(errno)
              << "); running the agent in this process\n";
    return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "agent") exec_lean_agent(argv);
  // `topo agent` lives in agent/daemon: registered here so that nodetopo_cli does not link it.
  const std::array<nodetopo::cli::CommandRegistrar, 1> extra = {
      &nodetopo::daemon::register_agent_command};
  return nodetopo::cli::run_cli(argc, argv, extra);
}
