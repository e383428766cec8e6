#include "http_server.hpp"

#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include <nodetopo/base/log.hpp>

namespace nodetopo::daemon {

namespace {

// Parses "127.0.0.1:9464" / "[::1]:9464" into a socket address; false when it is neither.
bool parse_listen(const std::string& listen, sockaddr_storage& addr, socklen_t& len) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) return false;
  std::string host = listen.substr(0, colon);
  unsigned port = 0;
  const std::string port_text = listen.substr(colon + 1);
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    return false;
  }
  if (host.size() > 2 && host.front() == '[') {
    host = host.substr(1, host.size() - 2);
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&addr);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(static_cast<std::uint16_t>(port));
    len = sizeof(sockaddr_in6);
    return ::inet_pton(AF_INET6, host.c_str(), &a6->sin6_addr) == 1;
  }
  auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
  a4->sin_family = AF_INET;
  a4->sin_port = htons(static_cast<std::uint16_t>(port));
  len = sizeof(sockaddr_in);
  return ::inet_pton(AF_INET, host.c_str(), &a4->sin_addr) == 1;
}

const char* method_name(evhttp_cmd_type cmd) {
  switch (cmd) {
    case EVHTTP_REQ_GET:
      return "GET";
    case EVHTTP_REQ_HEAD:
      return "HEAD";
    case EVHTTP_REQ_POST:
      return "POST";
    case EVHTTP_REQ_PUT:
      return "PUT";
    case EVHTTP_REQ_DELETE:
      return "DELETE";
    case EVHTTP_REQ_OPTIONS:
      return "OPTIONS";
    case EVHTTP_REQ_TRACE:
      return "TRACE";
    case EVHTTP_REQ_CONNECT:
      return "CONNECT";
    case EVHTTP_REQ_PATCH:
      return "PATCH";
  }
  return "UNKNOWN";
}

// libevent's evhttp on a thread of its own, every answer made on the loop thread.
//
// evhttp cannot join an sd_event (libevent does not expose its backend's fd), so it runs
// event_base_dispatch() on one thread that does nothing but HTTP parsing and socket I/O. Each
// request is handed to the loop through an eventfd source and the HTTP thread waits for the
// answer: the handler still runs on the loop thread with the loop's state, so /healthz answered
// means the loop is alive. A loop that does not answer within a few seconds gets 503.
class EvHttpServer final : public HttpServer {
 public:
  explicit EvHttpServer(Handler handler) : handler_(std::move(handler)) {}
  ~EvHttpServer() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    answered_.notify_all();
    if (thread_.joinable()) {
      const std::uint64_t one = 1;
      [[maybe_unused]] const auto n = ::write(stop_fd_, &one, sizeof one);
      thread_.join();
    }
    if (io_ != nullptr) sd_event_source_disable_unref(io_);
    if (stop_event_ != nullptr) event_free(stop_event_);
    if (http_ != nullptr) evhttp_free(http_);  // closes the listening socket
    if (base_ != nullptr) event_base_free(base_);
    if (job_fd_ >= 0) ::close(job_fd_);
    if (stop_fd_ >= 0) ::close(stop_fd_);
  }
  EvHttpServer(const EvHttpServer&) = delete;
  EvHttpServer& operator=(const EvHttpServer&) = delete;

  Result<void> start(const std::string& listen, sd_event* loop) {
    sockaddr_storage addr{};
    socklen_t len = 0;
    if (!parse_listen(listen, addr, len)) {
      return make_error(ErrorCode::kInvalid, "not IPv4:port or [IPv6]:port: " + listen,
                        "http.listen");
    }
    const int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return sys_error("cannot create the HTTP socket", errno);
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 64) != 0) {
      const int err = errno;
      ::close(fd);
      return make_error(
          ErrorCode::kIo,
          "cannot listen on " + listen + " (address in use, or not local): " + std::strerror(err),
          "http.listen");
    }
    sockaddr_storage bound{};
    socklen_t bound_len = sizeof bound;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len) == 0) {
      port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    }
    // libevent writes to its sockets with writev(), which raises SIGPIPE when a client hung up
    // before the answer was sent (a scrape timed out): the default action would end the agent.
    ::signal(SIGPIPE, SIG_IGN);
    base_ = event_base_new();
    http_ = base_ != nullptr ? evhttp_new(base_) : nullptr;
    if (http_ == nullptr || evhttp_accept_socket(http_, fd) != 0) {
      ::close(fd);
      return make_error(ErrorCode::kIo, "cannot start libevent's HTTP server on " + listen);
    }
    evhttp_set_timeout(http_, 10);  // seconds a client may take to send a request
    evhttp_set_max_headers_size(http_, 16384);
    evhttp_set_max_body_size(http_, 65536);  // no endpoint takes a body
    evhttp_set_gencb(http_, &EvHttpServer::on_request, this);

    job_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    stop_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (job_fd_ < 0 || stop_fd_ < 0) return sys_error("cannot create the HTTP eventfds", errno);
    stop_event_ = event_new(base_, stop_fd_, EV_READ, &EvHttpServer::on_stop, this);
    if (stop_event_ == nullptr || event_add(stop_event_, nullptr) != 0) {
      return make_error(ErrorCode::kIo, "cannot watch the HTTP server's stop eventfd");
    }
    const int r = sd_event_add_io(loop, &io_, job_fd_, EPOLLIN, &EvHttpServer::on_jobs, this);
    if (r < 0) {
      return make_error(ErrorCode::kIo, std::string("cannot add the HTTP server to the loop: ") +
                                            std::strerror(-r));
    }
    sd_event_source_set_description(io_, "http-requests");
    thread_ = std::thread([this] { event_base_dispatch(base_); });
    return {};
  }

  [[nodiscard]] unsigned port() const override { return port_; }

 private:
  struct Job {
    std::string method;
    std::string path;
    HttpResponse answer;
    bool done = false;
  };

  static Result<void> sys_error(const std::string& what, int err) {
    return make_error(ErrorCode::kIo, what + ": " + std::strerror(err));
  }

  // HTTP thread: hand the request to the loop and wait for its answer.
  static void on_request(evhttp_request* req, void* user) {
    auto* self = static_cast<EvHttpServer*>(user);
    Job job;
    job.method = method_name(evhttp_request_get_command(req));
    const evhttp_uri* uri = evhttp_request_get_evhttp_uri(req);
    const char* path = uri != nullptr ? evhttp_uri_get_path(uri) : nullptr;
    job.path = path != nullptr && *path != '\0' ? path : "/";
    {
      std::unique_lock lock(self->mutex_);
      if (!self->stopping_) {
        self->queue_.push_back(&job);
        const std::uint64_t one = 1;
        [[maybe_unused]] const auto n = ::write(self->job_fd_, &one, sizeof one);
        self->answered_.wait_for(lock, std::chrono::seconds(5),
                                 [&] { return job.done || self->stopping_; });
        if (!job.done && std::erase(self->queue_, &job) == 0) {
          // The loop took the job and is answering it right now: the job must outlive that.
          self->answered_.wait(lock, [&] { return job.done; });
        }
      }
    }
    if (!job.done) {
      job.answer =
          HttpResponse{503, "text/plain; charset=utf-8", "the agent's loop did not answer\n"};
    }
    evbuffer* body = evbuffer_new();
    if (body == nullptr) {
      evhttp_send_error(req, 500, nullptr);
      return;
    }
    evbuffer_add(body, job.answer.body.data(), job.answer.body.size());
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      job.answer.content_type.c_str());
    evhttp_send_reply(req, static_cast<int>(job.answer.status), nullptr, body);
    evbuffer_free(body);
  }

  static void on_stop(evutil_socket_t /*fd*/, short /*what*/, void* user) {
    event_base_loopbreak(static_cast<EvHttpServer*>(user)->base_);
  }

  // Loop thread: answer every queued request.
  static int on_jobs(sd_event_source* /*s*/, int fd, uint32_t /*revents*/, void* user) {
    auto* self = static_cast<EvHttpServer*>(user);
    std::uint64_t count = 0;
    [[maybe_unused]] const auto n = ::read(fd, &count, sizeof count);
    std::unique_lock lock(self->mutex_);
    while (!self->queue_.empty()) {
      Job* job = self->queue_.front();
      self->queue_.pop_front();
      lock.unlock();
      // The handler runs without the lock: it reads the loop's state only.
      HttpResponse answer;
      try {
        answer = self->handler_(job->method, job->path);
      } catch (const std::exception& e) {
        answer = HttpResponse{500, "text/plain; charset=utf-8", std::string("error: ") + e.what()};
      }
      lock.lock();
      job->answer = std::move(answer);
      job->done = true;
    }
    lock.unlock();
    self->answered_.notify_all();
    return 0;
  }

  Handler handler_;
  event_base* base_ = nullptr;
  evhttp* http_ = nullptr;
  event* stop_event_ = nullptr;
  sd_event_source* io_ = nullptr;
  int job_fd_ = -1;
  int stop_fd_ = -1;
  unsigned port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable answered_;
  std::deque<Job*> queue_;  ///< requests waiting for the loop; each Job lives on the HTTP thread
  bool stopping_ = false;
};

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::start(const std::string& listen, sd_event* loop,
                                                      Handler handler) {
  auto server = std::make_unique<EvHttpServer>(std::move(handler));
  if (auto started = server->start(listen, loop); !started) return started.error();
  return std::unique_ptr<HttpServer>(std::move(server));
}

}  // namespace nodetopo::daemon
