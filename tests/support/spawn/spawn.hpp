// Running a program as a child process, for the tests (capturing what `topo` prints) and for the
// benchmark driver (timing `topo`, lstopo and lspci): one implementation of posix_spawn, pipes,
// environment overrides and wait4, so that both measure and see the same thing.
#pragma once

#include <string>
#include <vector>

namespace nodetopo::spawn {

/// Where a child's output stream goes.
enum class Stream {
  kCapture,  ///< into ChildResult::out / err
  kDiscard,  ///< /dev/null
  kFile,     ///< into ChildOptions::stderr_file (stderr only), truncated first
};

struct ChildOptions {
  /// "NAME=value" entries that replace or extend this process's environment for the child.
  std::vector<std::string> env;
  Stream out = Stream::kCapture;
  Stream err = Stream::kCapture;
  std::string stderr_file;  ///< for err == Stream::kFile
};

struct ChildResult {
  int exit_code = -1;    ///< the exit status, 128 + signal when killed, -1 when not started
  std::string out;       ///< captured stdout
  std::string err;       ///< captured stderr, or why the child could not start
  double seconds = 0;    ///< wall time from spawn to exit
  long max_rss_kib = 0;  ///< peak resident set of the child alone (wait4)
};

/// Runs argv (argv[0] looked up in PATH, no shell) and waits for it, reading captured streams as
/// they come so that a child writing a lot never blocks.
ChildResult run(const std::vector<std::string>& argv, const ChildOptions& options = {});

}  // namespace nodetopo::spawn
