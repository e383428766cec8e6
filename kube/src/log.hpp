// The "kube" logger: a base component logger, so it shares the sinks and format the agent
// configures once (text, JSON lines or the journal); kube sets up no logging of its own.
#pragma once

#include <memory>

#include <nodetopo/base/log.hpp>

namespace nodetopo::kube {

inline std::shared_ptr<spdlog::logger> kube_log() {
  static const std::shared_ptr<spdlog::logger> logger = component_logger("kube");
  return logger;
}

}  // namespace nodetopo::kube
