#include "spawn.hpp"

#include <array>
#include <chrono>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;  // NOLINT: POSIX

namespace nodetopo::spawn {

namespace {

// This process's environment with `extra` ("NAME=value") replacing entries of the same name.
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    env.emplace_back(*e);
  for (const std::string& entry : extra) {
    const std::string name = entry.substr(0, entry.find('=') + 1);
    std::erase_if(env, [&](const std::string& s) { return s.starts_with(name); });
    env.push_back(entry);
  }
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct Pipe {
  std::array<int, 2> fd{-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

}  // namespace

ChildResult run(const std::vector<std::string>& argv, const ChildOptions& options) {
  ChildResult result;
  if (argv.empty()) {
    result.err = "nothing to run";
    return result;
  }
  Pipe out_pipe;
  Pipe err_pipe;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const auto route = [&](Stream stream, Pipe& pipe, int target, const std::string& file) {
    switch (stream) {
      case Stream::kCapture:
        if (::pipe2(pipe.fd.data(), O_CLOEXEC) == 0) {
          posix_spawn_file_actions_adddup2(&actions, pipe.fd[1], target);
        }
        break;
      case Stream::kDiscard:
        posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0);
        break;
      case Stream::kFile:
        posix_spawn_file_actions_addopen(&actions, target, file.c_str(),
                                         O_WRONLY | O_CREAT | O_TRUNC, 0644);
        break;
    }
  };
  route(options.out, out_pipe, STDOUT_FILENO, {});
  route(options.err, err_pipe, STDERR_FILENO, options.stderr_file);

  std::vector<std::string> env = child_environment(options.env);
  std::vector<std::string> args = argv;
  std::vector<char*> envp = pointers(env);
  std::vector<char*> argp = pointers(args);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argp[0], &actions, nullptr, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  out_pipe.close_end(1);
  err_pipe.close_end(1);
  if (rc != 0) {
    result.err = "cannot start " + argv.front() + ": " + std::strerror(rc);
    return result;
  }
  std::array<pollfd, 2> fds{{{out_pipe.fd[0], POLLIN, 0}, {err_pipe.fd[0], POLLIN, 0}}};
  std::array<std::string*, 2> sinks{&result.out, &result.err};
  std::array<char, 65536> buf{};
  int open_fds = (fds[0].fd >= 0 ? 1 : 0) + (fds[1].fd >= 0 ? 1 : 0);
  while (open_fds > 0) {
    if (::poll(fds.data(), fds.size(), -1) < 0) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf.data(), buf.size());
      if (n <= 0) {
        fds[i].fd = -1;  // closed by the Pipe
        --open_fds;
      } else {
        sinks[i]->append(buf.data(), static_cast<std::size_t>(n));
      }
    }
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.max_rss_kib = usage.ru_maxrss;
  result.minor_faults = usage.ru_minflt;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

Process::Process(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                 const std::filesystem::path& log) {
  if (argv.empty()) throw std::runtime_error("nothing to run");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = child_environment(env);
  std::vector<char*> argp = pointers(args);
  std::vector<char*> envp = pointers(envs);
  const int rc = ::posix_spawnp(&pid_, argp[0], &actions, nullptr, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv.front() + ": " + std::strerror(rc));
}

Process::~Process() {
  if (reaped_ || pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
}

void Process::signal(int sig) const {
  ::kill(pid_, sig);
}

std::optional<int> Process::wait(std::chrono::milliseconds timeout) {
  // Polled rather than blocking: the caller's timeout must hold even when the child hangs.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      return status;
    }
    if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace nodetopo::spawn
