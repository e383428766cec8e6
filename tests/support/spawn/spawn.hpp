// Running a program as a child process, for the tests (capturing what `topo` prints, keeping
// `topo agent`, dbus-daemon and prometheus running beside a test) and for the benchmark driver
// (timing `topo`, lstopo and lspci): one implementation of posix_spawn, environment overrides
// and reaping, so that every caller measures and sees the same thing.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

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
  int exit_code = -1;     ///< the exit status, 128 + signal when killed, -1 when not started
  std::string out;        ///< captured stdout
  std::string err;        ///< captured stderr, or why the child could not start
  double seconds = 0;     ///< wall time from spawn to exit
  long max_rss_kib = 0;   ///< peak resident set of the child alone (wait4)
  long minor_faults = 0;  ///< page faults served without I/O, the child alone (wait4)
};

/// Runs argv (argv[0] looked up in PATH, no shell) and waits for it, reading captured streams as
/// they come so that a child writing a lot never blocks.
ChildResult run(const std::vector<std::string>& argv, const ChildOptions& options = {});

/// A child left running beside the caller (a daemon under test, a private dbus-daemon), with
/// stdout and stderr appended to a log file the test prints when it fails, stdin /dev/null.
/// Killed (SIGKILL) and reaped when the object dies unless wait() saw it exit, so a failing test
/// leaves no process behind.
class Process {
 public:
  /// Starts argv (argv[0] looked up in PATH) with `env` ("NAME=value") over this process's
  /// environment. Throws std::runtime_error naming the program when it cannot start.
  Process(const std::vector<std::string>& argv, const std::vector<std::string>& env,
          const std::filesystem::path& log);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  /// Sends `sig` to the child.
  void signal(int sig) const;
  /// Waits up to `timeout` for the exit; the exit status (as from waitpid), nullopt on timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

}  // namespace nodetopo::spawn
