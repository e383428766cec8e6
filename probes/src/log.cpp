#include <mutex>
#include <string>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <nodetopo/probes/log.hpp>

namespace nodetopo {

namespace {

// Appends `text` to `out` as the body of a JSON string.
void append_json_escaped(spdlog::memory_buf_t& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char c : text) {
    switch (c) {
      case '"':
        out.append(std::string_view("\\\""));
        break;
      case '\\':
        out.append(std::string_view("\\\\"));
        break;
      case '\n':
        out.append(std::string_view("\\n"));
        break;
      case '\r':
        out.append(std::string_view("\\r"));
        break;
      case '\t':
        out.append(std::string_view("\\t"));
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          const auto u = static_cast<unsigned char>(c);
          const char esc[] = {'\\', 'u', '0', '0', kHex[u >> 4], kHex[u & 0xf]};
          out.append(esc, esc + sizeof(esc));
        } else {
          out.push_back(c);
        }
    }
  }
}

// One JSON object per line, for journald/Fluent Bit: time, level, logger, msg.
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    time_.format(msg, dest);  // {"time":"...
    dest.append(std::string_view("\",\"level\":\""));
    const auto level = spdlog::level::to_string_view(msg.level);
    dest.append(level.data(), level.data() + level.size());
    dest.append(std::string_view("\",\"logger\":\""));
    append_json_escaped(dest, std::string_view(msg.logger_name.data(), msg.logger_name.size()));
    dest.append(std::string_view("\",\"msg\":\""));
    append_json_escaped(dest, std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(std::string_view("\"}\n"));
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
};

LogState& state() {
  static LogState s;
  return s;
}

void apply_format(spdlog::logger& logger, LogFormat format) {
  if (format == LogFormat::kJson) {
    logger.set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger.set_pattern("topo: %^%l%$: [%n] %v");
  }
}

}  // namespace

void configure_logging(spdlog::level::level_enum level, LogFormat format) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  s.level = level;
  s.format = format;
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& logger) {
    logger->set_level(level);
    apply_format(*logger, format);
  });
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
  apply_format(*logger, s.format);
  spdlog::register_logger(logger);
  return logger;
}

}  // namespace nodetopo
