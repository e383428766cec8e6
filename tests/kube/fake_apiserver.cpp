#include "fake_apiserver.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <curl/curl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace nodetopo::test {

namespace {

void sh(const std::string& command) {
  const CommandResult r = run_command({"/bin/sh", "-c", command});
  if (r.exit_code != 0)
    throw std::runtime_error("fake API server setup: " + command + ": " + r.err);
}

std::size_t collect(char* data, std::size_t size, std::size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

}  // namespace

FakeApiServer::FakeApiServer(FakeOptions options) : options_(std::move(options)) {
  const std::string d = dir().string();
  // A CA, a server certificate for 127.0.0.1, and a client certificate; EC keys are quick.
  const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  sh("cd " + d + " && openssl req -x509 " + ec +
     " -keyout ca.key -out ca.crt -subj /CN=fake-kube-ca -days 2 2>/dev/null"
     " && openssl req " +
     ec +
     " -keyout server.key -out server.csr -subj /CN=kube-apiserver 2>/dev/null"
     " && printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > server.ext"
     " && openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial"
     " -out server.crt -days 2 -extfile server.ext 2>/dev/null"
     " && openssl req " +
     ec +
     " -keyout client.key -out client.csr -subj /CN=system:node:agent 2>/dev/null"
     " && openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial"
     " -out client.crt -days 2 2>/dev/null");
  std::vector<std::string> args = {NODETOPO_TEST_NODE,
                                   KUBE_FAKE_SERVER,
                                   "--cert",
                                   d + "/server.crt",
                                   "--key",
                                   d + "/server.key",
                                   "--ca",
                                   d + "/ca.crt",
                                   "--version",
                                   options_.version,
                                   "--bookmark-ms",
                                   std::to_string(options_.bookmark_ms)};
  std::string nodes;
  for (const auto& n : options_.nodes)
    nodes += (nodes.empty() ? "" : ",") + n;
  if (!nodes.empty()) args.insert(args.end(), {"--nodes", nodes});
  std::string crds;
  for (const auto& c : options_.crds)
    crds += (crds.empty() ? "" : ",") + c;
  if (!crds.empty()) args.insert(args.end(), {"--crds", crds});
  if (!options_.token.empty()) args.insert(args.end(), {"--token", options_.token});
  if (!options_.dra) args.emplace_back("--no-dra");

  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("pipe failed");
  pid_ = fork();
  if (pid_ == 0) {
    // The server must not outlive a crashed test (it would hold the test's output open).
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char c = 0;
  // The server prints "LISTENING <port>" when ready (node and kubernetes-models load in <1 s).
  while (read(out[0], &c, 1) == 1) {
    if (c == '\n') {
      if (line.rfind("LISTENING ", 0) == 0) break;
      line.clear();
      continue;
    }
    line += c;
  }
  close(out[0]);
  if (line.rfind("LISTENING ", 0) != 0) {
    throw std::runtime_error("the fake API server did not start (" + std::string(KUBE_FAKE_SERVER) +
                             "); is tests/validate installed (scripts/install-deps.sh)?");
  }
  port_ = std::stoi(line.substr(10));
}

FakeApiServer::~FakeApiServer() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int st = 0;
    waitpid(pid_, &st, 0);
  }
}

kube::ClientConfig FakeApiServer::client_config() const {
  kube::ClientConfig c;
  c.server = url();
  c.ca.file = ca_file().string();
  c.token = options_.token;
  c.origin = "fake " + url();
  return c;
}

kube::ClientConfig FakeApiServer::client_config_with_token_file(const std::string& token) const {
  kube::ClientConfig c = client_config();
  c.token.clear();
  c.token_file = (dir() / "token").string();
  write_file(c.token_file, token + "\n");
  return c;
}

std::filesystem::path FakeApiServer::write_kubeconfig(const std::string& file_name,
                                                      const std::string& user_yaml) const {
  const auto path = dir() / file_name;
  write_file(path,
             "apiVersion: v1\nkind: Config\ncurrent-context: fake\nclusters:\n- name: fake\n"
             "  cluster:\n    server: " +
                 url() + "\n    certificate-authority: " + ca_file().string() +
                 "\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: agent\n"
                 "    namespace: nodetopo\nusers:\n- name: agent\n  user:\n" +
                 user_yaml);
  return path;
}

nlohmann::json FakeApiServer::control(const std::string& method, const std::string& path,
                                      const nlohmann::json& body) const {
  CURL* e = curl_easy_init();
  std::string response;
  const std::string u = url() + "/_fake/" + path;
  const std::string payload = body.dump();
  curl_easy_setopt(e, CURLOPT_URL, u.c_str());
  curl_easy_setopt(e, CURLOPT_CAINFO, ca_file().c_str());
  curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method != "GET") curl_easy_setopt(e, CURLOPT_POSTFIELDS, payload.c_str());
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(e, CURLOPT_TIMEOUT, options_.control_timeout_s);
  const CURLcode rc = curl_easy_perform(e);
  curl_easy_cleanup(e);
  if (rc != CURLE_OK) {
    throw std::runtime_error("fake control " + path + ": " + curl_easy_strerror(rc));
  }
  return nlohmann::json::parse(response);
}

std::vector<nlohmann::json> FakeApiServer::objects(const std::string& resource) const {
  const auto j = control("GET", "state?resource=" + resource);
  return j["items"].get<std::vector<nlohmann::json>>();
}

std::map<std::string, int> FakeApiServer::stats() const {
  const auto j = control("GET", "stats");
  std::map<std::string, int> out;
  for (const auto& [k, v] : j["counts"].items())
    out[k] = v.get<int>();
  return out;
}

int FakeApiServer::count(const std::string& prefix) const {
  int n = 0;
  for (const auto& [k, v] : stats()) {
    if (k.rfind(prefix, 0) == 0) n += v;
  }
  return n;
}

bool api_eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

}  // namespace nodetopo::test
