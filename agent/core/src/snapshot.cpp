#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

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

// Appends one labelled field to the snapshot's settings key, its length first, so that no two
// different sequences of fields give the same key.
void add_key(NodeSnapshot& snap, std::string_view label, std::string_view value) {
  std::string& key = snap.settings_key;
  key += label;
  key += ' ';
  key += std::to_string(value.size());
  key += ':';
  key += value;
  key += '\n';
}

// The settings file under the root; absent means defaults.
void read_export_config(const probes::SysRoot& root, NodeSnapshot& snap) {
  const std::string path(exporters::kExportConfigPath);
  if (!root.exists(path)) {
    add_key(snap, "export.yaml absent", "");
    return;
  }
  auto text = root.read_file(path);
  if (!text) {
    snap.export_config_error = text.error();
    add_key(snap, "export.yaml error", text.error().describe());
    return;
  }
  add_key(snap, "export.yaml", text.value());
  auto config = exporters::parse_export_config(text.value(), root.host_path(path));
  if (!config) {
    snap.export_config_error = config.error();
    return;
  }
  snap.export_config = std::move(config.value());
}

// Cloud-init's instance data: read through the root like everything else, bounded; what cannot
// be used is recorded (naming the file), never fatal: the labels then come from elsewhere.
void read_instance_inputs(const probes::SysRoot& root, const SnapshotOptions& options,
                          NodeSnapshot& snap) {
  exporters::InstanceInputs& in = snap.instance;
  in.config = options.instance_config;
  static constexpr std::pair<std::string_view, std::string_view> kKeys[] = {
      {exporters::kInstanceTypeLabel, "instance.type"},
      {exporters::kCapacityTypeLabel, "instance.capacityType"},
      {exporters::kReservationLabel, "instance.reservation"}};
  for (const auto& [name, key] : kKeys) {
    auto it = snap.export_config.instance.find(std::string(name));
    if (it == snap.export_config.instance.end()) continue;
    in.config[std::string(name)] = {
        it->second, std::string(exporters::kExportConfigPath) + " " + std::string(key)};
  }
  // DMI's sys_vendor as hwloc read it for the platform probe (the file is not read twice).
  if (const auto* machine = snap.discovery.topology.root().get_if<MachineInfo>()) {
    in.platform = machine->sys_vendor;
  }
  // The settings key: what the given values and the platform are, and below what cloud-init's
  // file held (its parse is a function of the text).
  for (const auto& [name, v] : in.config) {
    add_key(snap, "instance", name);
    add_key(snap, "value", v.value);
    add_key(snap, "source", v.source);
  }
  add_key(snap, "platform", in.platform);
  const std::string path(exporters::kCloudInitInstanceDataPath);
  // One byte more than allowed tells a file that is too big from one that just fits. Absent is
  // normal (no cloud-init); anything else that stops the read (a link out of the root, a FIFO,
  // no permission) is said, naming the file.
  auto text = root.read_file(path, exporters::kCloudInitMaxBytes + 1);
  if (!text && text.error().code == ErrorCode::kNotFound) {
    add_key(snap, "cloud-init absent", "");
    return;
  }
  if (!text) {
    in.cloud_init_error = text.error().describe() + "; its instance facts are not used";
    add_key(snap, "cloud-init error", in.cloud_init_error);
    return;
  }
  add_key(snap, "cloud-init", text.value());
  if (text.value().size() > exporters::kCloudInitMaxBytes) {
    in.cloud_init_error = root.host_path(path) + ": larger than 1 MiB, not cloud-init's " +
                          "instance data; its instance facts are not used";
    return;
  }
  auto facts = exporters::parse_cloud_init(text.value(), root.host_path(path));
  if (!facts) {
    in.cloud_init_error = facts.error().describe() + "; its instance facts are not used";
    return;
  }
  in.cloud_init = std::move(facts.value());
}

}  // namespace

Result<NodeSnapshot> take_snapshot(const OpenedHost& host, const SnapshotOptions& options) {
  NodeSnapshot snap;
  std::optional<probes::SysRoot> fresh;
  if (options.reopen_root) {
    auto root = host.root().reopen();
    if (!root) return root.error();
    fresh = std::move(root.value());
  }
  const probes::SysRoot& root = fresh ? *fresh : host.root();
  probes::ProbeOptions probe_options = host.probe_options();
  // For measuring the overlap: 1 runs one probe after the other, 0 overlaps whatever the
  // root's size (probes::overlap_pays() decides otherwise).
  // NOLINTNEXTLINE(concurrency-mt-unsafe): a read; the environment is written only by main
  if (const char* serial = std::getenv("NODETOPO_SERIAL_PROBES"); serial != nullptr) {
    if (std::string_view(serial) == "1")
      probe_options.overlap = probes::ProbeOptions::Overlap::kNever;
    if (std::string_view(serial) == "0")
      probe_options.overlap = probes::ProbeOptions::Overlap::kAlways;
  }
  snap.discovery = probes::discover(root, probe_options, options.cache);
  read_export_config(root, snap);
  read_instance_inputs(root, options, snap);
  resolve_node_name(options.node_name, root, snap);
  if (options.with_digest) {
    snap.digest =
        sha256_hex(exporters::render_json_model(snap.discovery.topology, snap.discovery.reports));
  }
  return snap;
}

}  // namespace nodetopo::core
