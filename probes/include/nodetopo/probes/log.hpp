// Named loggers for nodetopo components. The agent decides sinks and format once
// (configure_logging); every component logger created afterwards shares them.
#pragma once

#include <memory>
#include <string_view>

#include <spdlog/spdlog.h>

namespace nodetopo {

enum class LogFormat { kText, kJson };

/// Sets level ("trace".."off") and format for all nodetopo loggers, writing to stderr.
void configure_logging(spdlog::level::level_enum level, LogFormat format);

/// The format configure_logging() chose (text until it is called).
LogFormat current_log_format();

/// The logger named `name` ("probe.pci", "agent"), created on first use with the configured sinks.
std::shared_ptr<spdlog::logger> component_logger(std::string_view name);

}  // namespace nodetopo
