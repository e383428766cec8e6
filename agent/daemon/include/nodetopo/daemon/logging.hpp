// The agent's logging: level and format from its config (log.level, log.format), and the
// systemd journal as the sink when the agent runs as a service.
#pragma once

#include <nodetopo/daemon/config.hpp>

namespace nodetopo::daemon {

/// True when stderr is the journal stream systemd connected: $JOURNAL_STREAM ("<dev>:<inode>")
/// names the very stream stderr is (sd_journal_stream_fd(3), systemd.exec(5)).
bool stderr_is_journal_stream();

/// Configures every logger from `config`: `log.format: journal`, or `text` while stderr is the
/// journal stream, sends each line to the journal with its priority (base's journald sink);
/// otherwise text or JSON lines on stderr. Called at start and on each reload.
void configure_agent_logging(const AgentConfig& config);

}  // namespace nodetopo::daemon
