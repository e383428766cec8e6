// One discovery of an opened host, as a value: what the CLI renders once and the agent takes
// again on every refresh, comparing digests to know whether anything changed.
#pragma once

#include <optional>
#include <string>

#include <nodetopo/base/error.hpp>
#include <nodetopo/core/host_source.hpp>
#include <nodetopo/exporters/export_config.hpp>
#include <nodetopo/exporters/instance_labels.hpp>
#include <nodetopo/probes/discovery.hpp>

namespace nodetopo::core {

/// What take_snapshot() needs besides the host.
struct SnapshotOptions {
  /// The node name given on the command line (--node). Empty: $NODE_NAME (the DaemonSet sets it
  /// from the downward API), else the host's hostname (proc/sys/kernel/hostname, etc/hostname
  /// under the root), lower-cased, as the kubelet derives it.
  std::string node_name;
  /// Whether to compute NodeSnapshot::digest (one JSON rendering and SHA-256 of it, about a tenth
  /// of a discovery on a 64-GPU host). A one-shot command that prints once turns it off.
  bool with_digest = true;
  /// Whether to read the host through a SysRoot opened afresh for this snapshot (same path, same
  /// liveness) instead of OpenedHost::root(). A SysRoot caches resolved paths and holds a
  /// descriptor of the root directory for its whole life (probes/sys_root.hpp), so a daemon that
  /// keeps one OpenedHost for the process's life sets this to see hot-plugged devices, and a
  /// root that is a symbolic link swapped to another tree. What the host set up once (a --mock
  /// host, the NVML fixture, the process environment) stays; a root that can no longer be opened
  /// fails the snapshot.
  bool reopen_root = false;
  /// Instance facts the process was told (the agent config's `instance.*`), by label name, each
  /// with its source. The host's etc/nodetopo/export.yaml `instance:` wins over these.
  exporters::InstanceValues instance_config{};
  /// What an agent keeps between snapshots of this host (probes/discovery_cache.hpp): the caller
  /// invalidates what its events say changed, and the snapshot reuses the rest, equal to one
  /// taken without it. nullptr: everything is read.
  probes::DiscoveryCache* cache = nullptr;
};

/// Everything known about the node after one discovery.
struct NodeSnapshot {
  /// The frozen topology and one report per probe.
  probes::Discovery discovery;
  /// The node's export settings (etc/nodetopo/export.yaml under the root); defaults when the
  /// file is absent. When it is present but unreadable or invalid, `export_config_error` says
  /// why, and rendering a Kubernetes kind fails with it (the tree and the matrix do not need it).
  exporters::ExportConfig export_config;
  std::optional<Error> export_config_error;
  /// The node name, or empty with `node_error` saying why it could not be told (rendering a kind
  /// that names the node then fails with that message).
  std::string node_name;
  std::string node_error;
  /// SHA-256 (64 hex digits) of the canonical JSON model, the bytes of `topo dump --format json`
  /// (topology and probe reports). Two snapshots with equal digests render equal documents of
  /// every kind, given equal settings and node name: a daemon that sees the same digest writes
  /// nothing. Empty when SnapshotOptions::with_digest was false.
  std::string digest;
  /// What the reservation and instance labels are chosen from, except the Node's own labels
  /// (only the Kubernetes sink has those): the explicit values (export.yaml over the agent
  /// config), cloud-init's instance data (run/cloud-init/instance-data.json under the root, read
  /// through the root, at most 1 MiB, regular files only) and the DMI platform name.
  exporters::InstanceInputs instance;
  /// What the export settings and `instance` were made of, as bytes: export.yaml's text (or why
  /// it could not be read), the instance values given, cloud-init's instance data (or why not)
  /// and the DMI platform name. Two snapshots with equal digests, node names and settings keys
  /// render equal documents of every kind (core::Refresher relies on it).
  std::string settings_key;

  [[nodiscard]] const Topology& topology() const { return discovery.topology; }
};

/// Discovers `host` (every probe, probes::discover), reads its settings, resolves the node name
/// and computes the digest. Fails only when the host cannot be read at all; a failing probe is a
/// report inside the snapshot, settings and node-name problems are recorded in it (see above).
/// Thread-compatible: one snapshot at a time per host (and per cache).
///
/// `NODETOPO_SERIAL_PROBES=1` in the environment turns the probes' overlap off
/// (probes::ProbeOptions::overlap): every probe one after the other, for measuring the overlap.
[[nodiscard]] Result<NodeSnapshot> take_snapshot(const OpenedHost& host,
                                                 const SnapshotOptions& options = {});

}  // namespace nodetopo::core
