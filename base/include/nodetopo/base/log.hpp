// Named loggers for nodetopo components. The program decides sinks and format once, at start
// (configure_logging); every component logger, created before or after, shares them. Libraries
// below the program only call component_logger(); they never choose a sink.
//
// Messages are prose followed by key=value fields, so that a log search can match a field:
//   log->warn("skipped a device {}", log_fields({{"probe", "pci"}, {"path", p}}));
//   -> "skipped a device probe=pci path=sys/bus/pci/devices/0000:00:01.0"
// In JSON mode every stderr line is one JSON object {"time","level","logger","msg"}; on the
// journal (the service) each message is one journal entry with its priority and the logger name
// as SYSLOG_IDENTIFIER-style prefix.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

namespace nodetopo {

enum class LogFormat { kText, kJson };

/// Where log lines go: stderr (commands, containers) or the systemd journal (the service, where
/// stderr would be captured as one undifferentiated stream without priorities).
enum class LogSink { kStderr, kJournal };

/// Sets level ("trace".."off") and format for all nodetopo loggers, writing to stderr.
void configure_logging(spdlog::level::level_enum level, LogFormat format);

/// Like configure_logging(level, format), choosing the sink as well. With kJournal the format is
/// ignored: the journal stores fields itself ("[logger] message" with the entry's PRIORITY).
void configure_logging(spdlog::level::level_enum level, LogFormat format, LogSink sink);

/// The format configure_logging() chose (text until it is called).
LogFormat current_log_format();

/// The logger named `name` ("probe.pci", "agent"), created on first use with the configured sinks.
std::shared_ptr<spdlog::logger> component_logger(std::string_view name);

/// One key=value field of a log message.
struct LogField {
  std::string_view key;
  std::string_view value;
};

/// "key=value key2=value2": values with a space, '"', '=' or a control character, and empty
/// values, are double-quoted with '"' and '\\' escaped, as logfmt does.
std::string log_fields(std::initializer_list<LogField> fields);

}  // namespace nodetopo
