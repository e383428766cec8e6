// agent.yaml, read with base's strict YAML reader (nodetopo/base/yaml_reader.hpp), the one the
// mock profiles and the export settings use: unknown and duplicate keys are refused and every
// error names the file, the line and the key path.
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <vector>

#include <arpa/inet.h>
#include <yaml-cpp/yaml.h>

#include <nodetopo/base/file_read.hpp>
#include <nodetopo/base/yaml_reader.hpp>
#include <nodetopo/daemon/config.hpp>
#include <nodetopo/exporters/hami.hpp>
#include <nodetopo/exporters/instance_labels.hpp>
#include <nodetopo/exporters/k8s_names.hpp>

namespace nodetopo::daemon {

namespace {

using yaml::Fields;
using yaml::Reader;

bool absent(const YAML::Node& n) {
  return yaml::is_absent(n);
}

std::optional<std::string> read_string(Fields& f, const std::string& key) {
  return yaml::read_string(f.reader(), f.take(key), f.path(key));
}

// Only `true` and `false`: the config is written by hand and reviewed, and YAML 1.1's yes/no/on
// are the values people misread.
std::optional<bool> read_bool(Fields& f, const std::string& key) {
  YAML::Node n = f.take(key);
  auto text = yaml::read_scalar(f.reader(), n, f.path(key), "true or false");
  if (!text) return std::nullopt;
  if (*text == "true") return true;
  if (*text == "false") return false;
  f.reader().fail(n, f.path(key), "expected true or false, not \"" + *text + "\"");
  return std::nullopt;
}

std::optional<std::chrono::milliseconds> read_duration(Fields& f, const std::string& key,
                                                       std::chrono::milliseconds min,
                                                       std::chrono::milliseconds max) {
  YAML::Node n = f.take(key);
  if (absent(n)) return std::nullopt;
  const auto d = n.IsScalar() ? parse_duration(n.Scalar()) : std::nullopt;
  if (!d) {
    f.reader().fail(n, f.path(key), "expected a duration such as 250ms, 30s, 5m or 1h");
    return std::nullopt;
  }
  if (*d < min || *d > max) {
    f.reader().fail(n, f.path(key),
                    "must be between " + std::to_string(min.count()) + "ms and " +
                        std::to_string(max.count()) + "ms, not " + n.Scalar());
    return std::nullopt;
  }
  return d;
}

std::optional<std::string> read_choice(Fields& f, const std::string& key,
                                       std::initializer_list<std::string_view> choices) {
  YAML::Node n = f.take(key);
  auto s = absent(n) ? std::nullopt
                     : (n.IsScalar() ? std::optional<std::string>(n.Scalar()) : std::nullopt);
  if (absent(n)) return std::nullopt;
  std::string list;
  for (auto c : choices) {
    if (s && *s == c) return s;
    list += (list.empty() ? "" : ", ") + std::string(c);
  }
  f.reader().fail(n, f.path(key), "expected one of " + list);
  return std::nullopt;
}

std::optional<std::string> read_path(Fields& f, const std::string& key) {
  auto s = read_string(f, key);
  if (s && (s->empty() || (*s)[0] != '/')) {
    f.reader().fail(f.take(key), f.path(key), "expected an absolute path, not \"" + *s + "\"");
    return std::nullopt;
  }
  return s;
}

void read_sink(Fields& sinks, const std::string& name, bool& enabled, std::string* path) {
  Fields f(sinks.reader(), sinks.take(name), sinks.path(name));
  if (auto v = read_bool(f, "enabled")) enabled = *v;
  if (path != nullptr) {
    if (auto v = read_path(f, "path")) *path = *v;
  }
  f.done();
}

// A decimal number (1, 0.5, 1.25) within (0, max].
std::optional<double> read_scaling(Fields& f, const std::string& key, double max) {
  YAML::Node n = f.take(key);
  auto text = yaml::read_scalar(f.reader(), n, f.path(key), "a number");
  if (!text) return std::nullopt;
  double v = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v)) {
    f.reader().fail(n, f.path(key), "expected a number such as 1 or 0.5, not \"" + *text + "\"");
    return std::nullopt;
  }
  if (v <= 0 || v > max) {
    f.reader().fail(n, f.path(key), "must be above 0 and at most " + std::to_string(int(max)));
    return std::nullopt;
  }
  return v;
}

void read_hami(Fields& sinks, AgentConfig::Hami& h, int& enabled_line) {
  Fields f(sinks.reader(), sinks.take("hami"), sinks.path("hami"));
  enabled_line = f.line();
  if (auto v = read_bool(f, "enabled")) h.enabled = *v;
  if (auto v = yaml::read_uint(f.reader(), f.take("split_count"), f.path("split_count"), 1024, 1)) {
    h.options.split_count = static_cast<std::uint32_t>(*v);
  }
  if (auto v = read_scaling(f, "memory_scaling", 100)) h.options.memory_scaling = *v;
  if (auto v = read_scaling(f, "core_scaling", 100)) h.options.core_scaling = *v;
  if (auto v = read_choice(f, "mode", {"hami-core", "mps"})) h.options.mode = *v;
  YAML::Node rn = f.take("resource_name");
  if (auto v = yaml::read_string(f.reader(), rn, f.path("resource_name"))) {
    if (std::string why = exporters::k8s::check_label_key(*v); !why.empty()) {
      f.reader().fail(rn, f.path("resource_name"), why);
    } else {
      h.options.resource_name = *v;
    }
  }
  if (auto v = read_bool(f, "score")) h.options.score = *v;
  if (auto v = read_duration(f, "poll", std::chrono::milliseconds(100), std::chrono::seconds(50))) {
    h.poll = *v;
  }
  f.done();
}

void read_instance(Fields& top, std::map<std::string, std::string>& out) {
  Fields f(top.reader(), top.take("instance"), "instance");
  for (const auto& [key, name] :
       {std::pair<const char*, std::string_view>{"type", exporters::kInstanceTypeLabel},
        {"capacity_type", exporters::kCapacityTypeLabel},
        {"reservation", exporters::kReservationLabel}}) {
    YAML::Node n = f.take(key);
    if (auto v = yaml::read_string(f.reader(), n, f.path(key))) {
      if (std::string why = exporters::check_instance_value(name, *v); !why.empty()) {
        f.reader().fail(n, f.path(key), why);
      } else {
        out[std::string(name)] = *v;
      }
    }
  }
  f.done();
}

}  // namespace

std::string_view to_string(BusKind bus) {
  switch (bus) {
    case BusKind::kSystem:
      return "system";
    case BusKind::kSession:
      return "session";
    case BusKind::kNone:
      return "none";
  }
  return "none";
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::size_t unit_at = 0;
  while (unit_at < text.size() &&
         ((text[unit_at] >= '0' && text[unit_at] <= '9') || text[unit_at] == '.')) {
    ++unit_at;
  }
  if (unit_at == 0) return std::nullopt;
  double value = 0;
  const std::string number(text.substr(0, unit_at));
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || end != number.data() + number.size()) return std::nullopt;
  const std::string_view unit = text.substr(unit_at);
  double ms_per_unit = 0;
  if (unit == "ms") {
    ms_per_unit = 1;
  } else if (unit == "s" || unit.empty()) {
    ms_per_unit = 1000;
  } else if (unit == "m") {
    ms_per_unit = 60'000;
  } else if (unit == "h") {
    ms_per_unit = 3'600'000;
  } else {
    return std::nullopt;
  }
  const double ms = value * ms_per_unit;
  if (!std::isfinite(ms) || ms > 1e12) return std::nullopt;
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(ms)));
}

std::string check_listen_address(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    return "expected HOST:PORT, e.g. 127.0.0.1:9464";
  std::string host(text.substr(0, colon));
  const std::string_view port_text = text.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    return "port \"" + std::string(port_text) + "\" is not a number from 0 to 65535";
  }
  unsigned char buf[16];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (::inet_pton(AF_INET6, host.c_str(), buf) == 1) return {};
    return "\"" + host + "\" is not a numeric IPv6 address";
  }
  if (::inet_pton(AF_INET, host.c_str(), buf) == 1) return {};
  return "\"" + host + "\" is not a numeric IPv4 address (write IPv6 as [addr]:port)";
}

Result<AgentConfig> parse_agent_config(std::string_view text, std::string_view source) {
  AgentConfig cfg;
  cfg.source = std::string(source);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::kMalformed,
                      "line " + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg,
                      std::string(source));
  }
  Reader r{std::string(source), "(top level)"};
  Fields top(r, root, "");
  int hami_line = 0;
  if (auto v = read_path(top, "host_root")) cfg.host_root = *v;
  if (auto v = read_string(top, "node_name")) cfg.node_name = *v;
  {
    Fields f(r, top.take("resync"), "resync");
    using std::chrono::milliseconds;
    if (auto v = read_duration(f, "interval", milliseconds(100), std::chrono::hours(24 * 7))) {
      cfg.resync_interval = *v;
    }
    if (auto v = read_duration(f, "jitter", milliseconds(0), std::chrono::hours(24))) {
      cfg.resync_jitter = *v;
    }
    f.done();
    if (!r.failed() && cfg.resync_jitter * 2 >= cfg.resync_interval) {
      r.fail(root["resync"], "resync.jitter", "must be less than half of resync.interval");
    }
  }
  {
    Fields f(r, top.take("debounce"), "debounce");
    using std::chrono::milliseconds;
    if (auto v = read_duration(f, "quiet", milliseconds(0), milliseconds(60'000))) {
      cfg.debounce = *v;
    }
    if (auto v = read_duration(f, "max", milliseconds(0), milliseconds(600'000))) {
      cfg.debounce_max = *v;
    }
    f.done();
    if (!r.failed() && cfg.debounce_max < cfg.debounce) {
      r.fail(root["debounce"], "debounce.max", "must not be shorter than debounce.quiet");
    }
  }
  {
    Fields f(r, top.take("dbus"), "dbus");
    if (auto v = read_choice(f, "bus", {"system", "session", "none"})) {
      cfg.bus = *v == "system" ? BusKind::kSystem
                               : (*v == "session" ? BusKind::kSession : BusKind::kNone);
    }
    f.done();
  }
  {
    Fields f(r, top.take("http"), "http");
    YAML::Node n = f.take("listen");
    if (auto v = read_string(f, "listen")) {
      if (!v->empty()) {
        if (std::string why = check_listen_address(*v); !why.empty()) {
          r.fail(n, "http.listen", why + " (an empty string turns the server off)");
        }
      }
      cfg.http_listen = *v;
    }
    f.done();
  }
  {
    Fields f(r, top.take("uevents"), "uevents");
    YAML::Node n = f.take("source");
    if (auto v = read_choice(f, "source", {"kernel", "socket", "none"})) {
      cfg.uevent_source =
          *v == "kernel" ? UeventSourceKind::kKernel
                         : (*v == "socket" ? UeventSourceKind::kSocket : UeventSourceKind::kNone);
    }
    if (auto v = read_path(f, "socket")) cfg.uevent_socket = *v;
    f.done();
    if (!r.failed() && cfg.uevent_source == UeventSourceKind::kSocket &&
        cfg.uevent_socket.empty()) {
      r.fail(n, "uevents.socket", "required when uevents.source is socket");
    }
  }
  {
    Fields f(r, top.take("sinks"), "sinks");
    read_sink(f, "nfd", cfg.nfd_enabled, &cfg.nfd_path);
    read_sink(f, "json", cfg.json_enabled, &cfg.json_path);
    read_sink(f, "dbus", cfg.dbus_signal_enabled, nullptr);
    read_hami(f, cfg.hami, hami_line);
    f.done();
  }
  read_instance(top, cfg.instance);
  {
    Fields f(r, top.take("kubernetes"), "kubernetes");
    AgentConfig::Kubernetes& k = cfg.kubernetes;
    if (auto v = read_bool(f, "enabled")) k.enabled = *v;
    YAML::Node kubeconfig = f.take("kubeconfig");
    if (auto v = read_string(f, "kubeconfig")) {
      // Empty is the documented default ($KUBECONFIG, else in-cluster); a path must be absolute.
      if (!v->empty() && (*v)[0] != '/') {
        r.fail(kubeconfig, "kubernetes.kubeconfig",
               "expected an absolute path, not \"" + *v + "\"");
      }
      k.kubeconfig = *v;
    }
    if (auto v = read_string(f, "context")) k.context = *v;
    YAML::Node driver = f.take("driver");
    if (auto v = read_string(f, "driver")) {
      if (std::string why = exporters::k8s::check_dns_subdomain(*v, 63); !why.empty()) {
        r.fail(driver, "kubernetes.driver", why);
      }
      k.driver = *v;
    }
    if (auto v = read_choice(f, "labels", {"auto", "nodefeature", "node", "none"})) k.labels = *v;
    if (auto v = read_bool(f, "slices")) k.slices = *v;
    if (auto v = read_bool(f, "nrt")) k.nrt = *v;
    YAML::Node ns = f.take("nodefeature_namespace");
    if (auto v = read_string(f, "nodefeature_namespace")) {
      if (!v->empty()) {
        if (std::string why = exporters::k8s::check_dns_label(*v); !why.empty()) {
          r.fail(ns, "kubernetes.nodefeature_namespace", why);
        }
      }
      k.nodefeature_namespace = *v;
    }
    f.done();
  }
  {
    Fields f(r, top.take("log"), "log");
    if (auto v = read_choice(f, "level", {"trace", "debug", "info", "warn", "error", "off"})) {
      cfg.log_level = *v;
    }
    if (auto v = read_choice(f, "format", {"text", "json", "journal"})) cfg.log_format = *v;
    f.done();
  }
  top.done();
  if (!r.failed() && cfg.hami.enabled && !cfg.kubernetes.enabled) {
    r.fail(hami_line, "sinks.hami.enabled",
           "the HAMi bridge writes through the Kubernetes API: set kubernetes.enabled: true "
           "(kubernetes.slices, .labels and .nrt can be turned off if only HAMi is wanted)");
  }
  if (r.failed()) return r.error();
  return cfg;
}

Result<AgentConfig> load_agent_config(const std::string& path, bool must_exist) {
  // Only a regular file of bounded size, opened non-blocking and checked before the first read:
  // a FIFO at the path would block the agent's start (and every SIGHUP), a /dev/zero-like node
  // grow it without bound.
  auto text = read_regular_file(path, "agent config", std::size_t{1} << 20);
  if (!text) {
    if (text.error().sys_errno == ENOENT && !must_exist) return AgentConfig{};
    return text.error();
  }
  return parse_agent_config(text.value(), path);
}

std::string restart_only_changes(const AgentConfig& running, const AgentConfig& loaded) {
  std::string changed;
  const auto note = [&](bool differs, std::string_view key) {
    if (differs) changed += (changed.empty() ? "" : ", ") + std::string(key);
  };
  note(running.host_root != loaded.host_root, "host_root");
  note(running.bus != loaded.bus, "dbus.bus");
  note(running.http_listen != loaded.http_listen, "http.listen");
  note(running.uevent_source != loaded.uevent_source ||
           running.uevent_socket != loaded.uevent_socket,
       "uevents");
  return changed;
}

}  // namespace nodetopo::daemon
