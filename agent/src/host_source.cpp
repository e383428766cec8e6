#include <cstdlib>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/agent/host_source.hpp>
#include <nodetopo/mock/builder.hpp>
#include <nodetopo/probes/log.hpp>

namespace nodetopo::agent {

// A built mock host plus the environment it needs; undone in reverse order on destruction.
struct HostSource::MockSession {
  mock::TempHost host;
  std::string nvml_library;
  std::optional<std::string> previous_fixture_env;
  bool env_set = false;

  explicit MockSession(mock::TempHost built) : host(std::move(built)) {}
  MockSession(const MockSession&) = delete;
  MockSession& operator=(const MockSession&) = delete;

  ~MockSession() {
    if (!env_set) return;
    const std::string name(mock::kNvmlFixtureEnv);
    // NOLINTBEGIN(concurrency-mt-unsafe): the CLI is single-threaded while a command runs
    if (previous_fixture_env) {
      ::setenv(name.c_str(), previous_fixture_env->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
    // NOLINTEND(concurrency-mt-unsafe)
  }
};

HostSource::HostSource() = default;
HostSource::~HostSource() = default;

void HostSource::add_options(CLI::App& cmd) {
  CLI::Option* root =
      cmd.add_option("--root", root_,
                     "Host root to read: a directory holding sys/ and proc/ (a capture or a mock "
                     "host). Default: $HOST_ROOT, else /")
          ->type_name("DIR");
  CLI::Option* mock =
      cmd.add_option("--mock", mock_,
                     "Read a mock host built from PROFILE (a shipped name such as dgx-h100, a "
                     ".yaml file, optionally with overrides: synthetic:gpus=64); see `topo mock "
                     "list`")
          ->type_name("PROFILE");
  root->excludes(mock);
  mock->excludes(root);
}

Result<probes::SysRoot> HostSource::open() const {
  using Liveness = probes::SysRoot::Liveness;
  if (!mock_.empty()) {
    if (!session_) {
      auto host = mock::TempHost::create(mock_);
      if (!host) return host.error();
      auto session = std::make_unique<MockSession>(std::move(*host));
      const std::string fixture = session->host.nvml_fixture();
      if (!fixture.empty()) {
        session->nvml_library = mock::nvml_library_path();
        if (session->nvml_library.empty()) {
          component_logger("agent")->info(
              "mock NVML library (libnvidia-ml.so.1 of target nodetopo_mock_nvml) not found "
              "next to topo: NVLink and other NVML facts of the mock host stay unknown");
        } else {
          const std::string name(mock::kNvmlFixtureEnv);
          // NOLINTBEGIN(concurrency-mt-unsafe): the CLI is single-threaded while a command runs
          if (const char* old = std::getenv(name.c_str())) session->previous_fixture_env = old;
          ::setenv(name.c_str(), fixture.c_str(), 1);
          // NOLINTEND(concurrency-mt-unsafe)
          session->env_set = true;
        }
      }
      session_ = std::move(session);
    }
    return probes::SysRoot::open(session_->host.root(), Liveness::kCapture);
  }
  if (!root_.empty()) return probes::SysRoot::open(root_, Liveness::kAuto);
  // In the DaemonSet the host's / is mounted at $HOST_ROOT: a view of the machine we run on.
  if (const char* env = std::getenv("HOST_ROOT"); env != nullptr && *env != '\0') {  // NOLINT
    return probes::SysRoot::open(env, Liveness::kLive);
  }
  return probes::SysRoot::open("/", Liveness::kLive);
}

probes::ProbeOptions HostSource::probe_options() const {
  probes::ProbeOptions options;
  if (session_) options.nvml_library = session_->nvml_library;
  return options;
}

void HostSource::release() const {
  session_.reset();
}

Result<probes::Discovery> HostSource::discover() const {
  auto root = open();
  if (!root) return root.error();
  auto discovery = probes::discover(root.value(), probe_options());
  release();
  return discovery;
}

}  // namespace nodetopo::agent
