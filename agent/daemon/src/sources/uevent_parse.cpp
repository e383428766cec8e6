#include <array>
#include <string>
#include <utility>
#include <vector>

#include <nodetopo/base/str_cat.hpp>
#include <nodetopo/daemon/uevent_source.hpp>
#include <nodetopo/probes/discovery_cache.hpp>

namespace nodetopo::daemon {

std::optional<Uevent> parse_uevent(std::string_view message) {
  const auto next_line = [&](std::string_view& rest) {
    const auto end = rest.find_first_of(std::string_view("\0\n", 2));
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    return line;
  };
  std::string_view rest = message;
  const std::string_view header = next_line(rest);
  const auto at = header.find('@');
  // udev's re-broadcasts start with "libudev" and a binary header; the kernel's with ACTION@.
  if (at == std::string_view::npos || at == 0 || header.substr(at + 1).empty()) {
    return std::nullopt;
  }
  Uevent event;
  event.action = std::string(header.substr(0, at));
  event.devpath = std::string(header.substr(at + 1));
  while (!rest.empty()) {
    const std::string_view line = next_line(rest);
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, eq);
    const std::string_view value = line.substr(eq + 1);
    if (key == "ACTION") {
      event.action = std::string(value);
    } else if (key == "DEVPATH") {
      event.devpath = std::string(value);
    } else if (key == "SUBSYSTEM") {
      event.subsystem = std::string(value);
    }
  }
  return event;
}

bool is_topology_event(const Uevent& event) {
  static constexpr std::array<std::string_view, 7> kAlways = {
      "pci", "net", "infiniband", "infiniband_verbs", "drm", "accel", "kfd"};
  const std::string_view s = event.subsystem;
  for (auto name : kAlways) {
    if (s == name) return true;
  }
  // The NVIDIA driver's classes (nvidia-caps, nvidia-nvlink, ...) vary between releases.
  if (s.substr(0, 6) == "nvidia") return true;
  // CPUs and memory blocks matter when they go on- or offline, or are hot-added/removed; their
  // "change" events (e.g. frequency policy) do not.
  if (s == "cpu" || s == "memory") {
    const std::string_view a = event.action;
    return a == "online" || a == "offline" || a == "add" || a == "remove";
  }
  return false;
}

probes::Changes changes_of(const Uevent& event) {
  probes::Changes changes = probes::Changes::none();
  const std::string_view s = event.subsystem;
  if (s == "cpu" || s == "memory") {
    changes.platform = true;
  } else {
    // DEVPATH is relative to /sys: "/devices/pci0000:00/0000:00:03.0". One that is not names
    // no device: every one of the kind is read again.
    std::vector<std::string> paths;
    if (event.devpath.starts_with("/devices/")) paths.push_back(str_cat("sys", event.devpath));
    if (s == "pci") {
      changes.pci = true;
      changes.pci_paths = std::move(paths);
    } else if (s == "net") {
      changes.net = true;
      changes.net_paths = std::move(paths);
    } else if (s == "infiniband" || s == "infiniband_verbs") {
      changes.rdma = true;
      changes.rdma_paths = std::move(paths);
    }
  }
  return changes;
}

}  // namespace nodetopo::daemon
