#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>

#include <nodetopo/base/sha256.hpp>
#include <nodetopo/base/strings.hpp>
#include <nodetopo/core/snapshot.hpp>
#include <nodetopo/exporters/json_model.hpp>
#include <nodetopo/exporters/k8s_names.hpp>

namespace nodetopo::core {

namespace {

// The node name as the kubelet derives it when not told otherwise: --node, then NODE_NAME (the
// DaemonSet sets it from the downward API), then the host's hostname, lower-cased.
void resolve_node_name(const std::string& flag, const probes::SysRoot& root, NodeSnapshot& snap) {
  std::string name = flag;
  if (name.empty()) {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): a read; the environment is written only by main
    if (const char* env = std::getenv("NODE_NAME"); env != nullptr && *env != '\0') {
      name = env;
    }
  }
  if (name.empty()) {
    for (const char* file : {"proc/sys/kernel/hostname", "etc/hostname"}) {
      if (auto text = root.read_file(file, 4096)) {
        name = ascii_lower(trim(text.value()));
        if (!name.empty()) break;
      }
    }
  }
  if (name.empty()) {
    snap.node_error =
        "cannot tell the node name: give it (--node NAME; node_name in the agent config) or set "
        "NODE_NAME (the root has no proc/sys/kernel/hostname or etc/hostname)";
    return;
  }
  if (std::string why = exporters::k8s::check_dns_subdomain(name, 253); !why.empty()) {
    snap.node_error = "node name: " + why;
    return;
  }
  snap.node_name = name;
}

// The settings file under the root; absent means defaults.
void read_export_config(const probes::SysRoot& root, NodeSnapshot& snap) {
  const std::string path(exporters::kExportConfigPath);
  if (!root.exists(path)) return;
  auto text = root.read_file(path);
  if (!text) {
    snap.export_config_error = text.error();
    return;
  }
  auto config = exporters::parse_export_config(text.value(), root.host_path(path));
  if (!config) {
    snap.export_config_error = config.error();
    return;
  }
  snap.export_config = std::move(config.value());
}

}  // namespace

Result<NodeSnapshot> take_snapshot(const OpenedHost& host, const SnapshotOptions& options) {
  NodeSnapshot snap;
  std::optional<probes::SysRoot> fresh;
  if (options.reopen_root) {
    const probes::SysRoot& opened = host.root();
    auto root = probes::SysRoot::open(
        opened.path(),
        opened.is_live() ? probes::SysRoot::Liveness::kLive : probes::SysRoot::Liveness::kCapture,
        opened.checks_paths_in_kernel() ? probes::SysRoot::PathWalk::kKernelChecked
                                        : probes::SysRoot::PathWalk::kUserSpace);
    if (!root) return root.error();
    fresh = std::move(root.value());
  }
  const probes::SysRoot& root = fresh ? *fresh : host.root();
  snap.discovery = probes::discover(root, host.probe_options());
  read_export_config(root, snap);
  resolve_node_name(options.node_name, root, snap);
  if (options.with_digest) {
    snap.digest =
        sha256_hex(exporters::render_json_model(snap.discovery.topology, snap.discovery.reports));
  }
  return snap;
}

}  // namespace nodetopo::core
