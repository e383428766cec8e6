// NodeResourceTopology (`topology.node.k8s.io/v1alpha2`, the CRD read by the scheduler-plugins'
// NodeResourceTopologyMatch and written by NFD's topology-updater): one zone per NUMA node
// ("node-<N>", type Node) with its SLIT distance row as costs and its cpu, memory and accelerator
// resources.
//
// nodetopo knows the hardware, not the kubelet's allocations: capacity, allocatable and available
// all carry the hardware amount. Memory-only NUMA nodes that belong to a device (coherent GPU
// memory) are not zones. Accelerators whose NUMA node is unknown are in no zone.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include <nodetopo/base/error.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::exporters {

/// Extended-resource name under which the vendor's device plugin advertises an accelerator:
/// "nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "habana.ai/gaudi"; empty for others.
std::string_view accelerator_resource_name(AcceleratorVendor vendor);

/// The NodeResourceTopology object of the node (cluster-scoped, named after the node).
Result<nlohmann::ordered_json> render_nrt(const Topology& topology, std::string_view node_name);

}  // namespace nodetopo::exporters
