// The "kube" logger. It shares the sinks of spdlog's default logger, which the agent configures
// once (text or JSON lines); kube links no logging setup of its own.
#pragma once

#include <memory>

#include <spdlog/spdlog.h>

namespace nodetopo::kube {

inline std::shared_ptr<spdlog::logger> kube_log() {
  static const std::shared_ptr<spdlog::logger> logger = [] {
    if (auto existing = spdlog::get("kube")) return existing;
    auto def = spdlog::default_logger();
    auto l = std::make_shared<spdlog::logger>("kube", def->sinks().begin(), def->sinks().end());
    l->set_level(def->level());
    // Registered, so that spdlog::set_level() and the agent's configuration reach it too.
    try {
      spdlog::register_logger(l);
    } catch (const spdlog::spdlog_ex&) {
      if (auto existing = spdlog::get("kube")) return existing;
    }
    return l;
  }();
  return logger;
}

}  // namespace nodetopo::kube
