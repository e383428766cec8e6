// `topo capture|cleanup|kubelet-plugin|agent ...`: listed in `topo --help`, run by their own
// executables (helper_commands.hpp says why). The one place that finds and execs them.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <nodetopo/cli/commands.hpp>

namespace nodetopo::cli {

namespace {

namespace fs = std::filesystem;

// Next to this executable (the build tree puts every executable in its top folder), then the
// installed <libexecdir>/nodetopo: seen from <prefix>/bin/topo when the configured libexecdir is
// relative (a relocated install). Only when /proc is not mounted (a bare chroot) is the
// configured absolute path taken: another installation must not answer for this one.
std::vector<fs::path> helper_candidates(std::string_view executable) {
  const fs::path libexec(NODETOPO_LIBEXECDIR);
  std::error_code ec;
  // The executable's own location (a property of this process, not of the host root).
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {fs::path(NODETOPO_FULL_LIBEXECDIR) / "nodetopo" / executable};
  const fs::path dir = exe.parent_path();
  return {dir / executable,
          ((libexec.is_absolute() ? libexec : dir / ".." / libexec) / "nodetopo" / executable)
              .lexically_normal()};
}

}  // namespace

int exec_helper(const HelperCommand& helper, char** argv) {
  std::string tried;
  for (const fs::path& candidate : helper_candidates(helper.executable)) {
    // access() first: a missing file is the common case and needs no execv to find out.
    if (access(candidate.c_str(), X_OK) == 0) execv(candidate.c_str(), argv);
    const int err = errno;  // of access() or, when it said yes, of execv()
    tried += "\n  " + candidate.string() + ": " +
             (err == ENOENT ? std::string("not found") : std::strerror(err));
  }
  std::cerr << "topo " << helper.name << ": cannot run " << helper.executable
            << ", the program that runs this command; tried:" << tried
            << "\nThe installation is incomplete: reinstall the nodetopo package (in a build tree, "
               "build the target "
            << helper.executable << ").\n";
  return kExitFailure;
}

void register_helper_command(CLI::App& cmd, CommandRunner& runner, const HelperCommand& helper,
                             char** argv) {
  // Everything after the name is the helper's to parse, --help included: it prints the
  // command's full help (the man page and the bash completion are made from it).
  cmd.set_help_flag();
  cmd.prefix_command();
  cmd.allow_extras();
  cmd.callback(
      [&runner, &helper, argv] { runner = [&helper, argv] { return exec_helper(helper, argv); }; });
}

}  // namespace nodetopo::cli
