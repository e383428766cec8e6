// The two socket-backed uevent sources. Both are one non-blocking datagram socket on the loop.
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include <nodetopo/base/log.hpp>
#include <nodetopo/daemon/uevent_source.hpp>

namespace nodetopo::daemon {

namespace {

// Common part: owns the fd and the io source, reads every queued datagram per wake-up.
class DatagramSource : public UeventSource {
 public:
  ~DatagramSource() override {
    if (source_ != nullptr) sd_event_source_unref(source_);
    if (fd_ >= 0) ::close(fd_);
  }

  Result<void> attach(sd_event* loop, Callbacks callbacks) override {
    callbacks_ = std::move(callbacks);
    auto opened = open_socket();
    if (!opened) return opened;
    const int r = sd_event_add_io(loop, &source_, fd_, EPOLLIN, &DatagramSource::on_io, this);
    if (r < 0) {
      return make_error(ErrorCode::kIo,
                        std::string("cannot watch the uevent socket: ") + std::strerror(-r),
                        describe());
    }
    sd_event_source_set_description(source_, "uevents");
    return {};
  }

 protected:
  virtual Result<void> open_socket() = 0;
  /// Whether a datagram from `sender` may be trusted (the kernel's group: only port 0).
  virtual bool accept_sender(const sockaddr_storage& sender, socklen_t length) const = 0;

  int fd_ = -1;

 private:
  static int on_io(sd_event_source* /*s*/, int /*fd*/, uint32_t /*revents*/, void* user) {
    static_cast<DatagramSource*>(user)->drain();
    return 0;
  }

  void drain() {
    // The kernel caps a uevent at 2 KiB of environment plus the header; 8 KiB is ample.
    char buf[8192];
    for (;;) {
      sockaddr_storage sender{};
      socklen_t length = sizeof(sender);
      const ssize_t n = ::recvfrom(fd_, buf, sizeof(buf), MSG_DONTWAIT,
                                   reinterpret_cast<sockaddr*>(&sender), &length);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == ENOBUFS) {
          // The buffer overflowed: some events are gone, so what they said is unknown.
          if (callbacks_.on_overflow) callbacks_.on_overflow();
          continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
          component_logger("agent.uevent")
              ->warn("reading {} failed: {}", describe(), std::strerror(errno));
        }
        return;
      }
      if (!accept_sender(sender, length)) continue;
      if (auto event = parse_uevent(std::string_view(buf, static_cast<std::size_t>(n)))) {
        if (callbacks_.on_event) callbacks_.on_event(*event);
      }
    }
  }

  sd_event_source* source_ = nullptr;
  Callbacks callbacks_;
};

class KernelUeventSource final : public DatagramSource {
 public:
  [[nodiscard]] std::string describe() const override {
    return "the kernel uevent socket (NETLINK_KOBJECT_UEVENT)";
  }

 protected:
  Result<void> open_socket() override {
    fd_ = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
    if (fd_ < 0) {
      return make_error(ErrorCode::kIo, std::string("cannot open: ") + std::strerror(errno),
                        describe());
    }
    // A burst (a GPU with its functions, a driver reload) is hundreds of messages: ask for 1 MiB,
    // beyond rmem_max when privileged. An overflow is survivable (on_overflow), only slower.
    int size = 1 << 20;
    if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0) {
      (void)::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    }
    sockaddr_nl addr{};
    addr.nl_family = AF_NETLINK;
    addr.nl_groups = 1;  // the kernel's group; udevd re-broadcasts on group 2, absent in containers
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0) {
      return make_error(ErrorCode::kIo, std::string("cannot bind: ") + std::strerror(errno),
                        describe());
    }
    return {};
  }

  bool accept_sender(const sockaddr_storage& sender, socklen_t length) const override {
    if (length < static_cast<socklen_t>(sizeof(sockaddr_nl))) return false;
    const auto* nl = reinterpret_cast<const sockaddr_nl*>(&sender);
    return nl->nl_family == AF_NETLINK && nl->nl_pid == 0;
  }
};

class SocketUeventSource final : public DatagramSource {
 public:
  explicit SocketUeventSource(std::string path) : path_(std::move(path)) {}
  ~SocketUeventSource() override {
    if (bound_) ::unlink(path_.c_str());
  }
  [[nodiscard]] std::string describe() const override { return "uevent socket " + path_; }

 protected:
  Result<void> open_socket() override {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path_.size() >= sizeof(addr.sun_path)) {
      return make_error(ErrorCode::kInvalid, "socket path too long", path_);
    }
    std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) {
      return make_error(ErrorCode::kIo, std::string("cannot open: ") + std::strerror(errno), path_);
    }
    // Replace a stale socket from an earlier run, never any other file.
    struct stat st {};
    if (::lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) ::unlink(path_.c_str());
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0) {
      return make_error(ErrorCode::kIo, std::string("cannot bind: ") + std::strerror(errno), path_);
    }
    bound_ = true;
    return {};
  }

  bool accept_sender(const sockaddr_storage& /*sender*/, socklen_t /*length*/) const override {
    return true;  // the socket's file mode decides who may send
  }

 private:
  std::string path_;
  bool bound_ = false;
};

}  // namespace

std::unique_ptr<UeventSource> make_kernel_uevent_source() {
  return std::make_unique<KernelUeventSource>();
}

std::unique_ptr<UeventSource> make_socket_uevent_source(std::string path) {
  return std::make_unique<SocketUeventSource>(std::move(path));
}

}  // namespace nodetopo::daemon
