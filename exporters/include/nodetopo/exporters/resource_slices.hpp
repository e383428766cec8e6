// DRA ResourceSlices (`resource.k8s.io/v1`, Kubernetes 1.34+) describing this node's
// accelerators and physical NICs, and GPUs published for fractional sharing.
//
// The objects are built as plain structs (ResourceSlice, dra_types.hpp), checked by the project's
// own limit validator (slice_validator.hpp) and only then serialised, so that nothing the API
// server would refuse is ever printed. Attribute and sharing catalogue: docs/dra.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/base/error.hpp>
#include <nodetopo/exporters/dra_types.hpp>
#include <nodetopo/exporters/export_config.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::exporters::dra {

/// The devices of a topology as DRA devices (no slicing yet), plus the counter sets of
/// partitionable GPUs. Errors: sharing not possible for the version (partitionable before 1.35).
struct DeviceSet {
  std::vector<Device> devices;
  std::vector<CounterSet> counter_sets;
};
Result<DeviceSet> build_devices(const Topology& topology, const SliceOptions& options);

/// Packs devices and counter sets into the slices of one pool: counter sets in slices of their
/// own (at most 8 each; from 1.35 a slice holds sharedCounters or devices, not both), devices at
/// most 128 per slice, 64 when a slice holds a device with taints or counter consumption.
/// resourceSliceCount is the number of slices produced.
std::vector<ResourceSlice> pack_slices(DeviceSet set, const SliceOptions& options);

/// build_devices() + pack_slices() + validation: the slices, or an error listing every rule
/// broken (object and field named).
Result<std::vector<ResourceSlice>> build_resource_slices(const Topology& topology,
                                                         const SliceOptions& options);

/// One slice as the API object (apiVersion, kind, metadata, spec), field names as in
/// k8s.io/api resource/v1.
nlohmann::ordered_json slice_to_json(const ResourceSlice& slice);

/// slice_to_json() of every slice, in order: what both renderings below print, for a caller
/// that prints both (core::RenderShared).
std::vector<nlohmann::ordered_json> slices_to_json(std::span<const ResourceSlice> slices);
/// The slices' objects (slices_to_json()) as render_slices_yaml() and render_slices_json() print
/// them.
std::string render_slice_objects_yaml(std::span<const nlohmann::ordered_json> objects);
std::string render_slice_objects_json(std::span<const nlohmann::ordered_json> objects);

/// Every slice as a YAML multi-document stream.
std::string render_slices_yaml(std::span<const ResourceSlice> slices);
/// Every slice in a `v1` List, two-space indented JSON.
std::string render_slices_json(std::span<const ResourceSlice> slices);

}  // namespace nodetopo::exporters::dra
