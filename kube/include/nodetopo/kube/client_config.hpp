// Where the Kubernetes API server is and how to authenticate to it: in-cluster service-account
// credentials or a kubeconfig file (a tenant control plane's, for example).
//
// Only what libcurl can do itself is supported: a bearer token (inline or from a file that is
// re-read, since bound service-account tokens rotate) and client certificates (files or inline
// data). A kubeconfig that asks for an exec plugin or an auth provider is refused with a message
// saying so, rather than silently connecting without credentials.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <nodetopo/base/error.hpp>

namespace nodetopo::kube {

/// Default service-account directory of a pod.
inline constexpr std::string_view kServiceAccountDir =
    "/var/run/secrets/kubernetes.io/serviceaccount";

/// A PEM blob given either as a file or as its bytes (kubeconfig `*-data` fields, base64-decoded).
struct PemSource {
  std::string file;  ///< path; empty when `data` is used
  std::string data;  ///< PEM bytes; empty when `file` is used
  [[nodiscard]] bool empty() const { return file.empty() && data.empty(); }
};

/// Everything needed to talk to one API server.
struct ClientConfig {
  std::string server;  ///< "https://10.96.0.1:443" (no trailing slash)
  PemSource ca;        ///< empty: the system trust store
  PemSource client_cert;
  PemSource client_key;
  std::string token;       ///< bearer token given inline (kubeconfig `token`)
  std::string token_file;  ///< bearer token file, re-read periodically and after a 401
  bool insecure_skip_tls_verify = false;
  std::string name_space;  ///< the pod's namespace (in-cluster) or the context's namespace
  std::string origin;      ///< "in-cluster" or "kubeconfig FILE (context C)", for messages
};

/// In-cluster configuration: $KUBERNETES_SERVICE_HOST and $KUBERNETES_SERVICE_PORT, and the token,
/// ca.crt and namespace files under `service_account_dir`. Errors name the missing variable/file.
Result<ClientConfig> load_in_cluster(std::string_view service_account_dir = kServiceAccountDir);

/// The `context` (empty: current-context) of the kubeconfig file `path`. Relative file paths in it
/// are resolved against the file's directory, as kubectl does. Errors name the file and the key.
/// Only a regular file of at most 4 MiB is read (a FIFO or a device is refused, naming it).
Result<ClientConfig> load_kubeconfig(const std::string& path, std::string_view context = {});

/// The same for kubeconfig `text` read from `path` (which names it in errors and is the base of
/// its relative file paths; the files those name are checked to exist, never read).
Result<ClientConfig> parse_kubeconfig(std::string_view text, const std::string& path,
                                      std::string_view context = {});

/// What the agent does when told nothing more: `kubeconfig` if given, else $KUBECONFIG (its first
/// entry), else in-cluster.
Result<ClientConfig> load_client_config(const std::string& kubeconfig, std::string_view context,
                                        std::string_view service_account_dir = kServiceAccountDir);

/// Standard base64 (RFC 4648) with padding; whitespace ignored. nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace nodetopo::kube
