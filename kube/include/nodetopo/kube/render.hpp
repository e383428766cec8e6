// The documents of a node for a given API server, rendered by the exporters: the one place that
// turns the server's version into the exporters' version rules (1.34, 1.35, 1.36). `topo agent`
// calls it from the Publisher's render callback with its current snapshot.
#pragma once

#include <optional>
#include <string>

#include <nodetopo/exporters/export_config.hpp>
#include <nodetopo/exporters/hami.hpp>
#include <nodetopo/exporters/instance_labels.hpp>
#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/kube/publisher.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::kube {

struct RenderOptions {
  std::string node_name;
  std::string driver = "nodetopo.dev";
  exporters::SharingConfig sharing;
  bool slices = true;
  bool labels = true;
  bool nrt = true;
  /// What the reservation and instance labels are chosen from besides the Node's labels
  /// (core::NodeSnapshot::instance); the Node's come with the ServerInfo.
  exporters::InstanceInputs instance{};
  /// The HAMi bridge's documents, when set.
  std::optional<exporters::HamiOptions> hami{};
};

/// The exporters' rules for `server`: 1.34 below 1.35, 1.36 from 1.36 on (newer servers accept
/// the newest form nodetopo knows). nullopt below 1.34 (no resource.k8s.io/v1).
std::optional<exporters::dra::K8sVersion> slice_version_for(const ServerInfo& server);

/// ResourceSlices, labels and NodeResourceTopology of `topology` for `server`. Slices are left
/// out (nullopt) when the server cannot hold them; an error when an exporter refuses the input.
Result<Documents> render_documents(const Topology& topology, const RenderOptions& options,
                                   const ServerInfo& server);

}  // namespace nodetopo::kube
