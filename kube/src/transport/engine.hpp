// The curl multi handle of one ApiClient and its transfers: plain requests, collected whole, and
// watch streams, split into lines as they arrive. Used only by the thread owning the ApiClient;
// wakeup() is the one call allowed from other threads (curl_multi_wakeup is thread-safe).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <curl/curl.h>

#include <nodetopo/kube/api_client.hpp>

namespace nodetopo::kube {

struct TransferSpec {
  std::string url;
  std::string method;
  std::string body;
  std::string content_type;
  std::string bearer;  ///< token; empty: none
  Millis timeout{0};   ///< 0: no total timeout (watch)
  Millis connect_timeout{5000};
  const ClientConfig* tls = nullptr;
  std::string user_agent;
};

struct TransferResult {
  bool done = false;
  long status = 0;
  std::string body;
  std::string error;
  std::string retry_after;  ///< raw header value
};

class ApiClient::Engine {
 public:
  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Starts a transfer. A stream's body is split into lines (take_lines) instead of collected.
  int start(const TransferSpec& spec, bool stream);
  /// Runs curl, waiting at most `max_wait` for activity; completed transfers are marked done.
  void poll(Millis max_wait);
  [[nodiscard]] const TransferResult* result(int id) const;
  /// Removes a transfer (finished or not) and frees it.
  void remove(int id);
  /// The complete lines a stream received since the last call.
  std::vector<std::string> take_lines(int id);
  void wakeup();

  struct Transfer;

 private:
  CURLM* multi_ = nullptr;
  std::map<int, std::unique_ptr<Transfer>> transfers_;
  int next_id_ = 1;
};

}  // namespace nodetopo::kube
