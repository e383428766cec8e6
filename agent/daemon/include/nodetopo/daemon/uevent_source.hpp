// Hot-plug events: where the Manager learns that the topology may have changed.
//
// An event only arms the debounce timer; the truth is always read again through a fresh SysRoot,
// so a source need not be complete or exact, only timely. Two implementations sit behind the
// interface: the kernel's NETLINK_KOBJECT_UEVENT group (what arrives in a DaemonSet container,
// where no udevd runs; docs/ARCHITECTURE.md says why not libsystemd's udev-group monitor), and
// an AF_UNIX datagram socket that takes the same messages (tests, replays).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nodetopo/base/error.hpp>

struct sd_event;

namespace nodetopo::probes {
struct Changes;  // nodetopo/probes/discovery_cache.hpp
}

namespace nodetopo::daemon {

/// One kernel uevent, reduced to what the agent looks at.
struct Uevent {
  std::string action;     ///< add, remove, change, move, online, offline, bind, unbind
  std::string devpath;    ///< /devices/pci0000:00/...
  std::string subsystem;  ///< pci, net, infiniband, ...
};

/// Parses the kernel's message format ("ACTION@DEVPATH" then NUL-separated KEY=VALUE lines; a
/// newline is accepted as separator too, for hand-written replays). nullopt for anything else,
/// udev's own "libudev" messages included.
std::optional<Uevent> parse_uevent(std::string_view message);

/// True for the subsystems whose events can change what the agent publishes: pci, net,
/// infiniband, infiniband_verbs, drm, accel, kfd, nvidia*, cpu and memory (online/offline).
bool is_topology_event(const Uevent& event);

/// What a topology event says may have changed, for the next discovery's cache
/// (probes::DiscoveryCache): cpu and memory events the platform; pci events the device they
/// name (every PCI function when they name none); net events the interface they name (every
/// interface when they name none); infiniband and infiniband_verbs events the RDMA device; the
/// other subsystems (drm, accel, kfd, nvidia*) nothing cached (their probes run on every
/// discovery).
probes::Changes changes_of(const Uevent& event);

class UeventSource {
 public:
  struct Callbacks {
    std::function<void(const Uevent&)> on_event;  ///< every parsed event, relevant or not
    /// Events were lost (the socket buffer overflowed): the receiver must rediscover.
    std::function<void()> on_overflow;
  };
  virtual ~UeventSource() = default;
  /// Opens the socket and adds it to `loop` as an io source. The error names the socket.
  virtual Result<void> attach(sd_event* loop, Callbacks callbacks) = 0;
  [[nodiscard]] virtual std::string describe() const = 0;
};

/// The kernel uevent group (NETLINK_KOBJECT_UEVENT, group 1). Messages are accepted only from
/// the kernel (sender port 0).
std::unique_ptr<UeventSource> make_kernel_uevent_source();

/// An AF_UNIX datagram socket bound at `path` (replaced if a stale socket is there; removed on
/// destruction), taking one uevent per datagram in the kernel's format.
std::unique_ptr<UeventSource> make_socket_uevent_source(std::string path);

}  // namespace nodetopo::daemon
