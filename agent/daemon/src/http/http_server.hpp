// The health and metrics server: libevent's evhttp, its answers made on the loop thread.
//
// libmicrohttpd, the first choice, links GnuTLS (and through it p11-kit, nettle, gmp, libtasn1,
// libidn2, libunistring) and initialises it when loaded: 2.5 MiB of the agent's resident memory
// for HTTPS it never serves. Debian's libevent (libevent_core + libevent_extra) has no TLS
// dependency. Its loop cannot join sd-event, so evhttp runs on one thread of its own that only
// parses and does socket I/O; every request is answered by the handler on the loop thread, from
// state the loop owns, so an answer never waits for a discovery and /healthz proves the loop.
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
