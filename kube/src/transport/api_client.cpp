#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include <nodetopo/kube/api_client.hpp>

#include "../log.hpp"
#include "engine.hpp"

namespace nodetopo::kube {

// --- responses ---------------------------------------------------------------------------------

nlohmann::json ApiResponse::json() const {
  return nlohmann::json::parse(body, nullptr, false);
}

std::string ApiResponse::message() const {
  if (status == 0) return transport_error.empty() ? std::string("no response") : transport_error;
  const auto j = json();
  // A Status object's message; any other answer (HTML from a proxy, a field of another type) is
  // quoted, never trusted to have the shape of one.
  if (j.is_object()) {
    const auto kind = j.find("kind");
    const auto text = j.find("message");
    if (kind != j.end() && kind->is_string() && *kind == "Status" && text != j.end() &&
        text->is_string()) {
      return text->get<std::string>();
    }
  }
  std::string text = body.substr(0, 200);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return "HTTP " + std::to_string(status) + (text.empty() ? "" : ": " + text);
}

std::string ApiResponse::reason() const {
  const auto j = json();
  if (j.is_object()) {
    const auto it = j.find("reason");
    if (it != j.end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

// --- metrics -----------------------------------------------------------------------------------

void ClientMetrics::count_request(const std::string& verb, const std::string& resource,
                                  long status) {
  const std::lock_guard lock(mutex_);
  ++requests_[{verb, resource, status == 0 ? std::string("error") : std::to_string(status)}];
}
void ClientMetrics::count_retry() {
  const std::lock_guard lock(mutex_);
  ++retries_;
}
std::map<ClientMetrics::Key, std::uint64_t> ClientMetrics::requests() const {
  const std::lock_guard lock(mutex_);
  return requests_;
}
std::uint64_t ClientMetrics::retries() const {
  const std::lock_guard lock(mutex_);
  return retries_;
}
std::uint64_t ClientMetrics::total_requests() const {
  const std::lock_guard lock(mutex_);
  std::uint64_t n = 0;
  for (const auto& [k, v] : requests_)
    n += v;
  return n;
}

// --- encoding ----------------------------------------------------------------------------------

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string encode_query(std::initializer_list<std::pair<std::string_view, std::string_view>> kv) {
  std::string out;
  for (const auto& [k, v] : kv) {
    if (!out.empty()) out += '&';
    out += k;
    out += '=';
    out += percent_encode(v);
  }
  return out;
}

// --- client ------------------------------------------------------------------------------------

namespace {

std::optional<Millis> parse_retry_after(const std::string& value) {
  if (value.empty()) return std::nullopt;
  // Kubernetes sends delta-seconds; an HTTP date is not used by the API server.
  if (!std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  if (value.size() > 6) return Millis(std::chrono::hours(24));
  return Millis(std::stol(value) * 1000);
}

bool is_retryable(long status) {
  return status == 0 || status == 429 || (status >= 500 && status != 501);
}

}  // namespace

ApiClient::ApiClient(ClientConfig config, ClientOptions options,
                     std::shared_ptr<ClientMetrics> metrics)
    : config_(std::move(config)),
      options_(std::move(options)),
      metrics_(metrics ? std::move(metrics) : std::make_shared<ClientMetrics>()),
      engine_(std::make_unique<Engine>()),
      tokens_(static_cast<double>(std::max(1, options_.burst))),
      last_refill_(Clock::now()),
      rng_state_(std::random_device{}() | 1U) {
  while (!config_.server.empty() && config_.server.back() == '/')
    config_.server.pop_back();
}

ApiClient::~ApiClient() = default;

void ApiClient::wakeup() {
  woken_ = true;
  engine_->wakeup();
}

void ApiClient::stop() {
  stop_ = true;
  engine_->wakeup();
}

void ApiClient::reload_credentials() {
  token_loaded_ = false;
}

std::string ApiClient::bearer_token() {
  if (config_.token_file.empty()) return config_.token;
  const auto now = Clock::now();
  if (token_loaded_ && now - token_read_ < options_.token_reload) return token_;
  std::ifstream in(config_.token_file);
  if (!in) {
    if (!token_loaded_) {
      kube_log()->warn("cannot read the token file {} ({}); requests go without a token",
                       config_.token_file, config_.origin);
    }
    token_read_ = now;
    token_loaded_ = true;
    return token_;  // keep the last good token
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string t = ss.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' '))
    t.pop_back();
  token_ = t.empty() ? config_.token : t;
  token_read_ = now;
  token_loaded_ = true;
  return token_;
}

Millis ApiClient::backoff_delay(int retry) {
  const double base =
      static_cast<double>(options_.backoff_initial.count()) * std::pow(2.0, std::min(retry, 20));
  const double capped = std::min(base, static_cast<double>(options_.backoff_max.count()));
  // xorshift64: jitter only, no need for a good generator.
  rng_state_ ^= rng_state_ << 13;
  rng_state_ ^= rng_state_ >> 7;
  rng_state_ ^= rng_state_ << 17;
  const double unit = static_cast<double>(rng_state_ % 10'000) / 10'000.0;  // [0,1)
  return Millis(static_cast<std::int64_t>(capped * (0.75 + 0.5 * unit)));
}

bool ApiClient::service(Millis max_wait) {
  engine_->poll(max_wait);
  bool dispatched = false;
  std::vector<int> ids;
  ids.reserve(watches_.size());
  for (const auto& [id, w] : watches_)
    ids.push_back(id);
  for (const int id : ids) {
    auto it = watches_.find(id);
    if (it == watches_.end()) continue;
    const int transfer = it->second.transfer;
    for (const std::string& line : engine_->take_lines(transfer)) {
      auto event = nlohmann::json::parse(line, nullptr, false);
      it = watches_.find(id);
      if (it == watches_.end()) break;
      dispatched = true;
      if (event.is_discarded()) {
        kube_log()->warn("watch: ignoring a line that is not JSON ({} bytes)", line.size());
        continue;
      }
      auto handler = it->second.handlers.on_event;
      if (handler) handler(event);
    }
    it = watches_.find(id);
    if (it == watches_.end()) continue;
    const TransferResult* r = engine_->result(transfer);
    if (r != nullptr && r->done) {
      dispatched = true;
      auto handlers = std::move(it->second.handlers);
      const long status = r->status;
      std::string error = r->error;
      if (status != 0 && (status < 200 || status >= 300)) {
        ApiResponse resp;
        resp.status = status;
        resp.body = r->body;
        error = resp.message();
      }
      metrics_->count_request("watch", it->second.resource, status);
      engine_->remove(transfer);
      watches_.erase(it);
      if (handlers.on_end) handlers.on_end(status, error);
    }
  }
  return dispatched;
}

bool ApiClient::sleep_for(Millis duration) {
  const auto deadline = Clock::now() + duration;
  while (!stop_) {
    const auto now = Clock::now();
    if (now >= deadline) return true;
    service(std::min(std::chrono::duration_cast<Millis>(deadline - now), Millis(200)));
  }
  return false;
}

void ApiClient::wait(Millis duration) {
  const auto deadline = Clock::now() + duration;
  while (!stop_) {
    if (woken_.exchange(false)) return;
    const auto now = Clock::now();
    if (now >= deadline) return;
    // The whole remaining time in one poll: update(), resync() and stop() interrupt it with
    // curl_multi_wakeup (sticky: a wakeup just before the poll ends it at once), watch events
    // and curl's own timers end it too. A shorter cap only woke an idle agent twice a second.
    if (service(std::chrono::duration_cast<Millis>(deadline - now))) return;
  }
}

void ApiClient::acquire_token_bucket() {
  if (options_.qps <= 0) return;
  const double burst = static_cast<double>(std::max(1, options_.burst));
  while (!stop_) {
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - last_refill_).count();
    tokens_ = std::min(burst, tokens_ + elapsed * options_.qps);
    last_refill_ = now;
    if (tokens_ >= 1.0) {
      tokens_ -= 1.0;
      return;
    }
    const double need = (1.0 - tokens_) / options_.qps;
    sleep_for(Millis(static_cast<std::int64_t>(std::ceil(need * 1000.0))));
  }
}

ApiResponse ApiClient::call(const ApiRequest& request) {
  ApiResponse resp;
  int retries = 0;
  bool reauthenticated = false;
  for (;;) {
    if (stop_) {
      resp = ApiResponse{};
      resp.stopped = true;
      resp.transport_error = "stopped";
      return resp;
    }
    acquire_token_bucket();
    if (stop_) continue;
    TransferSpec spec;
    spec.url = config_.server + request.path + (request.query.empty() ? "" : "?" + request.query);
    spec.method = request.method;
    spec.body = request.body;
    spec.content_type = request.content_type;
    spec.bearer = bearer_token();
    spec.timeout = options_.request_timeout;
    spec.connect_timeout = options_.connect_timeout;
    spec.tls = &config_;
    spec.user_agent = options_.user_agent;
    const int id = engine_->start(spec, false);
    const int attempts = resp.attempts + 1;
    while (!stop_ && !engine_->result(id)->done)
      service(Millis(200));
    if (stop_) {
      engine_->remove(id);
      continue;
    }
    const TransferResult& r = *engine_->result(id);
    resp = ApiResponse{};
    resp.attempts = attempts;
    resp.status = r.status;
    resp.body = r.body;
    resp.transport_error = r.error;
    resp.retry_after = parse_retry_after(r.retry_after);
    engine_->remove(id);
    metrics_->count_request(request.verb, request.resource, resp.status);

    if (resp.status == 401 && !reauthenticated) {
      // Bound service-account tokens rotate: read the file again and retry once.
      reauthenticated = true;
      reload_credentials();
      metrics_->count_retry();
      kube_log()->info("{} {}: 401 Unauthorized, re-reading credentials ({})", request.verb,
                       request.resource, config_.origin);
      continue;
    }
    // A create whose answer was lost may have been stored: never repeat it blindly (a second
    // generateName create would duplicate the object). The caller re-reads and decides.
    const bool create = request.method == "POST";
    const bool retry = create ? resp.status == 429 : is_retryable(resp.status);
    if (!retry || retries >= options_.max_retries) return resp;
    Millis delay = backoff_delay(retries);
    if (resp.retry_after)
      delay = std::max(delay, std::min(*resp.retry_after, options_.retry_after_max));
    ++retries;
    metrics_->count_retry();
    kube_log()->debug("{} {} {}: {}; retry {} in {} ms", request.verb, request.resource,
                      request.path, resp.message(), retries, delay.count());
    if (!sleep_for(delay)) continue;
  }
}

int ApiClient::open_watch(const ApiRequest& request, WatchHandlers handlers) {
  TransferSpec spec;
  spec.url = config_.server + request.path + (request.query.empty() ? "" : "?" + request.query);
  spec.method = "GET";
  spec.bearer = bearer_token();
  spec.timeout = Millis(0);
  spec.connect_timeout = options_.connect_timeout;
  spec.tls = &config_;
  spec.user_agent = options_.user_agent;
  const int id = next_watch_++;
  watches_[id] = Watch{engine_->start(spec, true), request.resource, std::move(handlers)};
  return id;
}

void ApiClient::close_watch(int id) {
  const auto it = watches_.find(id);
  if (it == watches_.end()) return;
  engine_->remove(it->second.transfer);
  watches_.erase(it);
}

bool ApiClient::watch_open(int id) const {
  return watches_.count(id) != 0;
}

}  // namespace nodetopo::kube
