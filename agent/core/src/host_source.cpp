#include <cstdlib>
#include <optional>
#include <string>

#include <nodetopo/base/log.hpp>
#include <nodetopo/core/host_source.hpp>
#include <nodetopo/mock/builder.hpp>
#include <nodetopo/probes/environment.hpp>

namespace nodetopo::core {

OpenedHost::OpenedHost(std::unique_ptr<mock::TempHost> temp, probes::SysRoot root)
    : temp_(std::move(temp)), root_(std::move(root)) {}

OpenedHost::OpenedHost(OpenedHost&& other) noexcept
    : temp_(std::move(other.temp_)),
      root_(std::move(other.root_)),
      options_(std::move(other.options_)),
      nvml_fixture_(std::move(other.nvml_fixture_)) {}

OpenedHost& OpenedHost::operator=(OpenedHost&& other) noexcept {
  if (this == &other) return *this;
  // The root (its descriptor) goes before the directory it is in.
  root_ = std::move(other.root_);
  temp_ = std::move(other.temp_);
  options_ = std::move(other.options_);
  nvml_fixture_ = std::move(other.nvml_fixture_);
  return *this;
}

OpenedHost::~OpenedHost() = default;

// Points the NVML probe at the mock library and the library at the host's fixture.
void OpenedHost::use_nvml_fixture(const std::string& fixture) {
  options_.nvml_library = mock::nvml_library_path();
  if (options_.nvml_library.empty()) {
    component_logger("agent")->info(
        "mock NVML library (libnvidia-ml.so.1 of target nodetopo_mock_nvml) not found next to "
        "topo: NVLink and other NVML facts of the mock host stay unknown");
    return;
  }
  nvml_fixture_ = fixture;
  // The library reads the fixture's path from its environment; main writes it (environment.hpp).
  options_.library_environment = {{std::string(mock::kNvmlFixtureEnv), fixture}};
}

std::vector<probes::EnvVar> OpenedHost::environment() const {
  return probes::discovery_environment(root_, options_);
}

void write_process_environment(const OpenedHost& host) {
  probes::write_process_environment(host.environment());
}

Result<OpenedHost> HostSource::open() {
  using Liveness = probes::SysRoot::Liveness;
  if (!spec_.mock.empty()) {
    auto built = mock::TempHost::create(spec_.mock);
    if (!built) return built.error();
    auto temp = std::make_unique<mock::TempHost>(std::move(built.value()));
    auto root = probes::SysRoot::open(temp->root(), Liveness::kCapture);
    if (!root) return root.error();
    OpenedHost host(std::move(temp), std::move(root.value()));
    const std::string fixture = host.temp_->nvml_fixture();
    if (!fixture.empty()) host.use_nvml_fixture(fixture);
    return host;
  }
  if (!spec_.root.empty()) {
    auto root = probes::SysRoot::open(spec_.root, Liveness::kAuto);
    if (!root) return root.error();
    OpenedHost host(nullptr, std::move(root.value()));
    // A directory made by `topo mock build` carries the NVML fixture of its GPUs: read it through
    // the mock library, as --mock does. Real roots never hold nodetopo-mock/.
    if (!host.root_.is_live() && host.root_.exists(mock::kNvmlFixtureFile)) {
      host.use_nvml_fixture(host.root_.host_path(mock::kNvmlFixtureFile));
    }
    return host;
  }
  // In the DaemonSet the host's / is mounted at $HOST_ROOT: a view of the machine we run on.
  const char* env = std::getenv("HOST_ROOT");  // NOLINT(concurrency-mt-unsafe): read only
  auto root = probes::SysRoot::open(env != nullptr && *env != '\0' ? env : "/", Liveness::kLive);
  if (!root) return root.error();
  return OpenedHost(nullptr, std::move(root.value()));
}

}  // namespace nodetopo::core
