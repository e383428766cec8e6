// The fake HTTPS Kubernetes API server (tests/fakes/kube-apiserver/server.mjs) as a test fixture:
// a CA, a server certificate for 127.0.0.1 and a client certificate made with openssl in a
// temporary directory, the server started on an ephemeral port and stopped with the object, and
// its control endpoints (/_fake/*) for state, faults, tokens, CRDs, wipes and restarts.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sys/types.h>

#include <nodetopo/kube/client_config.hpp>

#include "test_support.hpp"

namespace nodetopo::test {

/// Milliseconds, the unit of every timing the kube suites set; one alias for all of them (two
/// would clash in a unity build, as clang's -Wshadow says).
using Ms = std::chrono::milliseconds;

struct FakeOptions {
  std::string version = "1.35";
  std::vector<std::string> crds;  ///< "nfd", "nrt"
  std::vector<std::string> nodes = {"node-a"};
  std::string token = "token-1";
  int bookmark_ms = 300;
  bool dra = true;
  /// Timeout of one control request (/_fake/*). The fleet bench raises it: a server busy with a
  /// thousand clients answers its polls late, which is what it measures, not a failure.
  long control_timeout_s = 10;
};

class FakeApiServer {
 public:
  explicit FakeApiServer(FakeOptions options = {});
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  [[nodiscard]] std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_.path(); }
  [[nodiscard]] std::filesystem::path ca_file() const { return dir() / "ca.crt"; }

  /// A client config with the CA and the bearer token (inline).
  [[nodiscard]] kube::ClientConfig client_config() const;
  /// The same with a token file (written here) instead of the inline token.
  [[nodiscard]] kube::ClientConfig client_config_with_token_file(const std::string& token) const;
  /// Writes a kubeconfig for this server: `user` is the YAML of the user entry's `user:` map.
  std::filesystem::path write_kubeconfig(const std::string& file_name,
                                         const std::string& user_yaml) const;
  /// PEM of the client certificate / key signed by the CA (client-certificate authentication).
  [[nodiscard]] std::filesystem::path client_cert() const { return dir() / "client.crt"; }
  [[nodiscard]] std::filesystem::path client_key() const { return dir() / "client.key"; }

  /// POST/GET/DELETE on /_fake/<path>; the answer as JSON (throws on transport failure).
  nlohmann::json control(const std::string& method, const std::string& path,
                         const nlohmann::json& body = nlohmann::json::object()) const;
  /// Stored objects of a resource ("resourceslices", "nodes", "nodefeatures", ...).
  [[nodiscard]] std::vector<nlohmann::json> objects(const std::string& resource) const;
  void fault(const nlohmann::json& rule) const { control("POST", "faults", rule); }
  void clear_faults() const { control("DELETE", "faults"); }
  /// Requests by "verb resource code" since the start or the last reset_stats().
  [[nodiscard]] std::map<std::string, int> stats() const;
  void reset_stats() const { control("POST", "stats/reset"); }
  /// Sum of the stats entries whose key starts with `prefix` ("create resourceslices").
  [[nodiscard]] int count(const std::string& prefix) const;

 private:
  FakeOptions options_;
  TempDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

/// Polls `condition` every 20 ms until it holds or `timeout` passes; true when it held.
bool api_eventually(const std::function<bool()>& condition,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(8000));

}  // namespace nodetopo::test
