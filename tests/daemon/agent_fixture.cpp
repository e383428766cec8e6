#include "agent_fixture.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace nodetopo::test {

namespace {

constexpr const char* kName = "dev.nodetopo.Topology1";
constexpr const char* kPath = "/dev/nodetopo/Topology1";
constexpr const char* kInterface = "dev.nodetopo.Topology1";

}  // namespace

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

unsigned free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    ::close(fd);
    throw std::runtime_error("no free port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// --- PrivateBus ----------------------------------------------------------------------------

PrivateBus::PrivateBus(const std::filesystem::path& dir) {
  const auto address_file = dir / "bus.address";
  const auto config = dir / "bus.conf";
  // The session policy, with a socket in the test's own directory.
  write_file(config,
             "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
             " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
             "<busconfig><type>session</type><listen>unix:dir=" +
                 dir.string() +
                 "</listen><auth>EXTERNAL</auth><policy context=\"default\">"
                 "<allow send_destination=\"*\" eavesdrop=\"true\"/><allow eavesdrop=\"true\"/>"
                 "<allow own=\"*\"/></policy></busconfig>\n");
  daemon_ = std::make_unique<Child>(
      std::vector<std::string>{"dbus-daemon", "--config-file=" + config.string(), "--nofork",
                               "--nopidfile", "--print-address=1"},
      std::vector<std::string>{}, address_file);
  if (!eventually([&] { return read_file(address_file).find('\n') != std::string::npos; },
                  std::chrono::seconds(5))) {
    throw std::runtime_error("dbus-daemon did not print its address");
  }
  address_ = read_file(address_file);
  address_ = address_.substr(0, address_.find('\n'));
}

PrivateBus::~PrivateBus() {
  daemon_->signal(SIGTERM);
  daemon_->wait(std::chrono::seconds(2));
}

// --- NotifySocket --------------------------------------------------------------------------

NotifySocket::NotifySocket(std::filesystem::path path) : path_(std::move(path)) {
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    throw std::runtime_error("cannot bind the notify socket " + path_.string());
  }
  stop_ = ::eventfd(0, EFD_CLOEXEC);
  reader_ = std::thread([this] {
    for (;;) {
      std::array<pollfd, 2> p = {pollfd{fd_, POLLIN, 0}, pollfd{stop_, POLLIN, 0}};
      if (::poll(p.data(), p.size(), -1) <= 0) continue;
      if (p[1].revents != 0) return;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) continue;
      std::lock_guard lock(mutex_);
      received_.emplace_back(buf, static_cast<std::size_t>(n));
    }
  });
}

NotifySocket::~NotifySocket() {
  const std::uint64_t one = 1;
  (void)::write(stop_, &one, sizeof(one));
  reader_.join();
  ::close(stop_);
  ::close(fd_);
}

std::vector<std::string> NotifySocket::received() {
  std::lock_guard lock(mutex_);
  return received_;
}

std::optional<std::string> NotifySocket::wait_for(const std::string& needle,
                                                  std::chrono::milliseconds timeout) {
  std::optional<std::string> found;
  eventually(
      [&] {
        std::lock_guard lock(mutex_);
        for (; cursor_ < received_.size(); ++cursor_) {
          if (received_[cursor_].find(needle) != std::string::npos) {
            found = received_[cursor_++];
            return true;
          }
        }
        return false;
      },
      timeout);
  return found;
}

// --- AgentClient ---------------------------------------------------------------------------

AgentClient::AgentClient(const std::string& address)
    : connection_(sdbus::createSessionBusConnectionWithAddress(address)),
      proxy_(sdbus::createProxy(*connection_, kName, kPath)) {
  proxy_->uponSignal("Changed")
      .onInterface(kInterface)
      .call([this](std::uint64_t generation, const std::string& shape) {
        std::lock_guard lock(mutex_);
        changed_.emplace_back(generation, shape);
      });
  proxy_->finishRegistration();
  connection_->enterEventLoopAsync();
}

AgentClient::~AgentClient() {
  connection_->leaveEventLoop();
}

std::string AgentClient::call(const std::string& method, const std::vector<std::string>& args) {
  auto m = proxy_->createMethodCall(kInterface, method);
  for (const auto& a : args)
    m << a;
  auto reply = proxy_->callMethod(m);
  std::string out;
  reply >> out;
  return out;
}

std::uint64_t AgentClient::refresh() {
  std::uint64_t generation = 0;
  proxy_->callMethod("Refresh").onInterface(kInterface).storeResultsTo(generation);
  return generation;
}

std::uint64_t AgentClient::generation() {
  return proxy_->getProperty("Generation").onInterface(kInterface).get<std::uint64_t>();
}
std::string AgentClient::shape() {
  return proxy_->getProperty("Shape").onInterface(kInterface).get<std::string>();
}
std::uint64_t AgentClient::last_refresh() {
  return proxy_->getProperty("LastRefresh").onInterface(kInterface).get<std::uint64_t>();
}
std::string AgentClient::health() {
  return proxy_->getProperty("Health").onInterface(kInterface).get<std::string>();
}

std::vector<std::pair<std::uint64_t, std::string>> AgentClient::changed() {
  std::lock_guard lock(mutex_);
  return changed_;
}

bool AgentClient::wait_changed(std::size_t count, std::chrono::milliseconds timeout) {
  return eventually([&] { return changed().size() >= count; }, timeout);
}

// --- AgentWithFakes ------------------------------------------------------------------------

AgentWithFakes::AgentWithFakes(AgentSettings settings) : settings_(std::move(settings)) {
  std::filesystem::create_directories(dir() / "hosts");
  std::filesystem::create_directories(dir() / "features.d");
  std::filesystem::create_directories(dir() / "out");
  build_host("a", settings_.profile);
  use_host("a");
  port_ = free_port();
  bus_ = std::make_unique<PrivateBus>(dir());
  notify_ = std::make_unique<NotifySocket>(dir() / "notify.sock");
  write_config(settings_.extra_yaml);
  std::vector<std::string> env = {"DBUS_SESSION_BUS_ADDRESS=" + bus_->address(),
                                  "NOTIFY_SOCKET=" + notify_->path().string()};
  for (const auto& e : settings_.env)
    env.push_back(e);
  agent_ = std::make_unique<Child>(
      std::vector<std::string>{(build_dir() / "topo").string(), "agent", "--config",
                               config_file().string(), "--root", root().string()},
      env, dir() / "agent.log");
  if (settings_.wait_ready) {
    if (!notify_->wait_for("READY=1", std::chrono::seconds(10))) {
      throw std::runtime_error("the agent did not become ready; its log:\n" + log());
    }
  }
  client_ = std::make_unique<AgentClient>(bus_->address());
}

AgentWithFakes::~AgentWithFakes() {
  client_.reset();
  if (agent_) {
    agent_->signal(SIGTERM);
    agent_->wait(std::chrono::seconds(3));
  }
}

std::string AgentWithFakes::config_text(const std::string& extra) const {
  std::string yaml = "dbus:\n  bus: session\n";
  yaml += "http:\n  listen: \"127.0.0.1:" + std::to_string(port_) + "\"\n";
  yaml += "uevents:\n  source: socket\n  socket: " + (dir() / "uevents.sock").string() + "\n";
  yaml += "debounce:\n  " + settings_.debounce + "\n";
  yaml += "resync:\n  " + settings_.resync + "\n";
  yaml += "sinks:\n  nfd:\n    path: " + nfd_file().string() + "\n";
  yaml += std::string("  json:\n    enabled: ") + (settings_.json_sink ? "true" : "false") +
          "\n    path: " + json_file().string() + "\n";
  yaml += "log:\n  level: " + settings_.log_level + "\n";
  return yaml + extra;
}

void AgentWithFakes::write_config(const std::string& extra_yaml) {
  write_file(config_file(), config_text(extra_yaml));
}

std::filesystem::path AgentWithFakes::build_host(const std::string& name,
                                                 const std::string& profile) {
  const auto host = dir() / "hosts" / name;
  if (std::filesystem::exists(host)) return host;
  const auto built =
      run_command({(build_dir() / "topo").string(), "mock", "build", profile, host.string()});
  if (built.exit_code != 0) throw std::runtime_error("topo mock build failed: " + built.err);
  return host;
}

void AgentWithFakes::use_host(const std::string& name) {
  const auto tmp = dir() / "root.new";
  std::filesystem::remove(tmp);
  std::filesystem::create_symlink(std::filesystem::path("hosts") / name, tmp);
  std::filesystem::rename(tmp, root());
}

void AgentWithFakes::send_uevent(const std::string& action, const std::string& devpath,
                                 const std::string& subsystem) {
  std::string message = action + "@" + devpath;
  message.push_back('\0');
  for (const std::string& kv : {"ACTION=" + action, "DEVPATH=" + devpath, "SUBSYSTEM=" + subsystem,
                                std::string("SEQNUM=1")}) {
    message += kv;
    message.push_back('\0');
  }
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = (dir() / "uevents.sock").string();
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const ssize_t n = ::sendto(fd, message.data(), message.size(), 0,
                             reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::close(fd);
  if (n != static_cast<ssize_t>(message.size())) {
    throw std::runtime_error("cannot send a uevent to " + path + ": " + std::strerror(errno));
  }
}

std::pair<int, std::string> AgentWithFakes::http_get(const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port_));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return {0, std::string("connect: ") + std::strerror(errno)};
  }
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    response.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  int status = 0;
  if (response.rfind("HTTP/1.", 0) == 0 && response.size() > 12) {
    status = std::stoi(response.substr(9, 3));
  }
  const auto body = response.find("\r\n\r\n");
  std::string text = body == std::string::npos ? "" : response.substr(body + 4);
  // A server may answer HTTP/1.1 with chunked encoding; ours sets the length, but decode chunks
  // in case.
  if (response.find("Transfer-Encoding: chunked") != std::string::npos) {
    std::string decoded;
    std::size_t at = 0;
    while (at < text.size()) {
      const auto eol = text.find("\r\n", at);
      const std::size_t size = std::stoul(text.substr(at, eol - at), nullptr, 16);
      if (size == 0) break;
      decoded += text.substr(eol + 2, size);
      at = eol + 2 + size + 2;
    }
    text = decoded;
  }
  return {status, text};
}

CommandResult AgentWithFakes::topo(std::vector<std::string> args) {
  args.insert(args.begin(), (build_dir() / "topo").string());
  return run_command(args, {"DBUS_SESSION_BUS_ADDRESS=" + bus_->address()});
}

std::string AgentWithFakes::log() const {
  return read_file(dir() / "agent.log");
}

std::optional<double> AgentWithFakes::metric(const std::string& series) {
  const auto [status, body] = http_get("/metrics");
  if (status != 200) return std::nullopt;
  std::istringstream lines(body);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(series, 0) != 0) continue;
    const auto space = line.rfind(' ');
    return std::stod(line.substr(space + 1));
  }
  return std::nullopt;
}

}  // namespace nodetopo::test
