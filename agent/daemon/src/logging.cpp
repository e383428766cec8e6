// Where the agent's log lines go (see nodetopo/daemon/logging.hpp).
#include <charconv>
#include <cstdlib>
#include <string_view>

#include <spdlog/sinks/systemd_sink.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodetopo/base/log.hpp>
#include <nodetopo/base/log_journal.hpp>
#include <nodetopo/daemon/logging.hpp>

namespace nodetopo::daemon {

bool stderr_is_journal_stream() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read once at start, before any thread
  const char* env = std::getenv("JOURNAL_STREAM");
  if (env == nullptr || *env == '\0') return false;
  // "<device>:<inode>" of the stream systemd connected; a child whose stderr was redirected
  // keeps the variable but not the stream, hence the comparison (sd_journal_stream_fd(3)).
  const std::string_view text(env);
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  unsigned long long dev = 0;
  unsigned long long ino = 0;
  const auto d = std::from_chars(text.data(), text.data() + colon, dev);
  const auto i = std::from_chars(text.data() + colon + 1, text.data() + text.size(), ino);
  if (d.ec != std::errc() || d.ptr != text.data() + colon || i.ec != std::errc() ||
      i.ptr != text.data() + text.size()) {
    return false;
  }
  struct stat st {};
  if (::fstat(STDERR_FILENO, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev &&
         static_cast<unsigned long long>(st.st_ino) == ino;
}

void configure_agent_logging(const AgentConfig& config) {
  const auto level = spdlog::level::from_str(config.log_level);
  const LogFormat format = config.log_format == "json" ? LogFormat::kJson : LogFormat::kText;
  // Under systemd, stderr lines would reach the journal without their priority: every warning
  // and error would read as info in `journalctl -p`. The journal sink sends each line with its
  // own. `log.format: journal` asks for it explicitly (a unit with StandardError= redirected).
  const bool journal =
      config.log_format == "journal" || (config.log_format == "text" && stderr_is_journal_stream());
  // The journal sink is made here, where libsystemd is linked (log_journal.hpp).
  // enable_formatting: base's pattern ("[logger] message") becomes the MESSAGE field.
  if (journal) set_journal_sink(std::make_shared<spdlog::sinks::systemd_sink_mt>("nodetopo", true));
  configure_logging(level, format, journal ? LogSink::kJournal : LogSink::kStderr);
}

}  // namespace nodetopo::daemon
