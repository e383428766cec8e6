#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include <yaml-cpp/yaml.h>

#include <nodetopo/base/file_read.hpp>
#include <nodetopo/kube/client_config.hpp>

namespace nodetopo::kube {

namespace fs = std::filesystem;

namespace {

// The largest credentials file read: a kubeconfig with a few inline certificates is some 10 KiB.
constexpr std::size_t kMaxFileBytes = std::size_t{4} << 20;

// The whole of `path` when it is a regular file of at most kMaxFileBytes; else an error naming
// it (base/file_read.hpp: a FIFO would block the agent's start, a /dev/zero-like node grow
// without bound).
Result<std::string> read_bounded(const std::string& path, std::string_view what) {
  return read_regular_file(path, what, kMaxFileBytes);
}

std::string trim(std::string s) {
  while (!s.empty() &&
         (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
    ++i;
  return s.substr(i);
}

const char* env(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before threads start
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

}  // namespace

std::optional<std::string> base64_decode(std::string_view text) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  int pad = 0;
  for (const char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++pad;
      continue;
    }
    if (pad > 0) return std::nullopt;  // data after padding
    int v = 0;
    if (c >= 'A' && c <= 'Z') {
      v = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      v = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      v = c - '0' + 52;
    } else if (c == '+') {
      v = 62;
    } else if (c == '/') {
      v = 63;
    } else {
      return std::nullopt;
    }
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFFU);
    }
  }
  if (pad > 2 || bits >= 6) return std::nullopt;
  return out;
}

Result<ClientConfig> load_in_cluster(std::string_view service_account_dir) {
  const char* host = env("KUBERNETES_SERVICE_HOST");
  const char* port = env("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr) {
    return make_error(ErrorCode::kNotFound,
                      "not running in a cluster: KUBERNETES_SERVICE_HOST and "
                      "KUBERNETES_SERVICE_PORT are not set; pass --kubeconfig FILE or set "
                      "$KUBECONFIG");
  }
  const std::string dir(service_account_dir);
  ClientConfig c;
  const std::string h(host);
  // An IPv6 service address needs brackets in the URL.
  c.server = "https://" + (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + port;
  c.token_file = dir + "/token";
  if (!fs::exists(c.token_file)) {
    return make_error(ErrorCode::kNotFound,
                      "the service-account token is missing (automountServiceAccountToken "
                      "false, or a projected token volume not mounted)",
                      c.token_file);
  }
  const std::string ca = dir + "/ca.crt";
  if (!fs::exists(ca)) {
    return make_error(ErrorCode::kNotFound, "the cluster CA certificate is missing", ca);
  }
  c.ca.file = ca;
  if (auto ns = read_bounded(dir + "/namespace", "service-account namespace file")) {
    c.name_space = trim(ns.value());
  }
  c.origin = "in-cluster (" + dir + ")";
  return c;
}

namespace {

// The named entry `name` of a kubeconfig list (clusters, users, contexts).
YAML::Node find_named(const YAML::Node& list, const std::string& name) {
  if (!list || !list.IsSequence()) return YAML::Node();
  for (const auto& entry : list) {
    if (entry["name"] && entry["name"].as<std::string>() == name) return entry;
  }
  return YAML::Node();
}

std::string str(const YAML::Node& n, const char* key) {
  if (!n || !n[key] || n[key].IsNull()) return {};
  return n[key].as<std::string>();
}

Result<PemSource> pem(const YAML::Node& n, const char* file_key, const char* data_key,
                      const fs::path& base, const std::string& file, const std::string& where) {
  PemSource p;
  const std::string data = str(n, data_key);
  if (!data.empty()) {
    auto decoded = base64_decode(data);
    if (!decoded) {
      return make_error(ErrorCode::kMalformed, where + "." + data_key + " is not valid base64",
                        file);
    }
    p.data = std::move(*decoded);
    return p;
  }
  std::string path = str(n, file_key);
  if (path.empty()) return p;
  if (fs::path(path).is_relative()) path = (base / path).string();
  if (!fs::exists(path)) {
    return make_error(ErrorCode::kNotFound, where + "." + file_key + ": no such file: " + path,
                      file);
  }
  p.file = path;
  return p;
}

}  // namespace

Result<ClientConfig> load_kubeconfig(const std::string& path, std::string_view context) {
  auto text = read_bounded(path, "kubeconfig");
  if (!text) return text.error();
  return parse_kubeconfig(text.value(), path, context);
}

Result<ClientConfig> parse_kubeconfig(std::string_view text, const std::string& path,
                                      std::string_view context) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::kMalformed, "not a valid kubeconfig: " + e.msg, path);
  }
  try {
    if (!root.IsMap()) return make_error(ErrorCode::kMalformed, "not a kubeconfig (no map)", path);
    std::string ctx_name(context);
    if (ctx_name.empty()) ctx_name = str(root, "current-context");
    if (ctx_name.empty()) {
      return make_error(ErrorCode::kInvalid,
                        "no current-context: pass the context to use (--context)", path);
    }
    const YAML::Node ctx_entry = find_named(root["contexts"], ctx_name);
    if (!ctx_entry || !ctx_entry["context"]) {
      return make_error(ErrorCode::kNotFound, "context \"" + ctx_name + "\" is not defined", path);
    }
    const YAML::Node ctx = ctx_entry["context"];
    const std::string cluster_name = str(ctx, "cluster");
    const YAML::Node cluster_entry = find_named(root["clusters"], cluster_name);
    if (!cluster_entry || !cluster_entry["cluster"]) {
      return make_error(
          ErrorCode::kNotFound,
          "cluster \"" + cluster_name + "\" of context \"" + ctx_name + "\" is not defined", path);
    }
    const YAML::Node cluster = cluster_entry["cluster"];
    const fs::path base = fs::absolute(fs::path(path)).parent_path();
    ClientConfig c;
    c.origin = "kubeconfig " + path + " (context " + ctx_name + ")";
    c.server = str(cluster, "server");
    if (c.server.rfind("https://", 0) != 0 && c.server.rfind("http://", 0) != 0) {
      return make_error(ErrorCode::kInvalid,
                        "cluster \"" + cluster_name + "\": server must be an https:// URL, got \"" +
                            c.server + "\"",
                        path);
    }
    if (cluster["proxy-url"]) {
      return make_error(ErrorCode::kInvalid,
                        "cluster \"" + cluster_name + "\": proxy-url is not supported", path);
    }
    const std::string where_cluster = "clusters[" + cluster_name + "].cluster";
    auto ca = pem(cluster, "certificate-authority", "certificate-authority-data", base, path,
                  where_cluster);
    if (!ca) return ca.error();
    c.ca = ca.value();
    c.insecure_skip_tls_verify =
        cluster["insecure-skip-tls-verify"] && cluster["insecure-skip-tls-verify"].as<bool>();
    if (cluster["tls-server-name"]) {
      // libcurl cannot verify against another name than the URL's host: refuse rather than fail
      // later with a confusing certificate error.
      return make_error(ErrorCode::kInvalid,
                        "cluster \"" + cluster_name +
                            "\": tls-server-name is not supported; use a server URL whose host "
                            "is in the certificate",
                        path);
    }
    c.name_space = str(ctx, "namespace");

    const std::string user_name = str(ctx, "user");
    if (!user_name.empty()) {
      const YAML::Node user_entry = find_named(root["users"], user_name);
      if (!user_entry) {
        return make_error(
            ErrorCode::kNotFound,
            "user \"" + user_name + "\" of context \"" + ctx_name + "\" is not defined", path);
      }
      const YAML::Node user = user_entry["user"];
      const std::string where_user = "users[" + user_name + "].user";
      if (user && user["exec"]) {
        return make_error(ErrorCode::kInvalid,
                          where_user +
                              ".exec: credential plugins are not supported by nodetopo; use a "
                              "token, tokenFile or client certificate (e.g. a service-account "
                              "token of the tenant cluster)",
                          path);
      }
      if (user && user["auth-provider"]) {
        return make_error(ErrorCode::kInvalid,
                          where_user +
                              ".auth-provider: auth providers are not supported by nodetopo; use "
                              "a token, tokenFile or client certificate",
                          path);
      }
      if (user && (user["username"] || user["password"])) {
        return make_error(ErrorCode::kInvalid,
                          where_user + ": basic authentication is not supported", path);
      }
      if (user) {
        auto cert =
            pem(user, "client-certificate", "client-certificate-data", base, path, where_user);
        if (!cert) return cert.error();
        auto key = pem(user, "client-key", "client-key-data", base, path, where_user);
        if (!key) return key.error();
        if (cert.value().empty() != key.value().empty()) {
          return make_error(ErrorCode::kInvalid,
                            where_user + ": a client certificate needs its key and vice versa",
                            path);
        }
        c.client_cert = cert.value();
        c.client_key = key.value();
        c.token = str(user, "token");
        std::string token_file = str(user, "tokenFile");
        if (!token_file.empty()) {
          if (fs::path(token_file).is_relative()) token_file = (base / token_file).string();
          if (!fs::exists(token_file)) {
            return make_error(ErrorCode::kNotFound,
                              where_user + ".tokenFile: no such file: " + token_file, path);
          }
          c.token_file = token_file;
        }
      }
    }
    return c;
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::kMalformed, "not a valid kubeconfig: " + e.msg, path);
  }
}

Result<ClientConfig> load_client_config(const std::string& kubeconfig, std::string_view context,
                                        std::string_view service_account_dir) {
  if (!kubeconfig.empty()) return load_kubeconfig(kubeconfig, context);
  if (const char* env_path = env("KUBECONFIG")) {
    std::string first(env_path);
    if (const auto colon = first.find(':'); colon != std::string::npos) first.resize(colon);
    if (!first.empty()) return load_kubeconfig(first, context);
  }
  return load_in_cluster(service_account_dir);
}

}  // namespace nodetopo::kube
