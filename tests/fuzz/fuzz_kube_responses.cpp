// Kubernetes API responses (kube/src): what the API server answers, as the client and the
// reconcilers decode it. The input is a list of HTTP answers separated by NUL bytes, each
// "STATUS\nBODY" (a first line that is not a 3-digit status makes the whole entry a 200 body).
// A loopback HTTP server in this process gives them, in order, to the requests of one publisher
// pass — GET /version and /apis (discovery), the Node, the ResourceSlice list, deletes, updates
// and creates, a watch whose body is the stream of events (one JSON per line), the NodeFeature,
// the Node's labels, the NodeResourceTopology — then `topo cleanup`'s requests; once they run
// out, every request gets 404 with an empty body. Each answer is also decoded alone
// (ApiResponse::message(), reason()). What is checked: no crash, leak, UB or hang; the client
// never throws, the reconcilers return an outcome.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nodetopo/base/log.hpp>
#include <nodetopo/kube/api_client.hpp>
#include <nodetopo/kube/publisher.hpp>

#include "fuzz_target.hpp"
#include "sinks.hpp"

namespace {

using nodetopo::kube::Json;

struct Answer {
  int status = 200;
  std::string body;
};

std::vector<Answer> split_answers(std::string_view input) {
  std::vector<Answer> answers;
  std::size_t start = 0;
  while (start <= input.size() && answers.size() < 64) {
    const std::size_t end = std::min(input.find('\0', start), input.size());
    const std::string_view entry = input.substr(start, end - start);
    Answer a;
    const std::size_t nl = entry.find('\n');
    const std::string_view first = entry.substr(0, nl);
    if (first.size() == 3 && first[0] >= '1' && first[0] <= '5' && first[1] >= '0' &&
        first[1] <= '9' && first[2] >= '0' && first[2] <= '9') {
      a.status = (first[0] - '0') * 100 + (first[1] - '0') * 10 + (first[2] - '0');
      a.body = nl == std::string_view::npos ? std::string() : std::string(entry.substr(nl + 1));
    } else {
      a.body = std::string(entry);
    }
    answers.push_back(std::move(a));
    start = end + 1;
  }
  return answers;
}

// A one-connection-at-a-time HTTP/1.1 server on 127.0.0.1: reads a request (headers and a
// Content-Length body), answers it with the next queued answer and closes the connection. The
// thread lives as long as the process (detached: libFuzzer exits without joining).
class LoopbackServer {
 public:
  LoopbackServer() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      std::abort();
    }
    port_ = ntohs(addr.sin_port);
    std::thread([this] { serve(); }).detach();
  }

  [[nodiscard]] int port() const { return port_; }

  void set_answers(std::vector<Answer> answers) {
    const std::lock_guard lock(mutex_);
    answers_ = std::move(answers);
    next_ = 0;
  }

 private:
  Answer next_answer() {
    const std::lock_guard lock(mutex_);
    if (next_ < answers_.size()) return answers_[next_++];
    return Answer{404, ""};
  }

  void serve() {
    for (;;) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      timeval tv{2, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (read_request(fd)) {
        const Answer a = next_answer();
        // One write: a second small segment would wait for the client's delayed ACK (Nagle),
        // 40 ms per request.
        std::string answer = "HTTP/1.1 " + std::to_string(a.status) +
                             " Fuzz\r\nContent-Type: application/json\r\nContent-Length: " +
                             std::to_string(a.body.size()) + "\r\nConnection: close\r\n\r\n";
        answer += a.body;
        write_all(fd, answer);
      }
      ::close(fd);
    }
  }

  static bool read_request(int fd) {
    std::string data;
    char buf[8192];
    std::size_t header_end = std::string::npos;
    while (header_end == std::string::npos) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return false;
      data.append(buf, static_cast<std::size_t>(n));
      header_end = data.find("\r\n\r\n");
    }
    std::size_t length = 0;
    for (std::size_t at = 0; at < header_end;) {
      const std::size_t eol = data.find("\r\n", at);
      std::string line = data.substr(at, eol - at);
      for (char& c : line)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (line.rfind("content-length:", 0) == 0)
        length = std::strtoul(line.c_str() + 15, nullptr, 10);
      at = eol + 2;
    }
    while (data.size() < header_end + 4 + length) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return false;
      data.append(buf, static_cast<std::size_t>(n));
    }
    return true;
  }

  static void write_all(int fd, std::string_view text) {
    while (!text.empty()) {
      const ssize_t n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      text.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::mutex mutex_;
  std::vector<Answer> answers_;
  std::size_t next_ = 0;
};

// What the exporters would hand the reconcilers for a one-GPU node.
std::vector<Json> desired_slices() {
  return {Json::parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
    "spec":{"driver":"nodetopo.dev","nodeName":"node-a",
            "pool":{"name":"node-a","generation":1,"resourceSliceCount":1},
            "devices":[{"name":"gpu-0","attributes":{"index":{"int":0}}}]}})")};
}

Json desired_nrt() {
  return Json::parse(R"({"apiVersion":"topology.node.k8s.io/v1alpha2",
    "kind":"NodeResourceTopology","metadata":{"name":"node-a"},
    "topologyPolicies":["None"],"attributes":[],
    "zones":[{"name":"node-0","type":"Node","resources":[]}]})");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static LoopbackServer* server = [] {
    nodetopo::configure_logging(spdlog::level::off, nodetopo::LogFormat::kText);
    // A reference of our own on libcurl's global state: each ApiClient takes and drops one, and
    // the last drop tears OpenSSL down (a quarter second per input under ASan).
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return new LoopbackServer();  // never destroyed: its thread outlives every input
  }();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<Answer> answers = split_answers(input);
  for (const Answer& a : answers) {
    nodetopo::kube::ApiResponse r;
    r.status = a.status;
    r.body = a.body;
    (void)r.message();
    (void)r.reason();
  }
  server->set_answers(std::move(answers));

  nodetopo::kube::ClientConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(server->port());
  config.token = "fuzz";
  config.name_space = "nodetopo";
  config.origin = "fuzz";
  nodetopo::kube::ClientOptions options;
  options.qps = 1e6;
  options.burst = 1000;
  options.request_timeout = std::chrono::milliseconds(3000);
  options.max_retries = 1;
  options.backoff_initial = std::chrono::milliseconds(1);
  options.backoff_max = std::chrono::milliseconds(1);
  options.retry_after_max = std::chrono::milliseconds(1);
  {
    nodetopo::kube::ApiClient client(config, options);
    (void)nodetopo::kube::discover_server(client);
    (void)nodetopo::kube::read_node_uid(client, "node-a");
    nodetopo::kube::SliceReconciler slices(client, "nodetopo.dev", std::chrono::seconds(1));
    (void)slices.sync("node-a", desired_slices());
    slices.ensure_watch("node-a");
    for (int i = 0; i < 100 && slices.watching(); ++i)
      client.wait(std::chrono::milliseconds(5));
    (void)slices.take_foreign_change();
    (void)slices.take_relist();
    slices.close_watch();
    (void)nodetopo::kube::sync_nodefeature(client, "node-a", "nodetopo",
                                           {{"nodetopo.dev/gpu.count", "1"}});
    (void)nodetopo::kube::sync_node_labels(client, "node-a", {{"nodetopo.dev/gpu.count", "1"}});
    (void)nodetopo::kube::sync_nrt(client, "node-a", desired_nrt());
  }
  nodetopo::kube::CleanupOptions what;
  what.node_name = "node-a";
  (void)nodetopo::kube::cleanup(config, options, what);
  return 0;
}
