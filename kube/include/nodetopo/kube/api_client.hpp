// A Kubernetes API client over libcurl's multi interface that behaves like client-go's: a token
// bucket rate limit, retries with exponential backoff and jitter on 429, 5xx and connection
// errors (honouring Retry-After), request timeouts, credentials re-read after a 401, and counters
// of every request by verb, resource and code.
//
// Threading: an ApiClient belongs to ONE thread, the one that calls its methods (the Publisher's
// I/O thread, or the `topo cleanup` command). Every request of that thread and every watch stream
// it opened share one curl multi handle: while call() waits for its response, the watch streams
// keep being read, so a single thread serves all of them. Only wakeup() and the stop flag may be
// touched from other threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include <nlohmann/json.hpp>

#include <nodetopo/kube/client_config.hpp>

namespace nodetopo::kube {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

/// Client behaviour; the defaults are client-go's where it has one.
struct ClientOptions {
  double qps = 5.0;  ///< sustained requests per second (client-go rest.Config QPS)
  int burst = 10;    ///< requests allowed at once after a quiet period (client-go Burst)
  Millis request_timeout{10'000};  ///< whole request, except watches
  Millis connect_timeout{5'000};
  int max_retries = 5;  ///< retries of one call after 429/5xx/connection errors (not counting 401)
  Millis backoff_initial{500};     ///< first retry delay; doubles each retry, +-25 % jitter
  Millis backoff_max{30'000};      ///< cap of the retry delay
  Millis retry_after_max{60'000};  ///< a server's Retry-After is honoured up to this
  Millis token_reload{60'000};     ///< the token file is re-read at least this often
  std::string user_agent = "nodetopo";
};

/// One HTTP request against the API server. `path` starts with '/'; `query` without '?'.
struct ApiRequest {
  std::string method = "GET";
  std::string path;
  std::string query;
  std::string body;
  std::string content_type = "application/json";
  /// For metrics and messages: "get", "list", "create", "update", "patch", "delete",
  /// "deletecollection", "watch"; and the resource ("resourceslices", "nodes", ...).
  std::string verb;
  std::string resource;
};

struct ApiResponse {
  long status = 0;  ///< HTTP status; 0 when no response came (transport error, stopped)
  std::string body;
  std::string transport_error;  ///< curl's message when status is 0
  bool stopped = false;         ///< the client was stopped while waiting
  std::optional<Millis> retry_after;
  int attempts = 0;  ///< HTTP attempts made (1 + retries)

  [[nodiscard]] bool ok() const { return status >= 200 && status < 300; }
  /// The body parsed (a discarded value when it is not JSON).
  [[nodiscard]] nlohmann::json json() const;
  /// A Status object's `message`, else the start of the body, else the transport error.
  [[nodiscard]] std::string message() const;
  /// A Status object's `reason` ("NotFound", "Conflict", ...), else empty.
  [[nodiscard]] std::string reason() const;
};

/// Thread-safe request counters, readable by the metrics endpoint.
class ClientMetrics {
 public:
  using Key = std::tuple<std::string, std::string, std::string>;  ///< verb, resource, code
  void count_request(const std::string& verb, const std::string& resource, long status);
  void count_retry();
  [[nodiscard]] std::map<Key, std::uint64_t> requests() const;
  [[nodiscard]] std::uint64_t retries() const;
  [[nodiscard]] std::uint64_t total_requests() const;

 private:
  mutable std::mutex mutex_;
  std::map<Key, std::uint64_t> requests_;
  std::uint64_t retries_ = 0;
};

/// A watch stream (`?watch=true`): the server sends one JSON event per line.
struct WatchHandlers {
  std::function<void(const nlohmann::json& event)> on_event;
  /// The stream ended: status is the HTTP status (200 when the server closed a healthy stream),
  /// or 0 with a transport error.
  std::function<void(long status, const std::string& error)> on_end;
};

class ApiClient {
 public:
  ApiClient(ClientConfig config, ClientOptions options,
            std::shared_ptr<ClientMetrics> metrics = nullptr);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  /// Sends the request with rate limit, retries and credential reload; blocks this thread until
  /// it has a final answer (watch streams are served meanwhile). Never throws.
  ApiResponse call(const ApiRequest& request);

  /// Opens a watch stream; its handlers run on this thread from inside call(), wait() or
  /// poll(). Returns an id for close_watch(). The stream has no total timeout; the server's
  /// timeoutSeconds ends it.
  int open_watch(const ApiRequest& request, WatchHandlers handlers);
  void close_watch(int id);
  [[nodiscard]] bool watch_open(int id) const;

  /// Waits up to `duration` while serving the watch streams; returns early after wakeup() or
  /// once the stop flag is set.
  void wait(Millis duration);

  /// From any thread: makes a current wait() or call() look at the stop flag / its inputs again.
  void wakeup();
  /// From any thread: every wait returns at once and call() answers `stopped`.
  void stop();
  [[nodiscard]] bool stopped() const { return stop_.load(); }

  /// Forces the credentials (token file) to be read again on the next request.
  void reload_credentials();

  [[nodiscard]] const ClientConfig& config() const { return config_; }
  [[nodiscard]] const std::shared_ptr<ClientMetrics>& metrics() const { return metrics_; }
  [[nodiscard]] const ClientOptions& options() const { return options_; }

  class Engine;  ///< the curl multi handle and its transfers (src/transport)

 private:
  struct Watch {
    int transfer = 0;
    std::string resource;
    WatchHandlers handlers;
  };
  Millis backoff_delay(int retry);
  void acquire_token_bucket();
  std::string bearer_token();
  /// One round of curl work (at most `max_wait`), then the watch handlers; true when a watch
  /// delivered an event or ended.
  bool service(Millis max_wait);
  /// Waits without returning on wakeup() (rate limit, backoff); false once stopped.
  bool sleep_for(Millis duration);

  ClientConfig config_;
  ClientOptions options_;
  std::shared_ptr<ClientMetrics> metrics_;
  std::unique_ptr<Engine> engine_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> woken_{false};
  std::map<int, Watch> watches_;
  int next_watch_ = 1;
  // token bucket
  double tokens_ = 0;
  Clock::time_point last_refill_{};
  // credentials
  std::string token_;
  Clock::time_point token_read_{};
  bool token_loaded_ = false;
  std::uint64_t rng_state_;
};

/// "a=b&c=d" with each value percent-encoded.
std::string encode_query(std::initializer_list<std::pair<std::string_view, std::string_view>> kv);
/// Percent-encoding of one query value or path segment (RFC 3986 unreserved kept).
std::string percent_encode(std::string_view text);

}  // namespace nodetopo::kube
