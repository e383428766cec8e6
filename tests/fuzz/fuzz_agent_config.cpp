// The agent's configuration (/etc/nodetopo/agent.yaml, agent/daemon/src/config.cpp): the whole
// file through parse_agent_config, and its first line through the two value parsers the reader
// uses (durations, the HTTP listen address), which also take command-line flags.
#include <string>
#include <string_view>

#include <nodetopo/daemon/config.hpp>

#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = nodetopo::daemon::parse_agent_config(text, "agent.yaml");
  if (parsed) {
    // A reload compares the new file with the running one.
    (void)nodetopo::daemon::restart_only_changes(nodetopo::daemon::AgentConfig{}, parsed.value());
  } else if (parsed.error().message.empty()) {
    __builtin_trap();  // a refusal must say why
  }
  const std::string_view line = text.substr(0, text.find('\n'));
  (void)nodetopo::daemon::parse_duration(line);
  (void)nodetopo::daemon::check_listen_address(line);
  return 0;
}
