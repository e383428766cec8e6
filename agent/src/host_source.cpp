#include <cstdlib>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/agent/host_source.hpp>
#include <nodetopo/base/log.hpp>
#include <nodetopo/mock/builder.hpp>

namespace nodetopo::agent {

// A mock host (built by --mock, or one `topo mock build` left in a directory given as --root)
// plus the environment it needs; undone in reverse order on destruction.
struct HostSource::MockSession {
  std::optional<mock::TempHost> host;  // only for --mock: removed with the session
  std::string nvml_library;
  std::optional<std::string> previous_fixture_env;
  bool env_set = false;

  MockSession() = default;
  explicit MockSession(mock::TempHost built) : host(std::move(built)) {}
  MockSession(const MockSession&) = delete;
  MockSession& operator=(const MockSession&) = delete;

  // Points the NVML probe at the mock library and the library at the host's fixture.
  void use_nvml_fixture(const std::string& fixture) {
    nvml_library = mock::nvml_library_path();
    if (nvml_library.empty()) {
      component_logger("agent")->info(
          "mock NVML library (libnvidia-ml.so.1 of target nodetopo_mock_nvml) not found next to "
          "topo: NVLink and other NVML facts of the mock host stay unknown");
      return;
    }
    const std::string name(mock::kNvmlFixtureEnv);
    // NOLINTBEGIN(concurrency-mt-unsafe): the CLI is single-threaded while a command runs
    if (const char* old = std::getenv(name.c_str())) previous_fixture_env = old;
    ::setenv(name.c_str(), fixture.c_str(), 1);
    // NOLINTEND(concurrency-mt-unsafe)
    env_set = true;
  }

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
      const std::string fixture = session->host->nvml_fixture();
      if (!fixture.empty()) session->use_nvml_fixture(fixture);
      session_ = std::move(session);
    }
    return probes::SysRoot::open(session_->host->root(), Liveness::kCapture);
  }
  if (!root_.empty()) {
    auto root = probes::SysRoot::open(root_, Liveness::kAuto);
    // A directory made by `topo mock build` carries the NVML fixture of its GPUs: read it through
    // the mock library, as --mock does. Real roots never hold nodetopo-mock/.
    if (root && !root->is_live() && !session_ && root->exists(mock::kNvmlFixtureFile)) {
      session_ = std::make_unique<MockSession>();
      session_->use_nvml_fixture(root->host_path(mock::kNvmlFixtureFile));
    }
    return root;
  }
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
