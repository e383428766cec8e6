#include <mutex>
#include <string>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <nodetopo/base/json_escape.hpp>
#include <nodetopo/base/log.hpp>
#include <nodetopo/base/log_journal.hpp>

namespace nodetopo {

namespace {

void append(spdlog::memory_buf_t& out, std::string_view text) {
  out.append(text.data(), text.data() + text.size());
}

// One JSON object per line, for journald/Fluent Bit: time, level, logger, msg. Strings go through
// the one JSON escaper, so a broken UTF-8 byte in a device name cannot break the line.
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    time_.format(msg, dest);  // {"time":"...
    append(dest, "\",\"level\":\"");
    const auto level = spdlog::level::to_string_view(msg.level);
    dest.append(level.data(), level.data() + level.size());
    append(dest, "\",\"logger\":");
    std::string text;
    json::append_string(text, std::string_view(msg.logger_name.data(), msg.logger_name.size()));
    text += ",\"msg\":";
    json::append_string(text, std::string_view(msg.payload.data(), msg.payload.size()));
    text += "}\n";
    append(dest, text);
  }
  [[nodiscard]] std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }

 private:
  spdlog::pattern_formatter time_{"{\"time\":\"%Y-%m-%dT%H:%M:%S.%e%z",
                                  spdlog::pattern_time_type::utc, ""};
};

struct LogState {
  std::mutex mutex;
  spdlog::sink_ptr sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  spdlog::level::level_enum level = spdlog::level::warn;
  LogFormat format = LogFormat::kText;
  LogSink sink_kind = LogSink::kStderr;
  spdlog::sink_ptr journal;  // set_journal_sink()
};

LogState& state() {
  static LogState s;
  return s;
}

void apply_format(spdlog::logger& logger, const LogState& s) {
  if (s.sink_kind == LogSink::kJournal) {
    // The journal adds time, host and priority itself; the message keeps only the component.
    logger.set_pattern("[%n] %v");
  } else if (s.format == LogFormat::kJson) {
    logger.set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger.set_pattern("topo: %^%l%$: [%n] %v");
  }
}

bool needs_quotes(std::string_view value) {
  if (value.empty()) return true;
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || c == '"' || c == '=' || c == '\\' || u == 0x7f) return true;
  }
  return false;
}

}  // namespace

void configure_logging(spdlog::level::level_enum level, LogFormat format) {
  configure_logging(level, format, LogSink::kStderr);
}

void configure_logging(spdlog::level::level_enum level, LogFormat format, LogSink sink) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  s.level = level;
  s.format = format;
  if (sink == LogSink::kJournal && s.journal == nullptr) sink = LogSink::kStderr;
  if (sink != s.sink_kind) {
    s.sink_kind = sink;
    s.sink =
        sink == LogSink::kJournal ? s.journal : std::make_shared<spdlog::sinks::stderr_sink_mt>();
    spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& logger) {
      logger->sinks().clear();
      logger->sinks().push_back(s.sink);
    });
  }
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& logger) {
    logger->set_level(level);
    apply_format(*logger, s);
  });
}

void set_journal_sink(spdlog::sink_ptr sink) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  s.journal = std::move(sink);
}

LogFormat current_log_format() {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  return s.format;
}

std::shared_ptr<spdlog::logger> component_logger(std::string_view name) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  const std::string key(name);
  if (auto existing = spdlog::get(key)) return existing;
  auto logger = std::make_shared<spdlog::logger>(key, s.sink);
  logger->set_level(s.level);
  apply_format(*logger, s);
  spdlog::register_logger(logger);
  return logger;
}

std::string log_fields(std::initializer_list<LogField> fields) {
  std::string out;
  for (const LogField& f : fields) {
    if (!out.empty()) out += ' ';
    out.append(f.key);
    out += '=';
    if (!needs_quotes(f.value)) {
      out.append(f.value);
      continue;
    }
    out += '"';
    for (char c : f.value) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    out += '"';
  }
  return out;
}

}  // namespace nodetopo
