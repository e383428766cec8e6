// A line a person can read about the plugin's state (logged periodically by the command).
#include <nodetopo/kubelet/plugin.hpp>

namespace nodetopo::kubelet {

std::string PluginHealth::describe() const {
  std::string out = registered ? "registered" : "not registered";
  if (!registration_error.empty()) out += " (kubelet: " + registration_error + ")";
  out += ", " + std::to_string(registration_attempts) + " registration offer(s), " +
         std::to_string(socket_restarts) + " socket restart(s), " + std::to_string(prepares) +
         " prepare(s), " + std::to_string(unprepares) + " unprepare(s)";
  return out;
}

}  // namespace nodetopo::kubelet
