// GCC 12 at -O2 reports a false -Wnull-dereference inside CLI11's inlined string splitting.
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <malloc.h>

#include <nodetopo/base/log.hpp>
#include <nodetopo/cli/helper_commands.hpp>
#include <nodetopo/daemon/agent_command.hpp>
#include <nodetopo/daemon/config.hpp>
#include <nodetopo/daemon/logging.hpp>
#include <nodetopo/daemon/manager.hpp>

namespace nodetopo::daemon {

namespace {

struct AgentOptions {
  std::string config;
  std::string root;
  std::string mock;
  std::string check;
};

std::chrono::milliseconds test_discovery_delay() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read once, before any thread
  const char* env = std::getenv("NODETOPO_AGENT_TEST_DISCOVERY_DELAY_MS");
  if (env == nullptr) return std::chrono::milliseconds(0);
  unsigned ms = 0;
  const std::string_view text(env);
  std::from_chars(text.data(), text.data() + text.size(), ms);
  return std::chrono::milliseconds(ms);
}

int run_agent(const AgentOptions& opts) {
  if (!opts.check.empty()) {
    auto cfg = load_agent_config(opts.check, true);
    if (!cfg) {
      std::cerr << "topo agent: " << cfg.error().describe() << "\n";
      return 1;
    }
    std::cout << opts.check << ": ok\n";
    return 0;
  }
  const bool explicit_config = !opts.config.empty();
  const std::string path = explicit_config ? opts.config : std::string(kDefaultConfigPath);
  auto cfg = load_agent_config(path, explicit_config);
  if (!cfg) {
    std::cerr << "topo agent: " << cfg.error().describe() << "\n";
    return 1;
  }
  AgentConfig config = std::move(cfg.value());
  if (!opts.root.empty()) config.host_root = opts.root;
  if (!opts.mock.empty()) {
    config.mock_profile = opts.mock;
    config.host_root.clear();
  }
  configure_agent_logging(config);

  // One malloc arena for the agent's two or three threads (loop, discovery worker, Kubernetes
  // publisher): they rarely allocate at the same time, and each further arena would keep its
  // own free pages. Set before any thread exists.
  mallopt(M_ARENA_MAX, 1);

  ManagerOptions m;
  m.config = std::move(config);
  m.config_path = path;
  m.config_must_exist = explicit_config;
  m.flag_root = opts.root;
  m.flag_mock = opts.mock;
  m.discovery_delay = test_discovery_delay();
  auto manager = Manager::create(std::move(m));
  if (!manager) {
    component_logger("agent")->error("cannot start: {}", manager.error().describe());
    std::cerr << "topo agent: " << manager.error().describe() << "\n";
    return 1;
  }
  return manager.value()->run();
}

}  // namespace

void register_agent_command(CLI::App& cmd, std::function<int()>& runner) {
  auto opts = std::make_shared<AgentOptions>();
  cmd.add_option("--config", opts->config,
                 "Agent config (YAML). Default: /etc/nodetopo/agent.yaml, used when present")
      ->type_name("FILE");
  CLI::Option* root =
      cmd.add_option("--root", opts->root,
                     "Host root to read (overrides host_root of the config). Default: "
                     "$HOST_ROOT, else /")
          ->type_name("DIR");
  CLI::Option* mock = cmd.add_option("--mock", opts->mock,
                                     "Run on a mock host built from PROFILE (see `topo mock "
                                     "list`), for trying the agent without accelerators")
                          ->type_name("PROFILE");
  root->excludes(mock);
  mock->excludes(root);
  cmd.add_option("--check-config", opts->check,
                 "Validate FILE as an agent config, print the first problem (with its key "
                 "path) and exit: 0 valid, 1 invalid")
      ->type_name("FILE");
  cmd.callback([&runner, opts] { runner = [opts] { return run_agent(*opts); }; });
}

}  // namespace nodetopo::daemon
