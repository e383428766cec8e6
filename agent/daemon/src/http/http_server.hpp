// The health and metrics server: libmicrohttpd without threads of its own, driven by the loop.
//
// MHD runs in MHD_USE_EPOLL mode with no internal thread: its one epoll fd is an io source, and
// MHD_get_timeout() arms a timer for its connection timeouts. Every request is answered on the
// loop thread from state the loop owns, so an answer never waits for a discovery.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <nodetopo/base/error.hpp>

struct sd_event;

namespace nodetopo::daemon {

struct HttpResponse {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(std::string_view method, std::string_view path)>;
  virtual ~HttpServer() = default;
  /// Listens on `listen` ("127.0.0.1:9464", "[::1]:9464"; port 0 picks one) and joins `loop`.
  static Result<std::unique_ptr<HttpServer>> start(const std::string& listen, sd_event* loop,
                                                   Handler handler);
  /// The port actually bound.
  [[nodiscard]] virtual unsigned port() const = 0;
};

}  // namespace nodetopo::daemon
