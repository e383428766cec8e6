#include "engine.hpp"

#include <cstring>
#include <stdexcept>

namespace nodetopo::kube {

struct ApiClient::Engine::Transfer {
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string request_body;
  bool stream = false;
  std::string partial;  ///< stream: bytes after the last newline
  std::vector<std::string> lines;
  TransferResult result;
  char error[CURL_ERROR_SIZE] = {};
  bool attached = false;

  ~Transfer() {
    if (headers != nullptr) curl_slist_free_all(headers);
    if (easy != nullptr) curl_easy_cleanup(easy);
  }
};

namespace {

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<ApiClient::Engine::Transfer*>(user);
  const std::size_t n = size * count;
  if (!t->stream) {
    t->result.body.append(data, n);
    return n;
  }
  t->partial.append(data, n);
  std::size_t start = 0;
  for (std::size_t nl = t->partial.find('\n'); nl != std::string::npos;
       nl = t->partial.find('\n', start)) {
    if (nl > start) t->lines.emplace_back(t->partial, start, nl - start);
    start = nl + 1;
  }
  t->partial.erase(0, start);
  // A non-2xx answer to a watch is a Status object, possibly without a newline: keep it as body.
  return n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<ApiClient::Engine::Transfer*>(user);
  const std::size_t n = size * count;
  std::string_view line(data, n);
  constexpr std::string_view kRetryAfter = "retry-after:";
  if (line.size() > kRetryAfter.size() &&
      strncasecmp(line.data(), kRetryAfter.data(), kRetryAfter.size()) == 0) {
    std::string value(line.substr(kRetryAfter.size()));
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
      value.pop_back();
    while (!value.empty() && value.front() == ' ')
      value.erase(0, 1);
    t->result.retry_after = value;
  }
  return n;
}

void set_pem(CURL* easy, const PemSource& pem, CURLoption file_option, CURLoption blob_option) {
  if (!pem.file.empty()) {
    curl_easy_setopt(easy, file_option, pem.file.c_str());
  } else if (!pem.data.empty()) {
    curl_blob blob{};
    blob.data = const_cast<char*>(pem.data.data());  // copied by curl (CURL_BLOB_COPY)
    blob.len = pem.data.size();
    blob.flags = CURL_BLOB_COPY;
    curl_easy_setopt(easy, blob_option, &blob);
  }
}

}  // namespace

ApiClient::Engine::Engine() {
  // curl_global_init is idempotent and reference-counted since 7.84 (Debian 12 has 7.88).
  curl_global_init(CURL_GLOBAL_DEFAULT);
  multi_ = curl_multi_init();
  if (multi_ == nullptr) throw std::runtime_error("curl_multi_init failed");
}

ApiClient::Engine::~Engine() {
  for (auto& [id, t] : transfers_) {
    if (t->attached) curl_multi_remove_handle(multi_, t->easy);
  }
  transfers_.clear();
  curl_multi_cleanup(multi_);
  curl_global_cleanup();
}

int ApiClient::Engine::start(const TransferSpec& spec, bool stream) {
  auto t = std::make_unique<Transfer>();
  t->stream = stream;
  t->easy = curl_easy_init();
  if (t->easy == nullptr) throw std::runtime_error("curl_easy_init failed");
  CURL* e = t->easy;
  curl_easy_setopt(e, CURLOPT_URL, spec.url.c_str());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(spec.connect_timeout.count()));
  if (spec.timeout.count() > 0) {
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(spec.timeout.count()));
  }
  curl_easy_setopt(e, CURLOPT_USERAGENT, spec.user_agent.c_str());
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https,http");
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  if (spec.method != "GET") curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, spec.method.c_str());
  if (!spec.body.empty() || spec.method == "POST" || spec.method == "PUT" ||
      spec.method == "PATCH") {
    t->request_body = spec.body;
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->request_body.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(t->request_body.size()));
  }
  t->headers = curl_slist_append(t->headers, "Accept: application/json");
  if (!spec.body.empty()) {
    t->headers = curl_slist_append(t->headers, ("Content-Type: " + spec.content_type).c_str());
  }
  if (!spec.bearer.empty()) {
    t->headers = curl_slist_append(t->headers, ("Authorization: Bearer " + spec.bearer).c_str());
  }
  // No "Expect: 100-continue" round trip for bodies (client-go does not send it either).
  t->headers = curl_slist_append(t->headers, "Expect:");
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
  if (spec.tls != nullptr) {
    const ClientConfig& c = *spec.tls;
    set_pem(e, c.ca, CURLOPT_CAINFO, CURLOPT_CAINFO_BLOB);
    if (!c.client_cert.empty()) {
      curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
      set_pem(e, c.client_cert, CURLOPT_SSLCERT, CURLOPT_SSLCERT_BLOB);
      curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
      set_pem(e, c.client_key, CURLOPT_SSLKEY, CURLOPT_SSLKEY_BLOB);
    }
    if (c.insecure_skip_tls_verify) {
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
  }
  const int id = next_id_++;
  if (curl_multi_add_handle(multi_, e) != CURLM_OK) {
    t->result.done = true;
    t->result.error = "cannot add the request to the transfer queue";
  } else {
    t->attached = true;
  }
  transfers_.emplace(id, std::move(t));
  return id;
}

void ApiClient::Engine::poll(Millis max_wait) {
  int running = 0;
  curl_multi_perform(multi_, &running);
  int pending = 0;
  bool finished = false;
  while (CURLMsg* msg = curl_multi_info_read(multi_, &pending)) {
    if (msg->msg != CURLMSG_DONE) continue;
    for (auto& [id, t] : transfers_) {
      if (t->easy != msg->easy_handle) continue;
      t->result.done = true;
      finished = true;
      if (msg->data.result == CURLE_OK) {
        curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->result.status);
      } else {
        t->result.status = 0;
        t->result.error = t->error[0] != '\0' ? std::string(t->error)
                                              : std::string(curl_easy_strerror(msg->data.result));
      }
      if (t->stream && !t->partial.empty()) {
        // A stream's last line without a newline (or a Status body of a refused watch).
        if (t->result.status >= 200 && t->result.status < 300) {
          t->lines.push_back(std::move(t->partial));
        } else {
          t->result.body = std::move(t->partial);
        }
        t->partial.clear();
      }
      curl_multi_remove_handle(multi_, t->easy);
      t->attached = false;
      break;
    }
  }
  if (finished) return;  // let the caller look at the results before sleeping
  bool lines = false;
  for (const auto& [id, t] : transfers_) {
    if (!t->lines.empty()) lines = true;
  }
  if (lines) return;
  curl_multi_poll(multi_, nullptr, 0, static_cast<int>(max_wait.count()), nullptr);
  curl_multi_perform(multi_, &running);
}

const TransferResult* ApiClient::Engine::result(int id) const {
  const auto it = transfers_.find(id);
  return it == transfers_.end() ? nullptr : &it->second->result;
}

std::vector<std::string> ApiClient::Engine::take_lines(int id) {
  const auto it = transfers_.find(id);
  if (it == transfers_.end()) return {};
  std::vector<std::string> out;
  out.swap(it->second->lines);
  return out;
}

void ApiClient::Engine::remove(int id) {
  const auto it = transfers_.find(id);
  if (it == transfers_.end()) return;
  if (it->second->attached) curl_multi_remove_handle(multi_, it->second->easy);
  transfers_.erase(it);
}

void ApiClient::Engine::wakeup() {
  curl_multi_wakeup(multi_);
}

}  // namespace nodetopo::kube
