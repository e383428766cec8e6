#include "http_server.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include <nodetopo/base/log.hpp>

namespace nodetopo::daemon {

namespace {

class MhdServer final : public HttpServer {
 public:
  explicit MhdServer(Handler handler) : handler_(std::move(handler)) {}
  ~MhdServer() override {
    if (io_ != nullptr) sd_event_source_disable_unref(io_);
    if (timer_ != nullptr) sd_event_source_disable_unref(timer_);
    if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
  }
  MhdServer(const MhdServer&) = delete;
  MhdServer& operator=(const MhdServer&) = delete;

  Result<void> start(const std::string& listen, sd_event* loop) {
    sockaddr_storage addr{};
    const auto colon = listen.rfind(':');
    std::string host = listen.substr(0, colon);
    unsigned port = 0;
    const std::string port_text = listen.substr(colon + 1);
    std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    unsigned flags = MHD_USE_EPOLL;  // external polling: no thread of MHD's own
    if (host.size() > 2 && host.front() == '[') {
      host = host.substr(1, host.size() - 2);
      auto* a6 = reinterpret_cast<sockaddr_in6*>(&addr);
      a6->sin6_family = AF_INET6;
      a6->sin6_port = htons(static_cast<std::uint16_t>(port));
      ::inet_pton(AF_INET6, host.c_str(), &a6->sin6_addr);
      flags |= MHD_USE_IPv6;
    } else {
      auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
      a4->sin_family = AF_INET;
      a4->sin_port = htons(static_cast<std::uint16_t>(port));
      ::inet_pton(AF_INET, host.c_str(), &a4->sin_addr);
    }
    daemon_ = MHD_start_daemon(flags, static_cast<std::uint16_t>(port), nullptr, nullptr,
                               &MhdServer::on_request, this, MHD_OPTION_SOCK_ADDR, &addr,
                               MHD_OPTION_CONNECTION_TIMEOUT, 10U, MHD_OPTION_CONNECTION_LIMIT, 64U,
                               MHD_OPTION_END);
    if (daemon_ == nullptr) {
      return make_error(
          ErrorCode::kIo,
          "cannot listen on " + listen + " (address in use, or not local): " + std::strerror(errno),
          "http.listen");
    }
    const MHD_DaemonInfo* epoll = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_EPOLL_FD);
    const MHD_DaemonInfo* bound = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
    if (epoll == nullptr) return make_error(ErrorCode::kIo, "libmicrohttpd has no epoll fd");
    if (bound != nullptr) port_ = bound->port;
    int r = sd_event_add_io(loop, &io_, epoll->epoll_fd, EPOLLIN, &MhdServer::on_io, this);
    if (r >= 0) {
      // 1 ms accuracy: the default (0 = 250 ms) would delay work MHD asks to do at once.
      r = sd_event_add_time(loop, &timer_, CLOCK_MONOTONIC, UINT64_MAX, 1000, &MhdServer::on_timer,
                            this);
    }
    if (r >= 0) r = sd_event_source_set_enabled(timer_, SD_EVENT_OFF);
    if (r < 0) {
      return make_error(ErrorCode::kIo, std::string("cannot add the HTTP server to the loop: ") +
                                            std::strerror(-r));
    }
    sd_event_source_set_description(io_, "http-io");
    sd_event_source_set_description(timer_, "http-timer");
    return {};
  }

  [[nodiscard]] unsigned port() const override { return port_; }

 private:
  void run() {
    MHD_run(daemon_);
    // Connection timeouts and work MHD has left: a one-shot timer, off when there is none.
    MHD_UNSIGNED_LONG_LONG ms = 0;
    if (MHD_get_timeout(daemon_, &ms) == MHD_YES) {
      sd_event_source_set_time_relative(timer_, ms * 1000);
      sd_event_source_set_enabled(timer_, SD_EVENT_ONESHOT);
    } else {
      sd_event_source_set_enabled(timer_, SD_EVENT_OFF);
    }
  }
  static int on_io(sd_event_source* /*s*/, int /*fd*/, uint32_t /*revents*/, void* user) {
    static_cast<MhdServer*>(user)->run();
    return 0;
  }
  static int on_timer(sd_event_source* /*s*/, uint64_t /*usec*/, void* user) {
    static_cast<MhdServer*>(user)->run();
    return 0;
  }

  static MHD_Result on_request(void* cls, MHD_Connection* connection, const char* url,
                               const char* method, const char* /*version*/,
                               const char* /*upload_data*/, size_t* upload_data_size,
                               void** con_cls) {
    auto* self = static_cast<MhdServer*>(cls);
    // MHD calls twice per request: first with the headers (answer later), then to answer.
    if (*con_cls == nullptr) {
      *con_cls = self;
      return MHD_YES;
    }
    if (*upload_data_size != 0) {
      *upload_data_size = 0;  // no endpoint takes a body: drop it
      return MHD_YES;
    }
    HttpResponse answer;
    try {
      answer = self->handler_(method, url);
    } catch (const std::exception& e) {
      answer = HttpResponse{500, "text/plain; charset=utf-8", std::string("error: ") + e.what()};
    }
    MHD_Response* response = MHD_create_response_from_buffer(answer.body.size(), answer.body.data(),
                                                             MHD_RESPMEM_MUST_COPY);
    if (response == nullptr) return MHD_NO;
    MHD_add_response_header(response, "Content-Type", answer.content_type.c_str());
    const MHD_Result queued = MHD_queue_response(connection, answer.status, response);
    MHD_destroy_response(response);
    return queued;
  }

  Handler handler_;
  MHD_Daemon* daemon_ = nullptr;
  sd_event_source* io_ = nullptr;
  sd_event_source* timer_ = nullptr;
  unsigned port_ = 0;
};

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::start(const std::string& listen, sd_event* loop,
                                                      Handler handler) {
  auto server = std::make_unique<MhdServer>(std::move(handler));
  if (auto started = server->start(listen, loop); !started) return started.error();
  return std::unique_ptr<HttpServer>(std::move(server));
}

}  // namespace nodetopo::daemon
