// The Kubernetes sink over kube::Publisher. The publisher owns its thread and does all I/O; this
// sink only hands it each new generation (an immutable snapshot captured by the render function,
// which runs on the publisher's thread) and turns its status into the sink's state and metrics.
//
// This file is the module nodetopo-kube-sink.so (with kube and libcurl), loaded by
// kubernetes_sink_loader.cpp only when the sink is on; its one exported symbol is the factory
// at the end.
#include "kubernetes_sink.hpp"

#include <chrono>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>

#include <nodetopo/base/log.hpp>
#include <nodetopo/core/snapshot.hpp>
#include <nodetopo/exporters/instance_labels.hpp>
#include <nodetopo/kube/publisher.hpp>
#include <nodetopo/kube/render.hpp>

#include "../snapshot_source.hpp"
#include "kubernetes_sink_module.hpp"

namespace nodetopo::daemon {

namespace {

kube::LabelMode label_mode(const std::string& labels) {
  if (labels == "nodefeature") return kube::LabelMode::kNodeFeature;
  if (labels == "node") return kube::LabelMode::kNode;
  if (labels == "none") return kube::LabelMode::kNone;
  return kube::LabelMode::kAuto;
}

std::string escape_label(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// The instance labels' choice and its sources, logged when it changes (docs/labels.md): which
// value won and why is otherwise invisible; a cloud-init file that could not be used is a warning.
void log_instance_choice(const exporters::InstanceInputs& in,
                         const std::map<std::string, std::string>& node_labels, std::string& last) {
  std::string text =
      exporters::describe_instance_labels(exporters::choose_instance_labels(in, node_labels), in);
  if (text == last) return;
  if (!in.cloud_init_error.empty() && last.find(in.cloud_init_error) == std::string::npos) {
    component_logger("agent")->warn("{}", in.cloud_init_error);
  }
  component_logger("agent")->debug("instance labels:\n{}", text);
  last = std::move(text);
}

class KubernetesSink final : public Sink {
 public:
  KubernetesSink(const AgentConfig::Kubernetes& config, const AgentConfig::Hami& hami,
                 kube::PublisherConfig publisher_config)
      : config_(config), hami_(hami), publisher_(std::move(publisher_config)) {}

  [[nodiscard]] std::string_view name() const override { return "kubernetes"; }

  void publish(const Publication& p) override {
    const Snapshot& s = p.snapshot;
    pending_generation_ = p.generation;
    if (!s.core) return fail("the snapshot holds no discovery result");
    if (s.node_name.empty()) return fail("no node name: " + s.node_error);
    if (s.core->export_config_error) return fail(s.core->export_config_error->describe());
    kube::RenderOptions options;
    options.node_name = s.node_name;
    options.driver = config_.driver;
    options.slices = config_.slices;
    options.labels = config_.labels != "none";
    options.nrt = config_.nrt;
    if (s.core->export_config.sharing) options.sharing = *s.core->export_config.sharing;
    options.instance = s.core->instance;
    if (hami_.enabled) options.hami = hami_.options;
    // The render runs on the publisher's thread: it captures the immutable snapshot, never `s`.
    std::shared_ptr<const core::NodeSnapshot> snap = s.core;
    // Runs on the publisher's one thread only: the last described choice needs no lock.
    auto last = std::make_shared<std::string>();
    publisher_.update({s.node_name, [snap, options, last](const kube::ServerInfo& server) {
                         log_instance_choice(options.instance, server.node_labels, *last);
                         return kube::render_documents(snap->topology(), options, server);
                       }});
    handed_ = true;
    failed_.clear();
  }

  // The state follows the publisher: ok once every enabled API sink is in sync or parked (the
  // cluster refused it; the reason stays in the error text), until then the last error.
  [[nodiscard]] const SinkState& state() const override {
    if (!failed_.empty()) {
      state_.ok = false;
      state_.error = failed_;
      return state_;
    }
    if (!handed_) return state_;
    const kube::PublisherStatus st = publisher_.status();
    std::uint64_t writes = 0;
    std::uint64_t failures = 0;
    bool ok = st.server.has_value();
    std::string error = ok ? "" : "no answer from the API server yet";
    std::string parked;
    for (const auto& [sink, status] : st.sinks) {
      writes += status.writes;
      failures += status.failures;
      if (!status.enabled) continue;
      if (status.parked) {
        parked += (parked.empty() ? "" : "; ") + sink + " parked: " + status.last_error;
      } else if (!status.in_sync) {
        ok = false;
        error += (error.empty() ? "" : "; ") + sink + ": " +
                 (status.last_error.empty() ? "not in sync yet" : status.last_error);
      }
    }
    state_.ok = ok;
    state_.error = ok ? parked : error;
    state_.writes = writes;
    state_.errors = failures;
    if (ok) state_.generation = pending_generation_;
    return state_;
  }

  [[nodiscard]] std::string metrics() const override {
    const kube::PublisherStatus st = publisher_.status();
    std::string out;
    auto w = std::back_inserter(out);
    out +=
        "# HELP nodetopo_kube_requests_total Kubernetes API requests by verb, resource and "
        "status code (error: no answer).\n# TYPE nodetopo_kube_requests_total counter\n";
    for (const auto& [key, count] : st.requests) {
      const auto& [verb, resource, code] = key;
      fmt::format_to(w,
                     "nodetopo_kube_requests_total{{verb=\"{}\",resource=\"{}\",code=\"{}\"}} {}\n",
                     escape_label(verb), escape_label(resource), escape_label(code), count);
    }
    out +=
        "# HELP nodetopo_kube_retries_total Kubernetes API requests retried.\n"
        "# TYPE nodetopo_kube_retries_total counter\n";
    fmt::format_to(w, "nodetopo_kube_retries_total {}\n", st.retries);
    if (hami_.enabled) {
      out +=
          "# HELP nodetopo_hami_handshakes_total HAMi scheduler handshake requests answered.\n"
          "# TYPE nodetopo_hami_handshakes_total counter\n";
      fmt::format_to(w, "nodetopo_hami_handshakes_total {}\n", st.hami_handshakes);
    }
    out +=
        "# HELP nodetopo_kube_last_sync_timestamp_seconds Last successful sync of each API sink "
        "(0: never).\n# TYPE nodetopo_kube_last_sync_timestamp_seconds gauge\n";
    for (const auto& [sink, status] : st.sinks) {
      double t = 0;
      if (status.last_success) {
        t = std::chrono::duration<double>(status.last_success->time_since_epoch()).count();
      }
      fmt::format_to(w, "nodetopo_kube_last_sync_timestamp_seconds{{sink=\"{}\"}} {:.3f}\n",
                     escape_label(sink), t);
    }
    out +=
        "# HELP nodetopo_kube_sink_in_sync 1 when the API sink held the desired state at its "
        "last sync.\n# TYPE nodetopo_kube_sink_in_sync gauge\n";
    for (const auto& [sink, status] : st.sinks) {
      fmt::format_to(w, "nodetopo_kube_sink_in_sync{{sink=\"{}\"}} {}\n", escape_label(sink),
                     status.in_sync ? 1 : 0);
    }
    return out;
  }

 private:
  void fail(std::string why) {
    failed_ = "not published: " + std::move(why);
    ++state_.errors;
  }

  AgentConfig::Kubernetes config_;
  AgentConfig::Hami hami_;
  mutable kube::Publisher publisher_;
  mutable SinkState state_;
  std::string failed_;
  bool handed_ = false;
  std::uint64_t pending_generation_ = 0;
};

Result<std::unique_ptr<Sink>> build_kubernetes_sink(const AgentConfig::Kubernetes& config,
                                                    const AgentConfig::Hami& hami) {
  auto client = kube::load_client_config(config.kubeconfig, config.context);
  if (!client) return client.error();
  kube::PublisherConfig pc;
  pc.client = std::move(client.value());
  pc.driver = config.driver;
  pc.label_mode = label_mode(config.labels);
  pc.nodefeature_namespace = config.nodefeature_namespace;
  pc.publish_slices = config.slices;
  pc.publish_nrt = config.nrt;
  pc.hami = hami.enabled;
  pc.hami_poll = hami.poll;
  return std::unique_ptr<Sink>(std::make_unique<KubernetesSink>(config, hami, std::move(pc)));
}

}  // namespace

}  // namespace nodetopo::daemon

// The module's entry point (kubernetes_sink_module.hpp). Never throws into the loader.
extern "C" void nodetopo_make_kubernetes_sink_v2(
    const nodetopo::daemon::AgentConfig::Kubernetes* config,
    const nodetopo::daemon::AgentConfig::Hami* hami,
    nodetopo::Result<std::unique_ptr<nodetopo::daemon::Sink>>* out) {
  try {
    *out = nodetopo::daemon::build_kubernetes_sink(*config, *hami);
  } catch (const std::exception& e) {
    *out = nodetopo::make_error(nodetopo::ErrorCode::kUnavailable,
                                std::string("the Kubernetes sink failed to start: ") + e.what());
  }
}
